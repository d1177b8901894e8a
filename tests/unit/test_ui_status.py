"""The status line in words (ui.status): one short line per search, the steps' times behind "details", no step
named that did not run, and a live wait for a slow remote backend that counts up on screen."""
from __future__ import annotations

import re
import threading
from types import SimpleNamespace

from core.contracts.events import FirstResults, PhotoJudged, StageEvent, Waiting
from core.sessions.memory_log import MemorySessionLog
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge
from tests.unit.test_ui_fakes import DIM, FakeEngine
from ui import search_handlers
from ui.search_handlers import SearchHandlers
from ui.status import SearchStatus, backend_host, seconds

REMOTE = SimpleNamespace(judge="openai", llm="rule", generator="openai:gpt-image-1",
                         openai_base_url="http://judge.example.org:8000/v1")


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_seconds_are_never_a_bare_count_of_milliseconds():
    assert [seconds(s) for s in (0.004, 0.153, 3.456, 12.4)] == ["under 0.01 s", "0.15 s", "3.5 s", "12 s"]


def test_remote_backends_are_named_by_their_host():
    assert backend_host(REMOTE, "judge") == "judge.example.org"
    assert backend_host(REMOTE, "generator") == "judge.example.org"
    assert backend_host(REMOTE, "llm") == ""
    assert backend_host(SimpleNamespace(judge="openai", openai_base_url=""), "judge") == "api.openai.com"


def test_a_wait_for_the_photo_checker_counts_up_and_ends_in_one_short_line():
    clock = Clock()
    status = SearchStatus(3, REMOTE, clock)
    status.on(FirstResults("preview", [{"id": i} for i in range(20)]))
    status.on(StageEvent("rerank", "started"))
    clock.now += 12.2
    status.on(Waiting("rerank", 12.2))
    assert status.line() == "Search 3 · 20 photos so far · waiting for the photo checker at judge.example.org, 12 s"
    status.on(PhotoJudged({}, 40, 100))
    assert status.line().endswith("judge.example.org (checked 40 of 100), 12 s")
    clock.now += 1
    status.on(StageEvent("rerank", "done", 13_200.0))
    hits = [SimpleNamespace(covers=None)] * 20
    result = SimpleNamespace(hits=hits, timings_ms={"total": 13_500.0},
                             stages={"rerank": {"judged": 100, "subquestions": ["a?", "b?"]}})
    assert status.finished(result) == "Search 3 · 20 photos · 100 checked with 2 yes/no questions · done in 14 s"
    details = status.details(13.5)
    assert details.splitlines() == ["- first photos on screen after under 0.01 s", "- checking each photo: 13 s",
                                    "- the whole search: 14 s"]


def test_a_cover_search_says_how_many_photos_cover_how_many_parts():
    status = SearchStatus(1, SimpleNamespace(), Clock())
    hits = [SimpleNamespace(covers=["twig"]), SimpleNamespace(covers=["nest"])] + [SimpleNamespace(covers=None)] * 3
    result = SimpleNamespace(hits=hits, timings_ms={"total": 800.0},
                             stages={"coverage": {"subqueries": ["a bird", "twig", "nest"], "uncovered": [0]}})
    assert status.finished(result) == ("Search 1 · 5 photos · the first 2 photos together show 2 of the 3 parts of "
                                       "your query · done in 0.80 s")
    result.stages["coverage"]["uncovered"] = []
    assert "the first 2 photos together show all 3 parts of your query" in status.finished(result)
    result.stages["coverage"]["subqueries"] = ["twig", "nest"]
    assert "the first 2 photos together show both parts of your query" in status.finished(result)


class BlockedJudge(FakeJudge):
    """A judge that answers only once the test has seen the page say it waits for it."""

    def __init__(self):
        super().__init__()
        self.go = threading.Event()

    def ask(self, request):
        assert self.go.wait(30), "the page never said it waits for the photo checker"
        return super().ask(request)


def test_the_page_shows_the_live_wait_while_the_remote_checker_is_slow(tmp_path, monkeypatch):
    monkeypatch.setattr(search_handlers, "HEARTBEAT_S", 0.2)
    judge = BlockedJudge()
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge), judge="openai",
                        openai_base_url="https://vlm.example.org/v1")
    h = SearchHandlers(engine, MemorySessionLog())
    seen = []
    for out in h.search("a frog calling", "Verify", 5, 1, 10, "full", False, "", "", "", [], "", "", None, None):
        seen.append(out[1])
        if re.search(r"waiting for the photo checker at vlm\.example\.org, \d+(\.\d+)? s$", out[1]):
            judge.go.set()
    judge.go.set()
    assert any("waiting for the photo checker at vlm.example.org" in line for line in seen), seen
    assert seen[-1].startswith("Search 1 · 5 photos found with 1 drawing · 10 checked") and "done in" in seen[-1]
