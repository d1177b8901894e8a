"""Judge honesty, end to end: the real OpenAI judge client against a local OpenAI-compatible server that
misbehaves in one way each (no log-probabilities, no choices, an HTML page, a body that is not JSON, a model
that cannot see images, a server that rejects image parts, a reply far too long). Each time every photo
counts as failed, the rerank stage keeps the first-stage order, and the notice names the cause; a server
that behaves is judged normally."""
from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from http.server import ThreadingHTTPServer

import pytest

from app import build_services
from core.config import load_settings
from core.contracts.search_request import SearchRequest
from tests.photos import make_photo_folder
from tests.standin_servers import JsonHandler, completion


class JudgeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str):
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = mode
        self.calls = 0


def _completion(content: str, top: list[dict] | None) -> dict:
    logprobs = None if top is None else {"content": [{"token": top[0]["token"], "logprob": top[0]["logprob"],
                                                      "bytes": None, "top_logprobs": top}]}
    return completion("test-judge", content, logprobs, reply_id="t")


class Handler(JsonHandler):
    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.server.calls += 1
        mode = self.server.mode
        user = request["messages"][-1]["content"]
        text = " ".join(p.get("text", "") for p in user if p.get("type") == "text")
        image = "".join(p["image_url"]["url"] for p in user if p.get("type") == "image_url")
        seen = text if mode == "blind" else text + image  # a blind model's answer depends on the words only
        p = int.from_bytes(hashlib.sha256(seen.encode()).digest()[:2], "little") / 65535 * 0.9 + 0.05
        word = "Yes" if p >= 0.5 else "No"
        top = [{"token": "Yes", "logprob": math.log(p), "bytes": None},
               {"token": "No", "logprob": math.log(1 - p), "bytes": None}]
        if mode == "hedges" and "mostly red" not in text:  # the image probe is answered; every photo is hedged
            word, top = "It", [{"token": "It", "logprob": math.log(0.8), "bytes": None},
                               {"token": "Yes", "logprob": math.log(0.15), "bytes": None},
                               {"token": "No", "logprob": math.log(0.05), "bytes": None}]
        if mode == "rejects_images" and image:
            return self._send(400, b'{"error": {"message": "image_url content parts are not supported"}}')
        if mode == "html":
            return self._send(200, b"<!DOCTYPE html><html><body>Please log in</body></html>", "text/html")
        if mode == "not_json":
            return self._send(200, b"<html>gateway</html>")
        reply = _completion(f"{word} - a reason" if word != "It" else "It is hard to say",
                            None if mode == "no_logprobs" else top)
        if mode == "empty_choices":
            reply["choices"] = []
        if mode == "huge":
            reply["choices"][0]["message"]["content"] = "Yes " + "x" * 1_000_000
        self._send(200, json.dumps(reply).encode())


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge-honesty")
    folder = make_photo_folder(root / "photos", good=12, broken=0)
    settings = load_settings(environ={}, data_dir=str(root / "data"), embedder="hash", checkpoint_s=0.0)
    build_services(settings).ingestor().run(folder)
    return root


def _search(root, mode: str):
    server = JudgeServer(mode)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        settings = load_settings(environ={}, data_dir=str(root / "data"), embedder="hash", judge="openai",
                                 judge_model="test-judge", openai_base_url=url,
                                 backend_retries=0, backend_timeout_s=20.0)
        services = build_services(settings)
        first = services.engine.search(SearchRequest("a green frog", k=8))
        result = services.engine.search(SearchRequest("a green frog", k=8, rerank="direct", rerank_k=8))
        return first, result, server.calls
    finally:
        server.shutdown()
        server.server_close()


CAUSES = {"no_logprobs": "no log-probabilities", "empty_choices": "empty reply", "html": "HTML page",
          "not_json": "not JSON", "blind": "does not see the photos", "rejects_images": "rejects image input",
          "huge": "more than the"}


@pytest.mark.parametrize("mode", list(CAUSES))
def test_a_misbehaving_judge_fails_every_photo_and_the_first_stage_order_stands(catalog, mode):
    first, result, _ = _search(catalog, mode)
    stage = result.stages["rerank"]
    assert stage["judged"] == 0 and stage["failed"] == 8 and stage["order"] == "first-stage"
    assert result.ids == first.ids  # nothing was reordered by noise
    notice = next(n for n in result.notices if "judge failed" in n)
    assert CAUSES[mode] in notice and "first-stage order" in notice


def test_a_judge_that_sees_and_answers_properly_reorders_the_photos(catalog):
    first, result, calls = _search(catalog, "good")
    stage = result.stages["rerank"]
    assert stage["judged"] == 8 and stage["failed"] == 0 and stage["order"] == "judge"
    assert calls == 8 + 2  # one call per photo, plus the two-picture check at first use
    scores = [p["score"] for p in stage["photos"]]
    assert scores == sorted(scores, reverse=True) and not any("judge failed" in n for n in result.notices)
    assert re.search(r"openai-judge:test-judge@", stage["judge"])


def test_a_judge_that_answers_neither_yes_nor_no_is_not_checked_and_the_first_stage_order_stands(catalog):
    """A reply whose first token is mostly neither yes nor no (80% on "It") is an abstention, not an error:
    every photo is judged, none is scored, the order stands and one notice says so."""
    first, result, _ = _search(catalog, "hedges")
    stage = result.stages["rerank"]
    assert stage["judged"] == 8 and stage["failed"] == 0 and stage["scored"] == 0 and stage["order"] == "first-stage"
    assert result.ids == first.ids
    assert all(a["answer"] == "not checked" and a["p_yes"] is None for p in stage["photos"] for a in p["answers"])
    assert stage["not_checked_answers"] == 8
    notice = next(n for n in result.notices if n.startswith("not checked by the photo checker"))
    assert "8 of 8 answers, where it could say neither yes nor no" in notice
    assert any("could check none of the questions" in n for n in result.notices)
