"""Every call to a model server ends within its total deadline, whatever the server does: the REAL openai
client backends (OpenAILLM, OpenAIJudge) against misbehaving servers on 127.0.0.1 (tests/faultservers.py):
one that never answers, one that answers 429 with Retry-After: 30, one that drips its reply a byte a second,
one that drips even its status line. Each call ends within a few seconds of backend_timeout_s (a drip is
cut, a Retry-After longer than the time left is not waited out) and the message names the cause and the
server. A judge whose image check got no answer is not called for every photo: a Verify-style search ends
in about one deadline and says how many photos went unchecked."""
from __future__ import annotations

import re
import time

import pytest

from app import build_services
from core.backends.base import ChatMessage, JudgeRequest
from core.backends.openai_judge import OpenAIJudge
from core.backends.openai_llm import OpenAILLM
from core.config import load_settings
from core.contracts.errors import BackendError, BackendUnavailable
from core.contracts.search_request import SearchRequest
from tests.faultservers import FaultServer
from tests.photos import colour_image, make_photo_folder

DEADLINE = 2.0
BOUND = 3 * DEADLINE  # every call must end well within this

CAUSES = {
    "hang": rf"did not answer within {DEADLINE:g} s",
    "rate_limited": r"rate-limited \(429\).*asked to wait 30 s",
    "drip": rf"still sending its reply after {DEADLINE:g} s",
    "drip_headers": rf"still sending its reply after {DEADLINE:g} s",
}


def _settings(url: str, **kw):
    values = dict(environ={}, llm="openai", judge="openai", llm_model="m", judge_model="m",
                  openai_base_url=url + "/v1", backend_timeout_s=DEADLINE, backend_retries=2)
    values.update(kw)
    return load_settings(**values)


@pytest.mark.parametrize("mode", list(CAUSES))
def test_an_llm_call_ends_within_its_deadline_and_names_the_cause(mode):
    with FaultServer(mode) as server:
        llm = OpenAILLM.from_settings(_settings(server.url))
        t0 = time.monotonic()
        with pytest.raises(BackendError) as caught:
            llm.chat([ChatMessage("user", "hello")])
        elapsed = time.monotonic() - t0
    assert elapsed < BOUND, f"{mode}: {elapsed:.1f} s"
    message = caught.value.message
    assert re.search(CAUSES[mode], message), message
    assert f"127.0.0.1:{server.server_address[1]}" in message and "model server at" in message
    if mode == "rate_limited":
        assert elapsed < DEADLINE and server.calls == 1  # Retry-After 30 > 2 s left: no wait, no retry


@pytest.mark.parametrize("mode", ["hang", "drip"])
def test_a_judge_call_ends_within_its_deadline_and_the_judge_is_then_paused(mode):
    with FaultServer(mode) as server:
        judge = OpenAIJudge.from_settings(_settings(server.url, backend_cooldown_s=600))
        request = JudgeRequest(image=colour_image(1), question="Is there a frog?")
        t0 = time.monotonic()
        with pytest.raises(BackendUnavailable) as caught:
            judge.ask(request)
        first = time.monotonic() - t0
        calls = server.calls
        t1 = time.monotonic()
        for _ in range(5):  # later photos: answered at once from the remembered failure, no request
            with pytest.raises(BackendUnavailable):
                judge.ask(request)
        later = time.monotonic() - t1
    assert first < BOUND and later < 0.5, (first, later)
    assert calls == 1 and server.calls == 1  # the image check's first picture, and nothing after it
    assert re.search(CAUSES[mode], caught.value.message), caught.value.message


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    root = tmp_path_factory.mktemp("deadlines")
    folder = make_photo_folder(root / "photos", good=12, broken=0)
    settings = load_settings(environ={}, data_dir=str(root / "data"), embedder="hash", checkpoint_s=0.0)
    build_services(settings).ingestor().run(folder)
    return root


@pytest.mark.parametrize("mode", ["hang", "rate_limited", "drip"])
def test_a_verify_search_against_a_failing_judge_ends_in_about_one_deadline(catalog, mode):
    with FaultServer(mode) as server:
        settings = load_settings(environ={}, data_dir=str(catalog / "data"), embedder="hash", judge="openai",
                                 judge_model="m", openai_base_url=server.url + "/v1", backend_timeout_s=DEADLINE,
                                 backend_retries=2, judge_concurrency=8)
        services = build_services(settings)
        t0 = time.monotonic()
        result = services.engine.search(SearchRequest("a green frog", k=8, rerank="direct", rerank_k=8))
        elapsed = time.monotonic() - t0
        t1 = time.monotonic()
        again = services.engine.search(SearchRequest("a red frog", k=8, rerank="direct", rerank_k=8))
        second = time.monotonic() - t1
    stage = result.stages["rerank"]
    assert elapsed < BOUND, f"{mode}: {elapsed:.1f} s"
    assert second < DEADLINE, f"{mode}: the paused judge still held the next search {second:.1f} s"
    assert stage["judged"] == 0 and stage["paused"] == 8 and stage["order"] == "first-stage"
    assert server.calls == 1  # one image-check request for 16 photos in two searches
    notice = next(n for n in result.notices if "judge failed" in n)
    assert re.search(CAUSES[mode], notice) and "8 of 8 photos were not checked" in notice, notice
    assert again.stages["rerank"]["paused"] == 8


def test_a_short_retry_after_is_honoured_within_the_deadline():
    """429 with Retry-After: 1 under a 5 s limit: waited out once, then the answer counts."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    calls = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            calls.append(time.monotonic())
            if len(calls) == 1:
                status, body, extra = 429, b'{"error": {"message": "slow down"}}', {"Retry-After": "1"}
            else:
                status, extra = 200, {}
                body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": "hello"}}]}).encode()
            self.send_response(status)
            for k, v in {"Content-Type": "application/json", "Content-Length": str(len(body)), **extra}.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        llm = OpenAILLM.from_settings(_settings(f"http://127.0.0.1:{server.server_address[1]}", backend_timeout_s=5))
        assert llm.chat([ChatMessage("user", "hi")]) == "hello"
    finally:
        server.shutdown()
        server.server_close()
    assert len(calls) == 2 and calls[1] - calls[0] >= 0.9


def test_an_llm_that_keeps_failing_is_paused_for_the_cool_down():
    with FaultServer("rate_limited") as server:
        llm = OpenAILLM.from_settings(_settings(server.url, backend_cooldown_s=600))
        for _ in range(3):
            with pytest.raises(BackendError):
                llm.chat([ChatMessage("user", "hello")])
        with pytest.raises(BackendUnavailable, match=r"was not sent: the last 3 calls failed.*rate-limited \(429\)"):
            llm.chat([ChatMessage("user", "hello")])
    assert server.calls == 3


def test_the_defaults():
    s = load_settings(environ={})
    assert (s.backend_timeout_s, s.backend_cooldown_s, s.download_timeout_s, s.allow_private_urls,
            s.upload_keep_s) == (60.0, 60.0, 60.0, False, 3600)
