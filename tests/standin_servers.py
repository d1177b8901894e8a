"""Stand-in OpenAI-compatible servers for the benchmarks, on 127.0.0.1, each served from a daemon thread: a
chat model that answers every call at once with the same sentence (bench/llm_tasks.py --stand-in-server) and a
yes/no judge that answers after a delay with log-probabilities (bench/rerank.py, bench/cache.py). No model
runs: they check a bench's own path and stand for a server's latency."""
from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STAND_IN_REPLY = "a clear photo of the subject"


def completion(model: str, content: str, logprobs: dict | None = None, reply_id: str | None = None) -> dict:
    """An OpenAI chat.completion reply with one choice saying `content`."""
    choice: dict = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
    if logprobs is not None:
        choice["logprobs"] = logprobs
    return {"id": reply_id or model, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [choice], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet handler that answers with JSON (or any body with its length)."""

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, reply: dict) -> None:
        self._send(200, json.dumps(reply).encode())


def serve(server: ThreadingHTTPServer) -> str:
    """Serve `server` from a daemon thread; its base URL (…/v1)."""
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}/v1"


class ChatHandler(JsonHandler):
    """/v1/models lists one model; /v1/chat/completions answers STAND_IN_REPLY to everything."""

    def do_GET(self) -> None:
        self.send_json({"object": "list", "data": [{"id": "stand-in", "object": "model", "owned_by": "bench"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_json(completion("stand-in", STAND_IN_REPLY))


def start_chat() -> tuple[ThreadingHTTPServer, str]:
    """The stand-in chat model and its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    return server, serve(server)


class JudgeServer(ThreadingHTTPServer):
    """A yes/no judge answering every call after `delay` seconds, p(yes) drawn from a hash of the request; it
    keeps each call's latency and counts the judge's picture probes."""

    daemon_threads = True

    def __init__(self, delay: float):
        super().__init__(("127.0.0.1", 0), JudgeHandler)
        self.delay = delay
        self.latencies: list[float] = []
        self.probes = 0  # the judge's one-time check that it sees pictures (two calls before the first ask)
        self.lock = threading.Lock()


class JudgeHandler(JsonHandler):
    def do_POST(self) -> None:
        t0 = time.perf_counter()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(self.server.delay)
        p = int.from_bytes(hashlib.sha256(body).digest()[:2], "little") / 65535 * 0.98 + 0.01
        word = "Yes" if p >= 0.5 else "No"
        top = [{"token": "Yes", "logprob": math.log(p), "bytes": None},
               {"token": "No", "logprob": math.log(1 - p), "bytes": None}]
        chosen = top[0 if word == "Yes" else 1]["logprob"]
        self.send_json(completion("bench-judge", f"{word} - bench answer", reply_id="bench", logprobs={
            "content": [{"token": word, "logprob": chosen, "bytes": None, "top_logprobs": top}]}))
        from core.backends.judge_checks import PROBE_QUESTION

        with self.server.lock:
            self.server.latencies.append(time.perf_counter() - t0)
            self.server.probes += PROBE_QUESTION.encode() in body
