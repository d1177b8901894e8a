"""The OpenAI-compatible LLM sends the task's real schema: strict structured output first, exactly once (a
server that refuses it with HTTP 500 is not asked three times), then json_object with the full schema from
then on. Against real local HTTP servers on 127.0.0.1 through the real openai client (its own retries on)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core.backends import registry
from core.backends.base import ChatMessage
from core.config import Settings
from core.methods import llm_tasks
from core.methods.llm_schemas import SubQuestionsReply, schema_for

ANSWER = {"questions": ["Is there a heron in the photo?", "Is the heron eating a fish?"]}


def _server(refuse_json_schema: bool):
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            fmt = (body.get("response_format") or {}).get("type")
            if refuse_json_schema and fmt == "json_schema":
                self._send(500, {"error": {"message": "Input should be 'text' or 'json_object'"}})
                return
            self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": json.dumps(ANSWER)}}]})

        def _send(self, status, payload):
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


@pytest.fixture
def llm_for():
    servers = []

    def make(refuse: bool):
        server, seen = _server(refuse)
        servers.append(server)
        settings = Settings(llm="openai", llm_model="SmolLM2-135M-Instruct", backend_retries=2, backend_timeout_s=10,
                            openai_base_url=f"http://user:pw@127.0.0.1:{server.server_port}/v1")
        return registry.create_llm(settings), seen

    yield make
    for s in servers:
        s.shutdown()
        s.server_close()


def test_a_refused_schema_attempt_is_made_once_then_json_object(llm_for):
    llm, seen = llm_for(refuse=True)
    schema = schema_for(SubQuestionsReply, items={"questions": (2, 2)})
    msgs = [ChatMessage("user", "questions please")]
    assert json.loads(llm.chat(msgs, json_schema=schema)) == ANSWER
    assert json.loads(llm.chat(msgs, json_schema=schema)) == ANSWER
    kinds = [b["response_format"]["type"] for b in seen]
    assert kinds == ["json_schema", "json_object", "json_object"]  # no retries of the refused attempt
    assert seen[1]["response_format"]["schema"] == schema  # the full schema: llama.cpp makes a grammar of it
    assert "pw" not in llm.model_id and "***@127.0.0.1" in llm.model_id


def test_structured_output_is_strict_and_kept(llm_for):
    llm, seen = llm_for(refuse=False)
    notices: list[str] = []
    qs = llm_tasks.subquestions(llm, "a heron eating a fish", "", 2, notices)
    assert qs == ANSWER["questions"]
    llm_tasks.subquestions(llm, "a grey heron", "", 2, notices)
    fmt = seen[0]["response_format"]
    assert [b["response_format"]["type"] for b in seen] == ["json_schema", "json_schema"]
    assert fmt["json_schema"]["strict"] is True
    sent = fmt["json_schema"]["schema"]
    assert sent["properties"]["questions"]["maxItems"] == 2 and "maxLength" not in json.dumps(sent)
    assert notices.count(llm.notice) == 1 and "small model" in llm.notice  # the model name says SmolLM2-135M
