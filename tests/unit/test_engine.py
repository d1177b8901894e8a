"""The engine's own rules: the final ranking with coverage, heavy-search slots, cancellation, prompt-aware
cache keys."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from core.contracts.cancel import CancelToken, LatestSearches, SearchCancelled
from core.contracts.search_request import SearchRequest
from core.search.engine import final_ranking
from core.search.presets import METHOD_NAMES, PRESET_NAMES, preset, request_for
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge
from tests.unit.test_ui_fakes import DIM, FakeEngine


def test_final_ranking_puts_pareto_photos_first_by_parts_then_dense():
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6)]
    coverage = {"subqueries": [{"text": "red crest"}, {"text": "blue wings"}],
                "photos": [{"id": 3, "satisfies": [0], "dense": 0.5}, {"id": 9, "satisfies": [0, 1], "dense": 0.1},
                           {"id": 4, "satisfies": [1], "dense": 0.6}]}
    out, covers = final_ranking(ranked, coverage, lambda ids: {i: 0.05 for i in ids})
    assert [i for i, _ in out] == [9, 4, 3, 1, 2]
    assert dict(out)[9] == 0.05 and dict(out)[3] == 0.7  # first-stage score kept where known
    assert covers == {9: ["red crest", "blue wings"], 4: ["blue wings"], 3: ["red crest"]}
    assert final_ranking(ranked, None) == (ranked, {})
    assert final_ranking(ranked, {"photos": []}) == (ranked, {})


def test_presets_and_methods_are_one_catalog():
    assert PRESET_NAMES == ("Fast", "Visualize", "Verify", "Cover")
    assert {"baseline", "visret", "rerank-full", "coverage"} <= set(METHOD_NAMES)
    assert preset("Verify").fields() == {"method": "visret", "rerank": "full", "coverage": False}
    req = request_for("Verify", "q", rerank_mode="direct", m=2, seeds=[4, 5])
    assert (req.method, req.rerank, req.m, list(req.seeds), req.label) == ("visret", "direct", 2, [4, 5], "Verify")
    assert request_for("Fast", "q", m=2, seeds=[1]).seeds is None  # seeds only mean something to VisRet
    with pytest.raises(Exception, match="Unknown search"):
        request_for("Slow", "q")


@pytest.mark.parametrize("field,value,words", [
    ("k", 2.9, "not a whole number"), ("k", float("nan"), "not a whole number"), ("k", 10**9, "outside"),
    ("rerank_k", 10**9, "outside"), ("votes", -5, "outside"), ("m", True, "not a whole number"),
    ("example_ids", [10**25], "outside"), ("relevant_ids", ["abc"], "not a whole number")])
def test_requests_are_bounded_with_clear_messages(field, value, words):
    with pytest.raises(Exception, match=words):
        SearchRequest("a frog", **{field: value}).validate()


def test_a_plain_search_never_waits_for_heavy_slots(tmp_path):
    engine = FakeEngine(tmp_path, max_heavy_searches=1)
    assert engine.slots.free.acquire(blocking=False)  # every slot is taken by a (pretend) expensive search
    try:
        t0 = time.perf_counter()
        assert engine.search(request_for("Fast", "a frog", k=3)).ids
        assert time.perf_counter() - t0 < 2
        token = CancelToken()
        events = []
        waiting = threading.Event()  # set when the engine says the search waits for a slot

        def consume() -> None:
            for event in engine.stream(request_for("Cover", "a frog"), cancel=token):
                events.append(event)
                if "waits for a free slot" in getattr(event, "text", ""):
                    waiting.set()

        worker = threading.Thread(target=consume)
        worker.start()
        assert waiting.wait(10), [e.kind for e in events]  # the engine reached the slot and reported the wait
        assert worker.is_alive()  # an expensive one waits for the slot ...
        token.cancel("test over")
        worker.join(5)
        assert events[-1].kind == "cancelled"  # ... and can still be cancelled while waiting
        assert any("waits for a free slot" in getattr(e, "text", "") for e in events)
    finally:
        engine.slots.free.release()


def test_a_cancelled_search_stops_sending_judge_calls(tmp_path):
    token = CancelToken()

    def cancel_on_the_fifth_call(request) -> float:  # runs inside the judge, after the call was recorded
        if len(judge.calls) >= 5:
            token.cancel("enough")
        return 0.5

    judge = FakeJudge(rule=cancel_on_the_fifth_call, delay=0.1)
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge),
                        judge_concurrency=1)
    before = set(threading.enumerate())
    with pytest.raises(SearchCancelled, match="enough"):
        engine.search(request_for("rerank-full", "a frog", rerank_k=12), cancel=token)
    calls = len(judge.calls)
    # every thread the search started (the judge's workers) has ended: nothing is left that could send a call
    for thread in set(threading.enumerate()) - before:
        thread.join(10)
        assert not thread.is_alive(), f"{thread.name} still runs after the search was cancelled"
    assert len(judge.calls) <= calls + 1 and calls < 12 * 3


def test_latest_searches_cancels_the_previous_one_per_key():
    latest = LatestSearches()
    a, replaced = latest.start("page")
    assert replaced is None
    b, replaced = latest.start("page")
    assert replaced is not None and a.cancelled and not b.cancelled and a.reason == "a newer search replaced it"
    assert not replaced.is_set()
    latest.finish("page", a)  # the replaced search's consumer stopped: whoever waits on it goes on
    assert replaced.is_set()
    other, _ = latest.start("other page")
    assert not b.cancelled and not other.cancelled
    latest.finish("page", b)
    assert latest.cancel("page", "x") is False
    c, _ = latest.start("page")
    assert latest.cancel("page", "you pressed Stop") and c.cancelled
    _, replaced = latest.start("page")
    assert replaced is None  # a stopped search is not waited for


def test_editing_the_judge_prompt_is_a_cache_miss(tmp_path, monkeypatch):
    from core.prompts import judge as judge_prompts

    judge = FakeJudge(lambda r: 0.8)
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge))
    req = lambda: request_for("rerank-direct", "a frog", rerank_k=3)  # noqa: E731
    engine.search(req())
    first = len(judge.calls)
    engine.search(req())
    assert len(judge.calls) == first  # same prompt: every answer from the cache
    monkeypatch.setattr(judge_prompts, "SYSTEM", judge_prompts.SYSTEM + " Be brief.")
    engine.search(req())
    assert len(judge.calls) == 2 * first  # edited prompt: asked again


def test_events_are_typed_and_json_ready(tmp_path):
    import json

    engine = FakeEngine(tmp_path)
    events = list(engine.stream(request_for("Verify", "a frog", k=3, m=1, rerank_k=3, preview=True)))
    kinds = [e.kind for e in events]
    firsts = [e for e in events if e.kind == "first_results"]
    assert [e.stage for e in firsts] == ["preview", "first"] and kinds[-1] == "done"
    assert kinds.index("first_results") < kinds.index("visualization")
    assert {"visualization", "judged", "stage"} <= set(kinds)
    assert all(json.dumps(e.to_json(), default=str) for e in events)
    assert np.all([e.done <= e.total for e in events if e.kind == "judged"])


def test_every_hit_carries_its_similarity_on_one_scale(tmp_path):
    """Whatever the ranking score (cosine, RRF, the judge's %), each hit has a similarity: the cosine with the
    words for plain search and coverage, with the closest picture searched with for VisRet."""
    from core.search.presets import request_for
    from tests.unit.test_ui_fakes import FakeEngine

    engine = FakeEngine(tmp_path)
    fast = engine.search(request_for("Fast", "a frog calling", k=5))
    assert [h.similarity for h in fast.hits] == pytest.approx([h.score for h in fast.hits], abs=1e-5)
    vis = engine.search(request_for("Visualize", "a frog calling", k=5, m=2))
    assert all(h.similarity is not None and -1.0 <= h.similarity <= 1.0 for h in vis.hits)
    assert any(abs(h.similarity - h.score) > 1e-6 for h in vis.hits)  # not the fused rank score
    assert "picture_similarity" not in vis.stages["visret"]  # moved onto the hits
    verify = engine.search(request_for("Verify", "a frog calling", k=5, m=2, rerank_k=5))
    assert all(h.similarity is not None for h in verify.hits) and max(h.score for h in verify.hits) > 1.0


def test_a_visret_hit_no_picture_list_held_gets_its_best_cosine_with_the_pictures():
    """A photo brought into a VisRet ranking by another list (the catalog's words) is on the pictures' scale
    too: its best cosine with the pictures searched with, not '–' and not its cosine with the words."""
    from types import SimpleNamespace

    from core.search.similarity import similar

    stored = {7: np.array([0.6, 0.8, 0.0], np.float32), 9: np.array([0.0, 0.0, 1.0], np.float32)}
    corpus = SimpleNamespace(vectors=lambda ids: np.stack([stored[i] for i in ids]))
    hits = [SimpleNamespace(photo_id=i, similarity=None) for i in (5, 7, 9)]
    pictures = np.eye(3, dtype=np.float32)[:2].tolist()  # two pictures, along the first two axes
    stages = {"visret": {"picture_similarity": {5: 0.5}, "picture_vectors": pictures}}
    similar(corpus, None, None, SimpleNamespace(query="a frog"), hits, lambda v: v, stages)
    assert [h.similarity for h in hits] == pytest.approx([0.5, 0.8, 0.0])  # 5 kept; 7: the second picture


def test_a_visret_hit_without_a_vector_has_no_similarity_instead_of_failing_the_search():
    """The catalog's words bring a photo kept without its file (a Camtrap DP medium not fetched: in the catalog,
    not in the index) into a Visualize ranking: its similarity is None, as Fast gives it, and the search does not
    fail with 'photo id(s) not in the index'."""
    from types import SimpleNamespace

    from core.search.similarity import similar

    stored = {7: np.array([0.6, 0.8, 0.0], np.float32)}

    def vectors(ids):
        missing = [i for i in ids if i not in stored]
        if missing:
            raise KeyError(f"photo id(s) not in the index: {missing}")
        return np.stack([stored[i] for i in ids])
    corpus = SimpleNamespace(vectors=vectors, embedded=lambda ids: [i for i in ids if i in stored])
    hits = [SimpleNamespace(photo_id=i, similarity=None) for i in (5, 7, 11)]
    stages = {"visret": {"picture_similarity": {5: 0.5}, "picture_vectors": np.eye(3, dtype=np.float32)[:2].tolist()}}
    similar(corpus, None, None, SimpleNamespace(query="a mallard"), hits, lambda v: v, stages)
    assert [h.similarity for h in hits][:2] == pytest.approx([0.5, 0.8])
    assert hits[2].similarity is None  # 11: no vector, no picture to compare


def test_fast_is_admitted_while_verify_searches_hold_the_heavy_lane(tmp_path):
    from core.contracts.errors import BusyError
    from ui.search_view import PLAIN_SEARCHES, search_limit

    gate = threading.Event()  # the judge answers once the test opens it
    judge = FakeJudge(rule=lambda r: 0.5 if gate.wait(30) else 0.0)
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge),
                        max_heavy_searches=1, max_waiting_heavy=1, judge_concurrency=1)
    running, waiting, outcomes = threading.Event(), threading.Event(), {}

    def verify(name: str) -> None:
        for event in engine.stream(request_for("Verify", f"a frog {name}", k=3, rerank_k=3, m=1)):
            if event.kind == "stage" and event.stage == "rerank":
                running.set()
            if "waits for a free slot" in getattr(event, "text", ""):
                waiting.set()
            outcomes[name] = event
    first = threading.Thread(target=verify, args=("one",))
    first.start()
    assert running.wait(20)  # the first Verify search holds the one slot (its judge is held)
    second = threading.Thread(target=verify, args=("two",))
    second.start()
    assert waiting.wait(20)  # the second waits for it
    verify("three")  # a third costly search finds the waiting room full: refused at once, with what to do
    assert outcomes["three"].kind == "error" and isinstance(outcomes["three"].error, BusyError)
    assert "use Fast" in outcomes["three"].error.hint
    t0 = time.perf_counter()
    assert engine.search(request_for("Fast", "a frog", k=3)).ids  # Fast is admitted all the same
    assert time.perf_counter() - t0 < 5
    gate.set()
    first.join(30)
    second.join(30)
    assert outcomes["one"].kind == outcomes["two"].kind == "done"
    # in the web app, the search event admits every costly search the engine lets in and PLAIN_SEARCHES more
    assert search_limit(engine.settings) == 1 + 1 + PLAIN_SEARCHES
