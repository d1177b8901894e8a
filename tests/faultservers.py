"""Misbehaving HTTP servers on 127.0.0.1 for the deadline tests: one that never answers, one that answers 429
with Retry-After: 30, one that drips its reply body one byte a second, one that drips even its status line,
one that answers HTTP 500, one that answers an HTML page, a blind judge (well-formed chat completions with
log-probabilities that depend on the words only, never on the picture), and one that serves a photo. Each
runs in a thread; every wait inside them is on the server's `stop` event, so closing the server ends them at
once (no fixed sleeps). `calls` counts requests, `image_calls` those carrying a picture (judge requests)."""
from __future__ import annotations

import hashlib
import json
import math
import threading
from http.server import ThreadingHTTPServer

from tests.standin_servers import JsonHandler, completion

MODES = ("hang", "rate_limited", "drip", "drip_headers", "error_500", "html", "blind", "photo")


def blind_completion(text: str) -> bytes:
    """A chat completion whose yes/no log-probabilities follow a hash of the words alone."""
    p = int.from_bytes(hashlib.sha256(text.encode()).digest()[:2], "little") / 65535 * 0.9 + 0.05
    top = [{"token": "Yes", "logprob": math.log(p), "bytes": None},
           {"token": "No", "logprob": math.log(1 - p), "bytes": None}]
    content = ("Yes" if p >= 0.5 else "No") + " - a reason"
    logprobs = {"content": [{"token": top[0]["token"], "logprob": top[0]["logprob"], "bytes": None,
                             "top_logprobs": top}]}
    return json.dumps(completion("m", content, logprobs, reply_id="b")).encode()


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, mode: str, payload: bytes = b"", drip_every_s: float = 1.0):
        assert mode in MODES
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode, self.payload, self.drip_every_s = mode, payload, drip_every_s
        self.calls = 0
        self.image_calls = 0  # requests carrying a picture (the judge's)
        self.lookups = 0  # GET /v1/models: which model is served
        self.stop = threading.Event()
        self.asked = threading.Event()  # set when the first request arrived
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> "FaultServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.shutdown()
        self.server_close()


class _Handler(JsonHandler):
    protocol_version = "HTTP/1.1"

    def _drip(self, data: bytes) -> None:
        for i in range(len(data)):
            if self.server.stop.wait(self.server.drip_every_s):
                return
            self.wfile.write(data[i:i + 1])
            self.wfile.flush()

    def _answer(self, body: bytes = b"") -> None:
        server: FaultServer = self.server
        server.calls += 1
        server.asked.set()
        if server.mode == "error_500":
            return self._send(500, b'{"error": {"message": "internal error", "type": "server_error"}}')
        if server.mode == "html":
            return self._send(200, b"<!DOCTYPE html><html><body>Please log in</body></html>", "text/html")
        if server.mode == "blind":
            if self.command == "GET":
                return self._send(200, b'{"object": "list", "data": [{"id": "m", "object": "model"}]}')
            try:
                messages = json.loads(body or b"{}").get("messages") or []
            except ValueError:
                messages = []
            words = json.dumps([m.get("content") if isinstance(m.get("content"), str) else
                                [p.get("text", "") for p in m.get("content") or [] if isinstance(p, dict)]
                                for m in messages])
            return self._send(200, blind_completion(words))
        if server.mode == "hang":
            server.stop.wait()  # holds the connection open and says nothing
            return
        if server.mode == "rate_limited":
            body = json.dumps({"error": {"message": "Rate limit reached", "type": "rate_limit"}}).encode()
            self.send_response(429)
            self.send_header("Retry-After", "30")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if server.mode == "drip_headers":
            self._drip(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            return
        body = server.payload or b'{"id": "x", "object": "chat.completion", "choices": []}' + b" " * 200
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg" if server.mode == "photo" else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if server.mode == "photo":
            self.wfile.write(body)
        else:
            self._drip(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0) or 0)
        body = self.rfile.read(length) if length else b""
        if b'"image_url"' in body:
            self.server.image_calls += 1
        self._answer(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):  # the client asking which model is served (its size):
            self.server.lookups += 1  # counted apart from the calls the tests bound, and misbehaving alike
            self.server.calls -= 1
        self._answer()
