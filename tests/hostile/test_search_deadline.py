"""The search's time limit, in the fast lane (short limits, in-process fakes and one local fault server): a
judge or picture maker that never answers is not waited on past deadline_*_s; the search returns its photos
(first-stage order for those not checked) with one notice naming the limit, the model that took the time and
what was left undone; a remote call never gets more than what is left of the search; a call the limit cut
pauses nothing. The defaults' values are checked once."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from core.backends import http_bounds
from core.backends.base import ChatMessage
from core.backends.openai_llm import OpenAILLM
from core.config import Settings, load_settings
from core.contracts.errors import DeadlinePassed
from core.contracts.records import Photo
from core.contracts.search_request import SearchRequest
from core.methods.deadline import SearchDeadline, backend_where
from core.search.engine import SearchEngine
from core.search.presets import DEADLINE_SETTINGS, deadline_kind, request_for
from tests.fakes import FakeBackends, FakeEmbedder, FakeGenerator, FakeJudge, FakeSearch
from tests.faultservers import FaultServer

DIM, N = 8, 6
RELEASE = threading.Event()  # set at the end of the module: the hung fakes' threads end


@pytest.fixture(scope="module", autouse=True)
def release_hung_threads():
    yield
    RELEASE.set()


class HungJudge(FakeJudge):
    def ask(self, request):
        with self._lock:
            self.calls.append(request)
        RELEASE.wait()
        return super().ask(request)


class HungGenerator(FakeGenerator):
    def generate(self, prompt, *, seed, size=224):
        self.calls.append((prompt, seed))
        RELEASE.wait()
        return super().generate(prompt, seed=seed, size=size)


def engine(tmp_path, backends: dict | None = None, **settings):
    backends = backends or {}
    rng = np.random.default_rng(0)
    vecs = (np.eye(DIM)[[i % DIM for i in range(N)]] + 0.01 * rng.standard_normal((N, DIM))).astype(np.float32)
    photos = [Photo(path=f"p{i}.png", id=i + 1, caption=f"a frog {i}") for i in range(N)]
    s = Settings(data_dir=str(tmp_path), k=N, rerank_k=N, **settings)
    search = FakeSearch(photos, vecs, s, backends=FakeBackends(embedder=FakeEmbedder(DIM), **backends))
    return SearchEngine(search, search.backends)


def test_the_defaults():
    s = load_settings(environ={})
    assert {k: getattr(s, v) for k, v in DEADLINE_SETTINGS.items()} == {
        "Fast": 10.0, "Visualize": 60.0, "Verify": 90.0, "Cover": 60.0}
    assert (s.backend_timeout_s, s.backend_retries, s.backend_cooldown_s) == (60.0, 2, 60.0)


def test_each_search_gets_the_limit_of_the_preset_it_resembles():
    kinds = {name: deadline_kind(request_for(name, "a frog")) for name in
             ("Fast", "Visualize", "Verify", "Cover", "baseline", "rewrite", "visret", "rerank-subq",
              "visret+rerank-full", "coverage")}
    assert kinds == {"Fast": "Fast", "Visualize": "Visualize", "Verify": "Verify", "Cover": "Cover",
                     "baseline": "Fast", "rewrite": "Visualize", "visret": "Visualize", "rerank-subq": "Verify",
                     "visret+rerank-full": "Verify", "coverage": "Cover"}
    assert deadline_kind(request_for("Fast", "a frog", answer=True)) == "Verify"


def test_a_hung_judge_holds_the_search_no_longer_than_its_limit(tmp_path):
    judge = HungJudge()
    eng = engine(tmp_path, {"judge": judge}, deadline_verify_s=1.0, backend_timeout_s=60.0)
    first = eng.search(SearchRequest("a frog", k=N))
    t0 = time.monotonic()
    result = eng.search(SearchRequest("a frog", k=N, rerank="direct", rerank_k=N))
    elapsed = time.monotonic() - t0
    assert elapsed < 1.0 + 2.0, elapsed
    stage = result.stages["rerank"]
    assert stage["out_of_time"] == N and stage["judged"] == 0 and stage["order"] == "first-stage"
    assert result.ids == first.ids  # what the search had: the first stage's order
    assert judge.calls  # the judge was asked, and not waited for
    notice = next(n for n in result.notices if "time limit" in n)
    assert notice.startswith("the search stopped at Verify's time limit of 1 s (the photo checker (fieldguide) "
                             "took")
    assert f"{N} of {N} photos were not checked" in notice and "raise deadline_verify_s" in notice


def test_a_hung_picture_maker_is_cut_and_later_steps_say_they_were_skipped(tmp_path):
    generator = HungGenerator()
    eng = engine(tmp_path, {"generator": generator, "judge": FakeJudge()}, deadline_verify_s=1.0,
                 backend_timeout_s=60.0)
    t0 = time.monotonic()
    result = eng.search(SearchRequest("a frog", k=N, method="visret", m=3, rerank="direct", rerank_k=N))
    elapsed = time.monotonic() - t0
    assert elapsed < 1.0 + 2.0, elapsed
    assert len(generator.calls) == 1  # the first picture hung; the others were never started
    assert result.stages["visret"]["out_of_time"] == 3 and result.stages["rerank"]["out_of_time"] == N
    limit = [n for n in result.notices if "time limit" in n]
    assert "3 of 3 pictures were not drawn by the picture maker (fieldguide)" in limit[0], limit
    assert limit[1] == (f"because of the same time limit, the {N} photos were not checked by the photo checker "
                        "(fieldguide) and keep their first-stage order"), limit
    assert len(result.hits) == N


def test_a_fast_search_within_its_limit_says_nothing_of_it(tmp_path):
    result = engine(tmp_path, deadline_fast_s=5.0).search(SearchRequest("a frog", k=N))
    assert not any("time limit" in n for n in result.notices)


def test_a_remote_call_gets_no_more_than_what_is_left_of_the_search():
    settings = load_settings(environ={}, llm="openai", llm_model="m", backend_timeout_s=30.0, backend_retries=2)
    with FaultServer("hang") as server:
        llm = OpenAILLM.from_settings(settings.replace(openai_base_url=server.url + "/v1"))
        deadline = SearchDeadline(1.0, "Verify", "deadline_verify_s")
        t0 = time.monotonic()
        with deadline.applied(), pytest.raises(DeadlinePassed) as cut:
            llm.chat([ChatMessage("user", "hello")])
        elapsed = time.monotonic() - t0
        with deadline.applied(), pytest.raises(DeadlinePassed) as unsent:  # past it: nothing is sent
            llm.chat([ChatMessage("user", "hello")])
        calls = server.calls
    assert elapsed < 2.0, elapsed
    assert "cut off by the search's time limit of 1 s" in cut.value.message
    assert f"127.0.0.1:{server.server_address[1]}" in cut.value.message
    assert "was not sent" in unsent.value.message and calls == 1
    assert llm.client.ecolens_breaker.failures == 0  # the search's limit is no fault of the server


def test_outside_a_search_the_call_keeps_its_own_limit():
    assert http_bounds.search_left() is None
    with SearchDeadline(None).applied():
        assert http_bounds.search_left() is None
    with SearchDeadline(3.0).applied(), http_bounds.clock(10.0) as c:
        assert c.search_s == 3.0 and c.left() <= 3.0
    with SearchDeadline(30.0).applied(), http_bounds.clock(2.0) as c:
        assert c.search_s is None and c.left() <= 2.0


def test_the_notice_names_a_remote_backend_by_its_masked_address():
    s = Settings(judge="openai", openai_base_url="https://user:secret@gpu.example.org/v1")
    where = backend_where(s, "judge")
    assert where.startswith("the photo checker at https://") and "gpu.example.org/v1" in where
    assert "secret" not in where
    assert backend_where(Settings(), "judge") == "the photo checker (fieldguide)"
