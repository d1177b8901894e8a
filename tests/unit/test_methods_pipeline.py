"""The pipeline on an in-memory corpus with fakes: VisRet, rerank (chaining, modes, failures, budget),
coverage, answer, feedback, cache and events."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from core.backends.base import JudgeRequest
from core.search.engine import SearchEngine
from core.contracts.search_request import SearchRequest
from core.contracts.records import Filters, Photo
from core.config import Settings
from tests.fakes import FakeBackends, FakeEmbedder, FakeGenerator, FakeJudge, FakeLLM, FakeSearch

DIM = 8
COLOURS = {0: (255, 0, 0), 1: (0, 255, 0), 2: (0, 0, 255)}


def corpus(tmp_path, backends=None, n=12, **settings):
    """n photos; photo i has the unit vector e_(i mod DIM) plus a little of e_0, captions name species."""
    rng = np.random.default_rng(0)
    vecs = np.eye(DIM)[[i % DIM for i in range(n)]] + 0.01 * rng.standard_normal((n, DIM))
    names = ["red frog", "green frog", "blue beetle", "red beetle"]
    photos = [Photo(path=f"p{i}.png", id=i + 1, common_name=names[i % 4], caption=f"a {names[i % 4]} on a leaf")
              for i in range(n)]
    s = Settings(data_dir=str(tmp_path), k=5, rerank_k=6, **settings)
    backends = backends or FakeBackends()
    if backends.embedder.dim != DIM:
        backends.embedder = FakeEmbedder(DIM)
    return FakeSearch(photos, vecs.astype(np.float32), s, backends=backends)


def test_baseline_json_and_events(tmp_path):
    search = corpus(tmp_path)
    events = []
    res = SearchEngine(search, search.backends).search(SearchRequest("red frog", k=3), on_event=events.append)
    out = json.loads(json.dumps(res.to_json()))
    assert len(out["results"]) == 3 and out["stages"]["first"]["method"] == "baseline"
    assert any(e.kind == "first_results" and e.stage == "first" for e in events)
    assert events[-1].kind == "done" and events[-1].result is res


def test_visret_fuses_generated_images_and_drops_failures(tmp_path):
    emb = FakeEmbedder(DIM, images={COLOURS[0]: np.eye(DIM)[2], COLOURS[2]: np.eye(DIM)[3]})
    gen = FakeGenerator(colours=COLOURS, fail_seeds=[1])
    search = corpus(tmp_path, FakeBackends(embedder=emb, generator=gen))
    events = []
    res = SearchEngine(search, search.backends).search(
        SearchRequest("a blue beetle on a leaf", method="visret", m=3, k=4), on_event=events.append)
    v = res.stages["visret"]
    assert [x["seed"] for x in v["visualizations"]] == [0, 2]
    assert v["failed"][0]["seed"] == 1 and any("failed and was dropped" in n for n in res.notices)
    for x in v["visualizations"]:
        assert x["path"].endswith(".png") and (tmp_path / "generated") in __import__("pathlib").Path(x["path"]).parents
        assert x["model"] == "fake-generator"
    # photos 3 and 11 (e_2) and 4 and 12 (e_3) are the best of the two lists; RRF interleaves them
    assert {h.photo_id for h in res.hits[:2]} == {3, 4}
    assert len(v["lists"]) == 2 and v["instruction"]
    assert sum(e.kind == "visualization" for e in events) == 3


def test_visret_all_failed_falls_back_to_rewrite(tmp_path):
    search = corpus(tmp_path, FakeBackends(generator=FakeGenerator(fail_all=True)))
    res = SearchEngine(search, search.backends).search(SearchRequest("a red frog", method="visret", m=2))
    assert res.stages["visret"]["fallback"] is True and res.stages["visret"]["visualizations"] == []
    assert any("rewrite baseline" in n for n in res.notices) and res.hits


def test_visret_comparison_gives_one_list_per_organism(tmp_path):
    search = corpus(tmp_path)
    res = SearchEngine(search, search.backends).search(
        SearchRequest("What is the difference between the red frog and the blue beetle?", method="visret", m=1))
    v = res.stages["visret"]
    assert v["kind"] == "comparison" and v["organisms"] == ["red frog", "blue beetle"]
    assert len(v["per_organism"]) == 2 and len(v["visualizations"]) == 2


def test_rewrite_uses_the_instruction_text_and_llm_json(tmp_path):
    llm = FakeLLM({"ecologist's request": json.dumps({"kind": "scene", "descriptions": ["green frog on a leaf"]})})
    search = corpus(tmp_path, FakeBackends(llm=llm))
    pipe = SearchEngine(search, search.backends)
    res = pipe.search(SearchRequest("frog", method="rewrite"))
    assert res.stages["rewrite"]["text"] == "green frog on a leaf" and res.stages["rewrite"]["source"] == "llm"
    res2 = pipe.search(SearchRequest("frog", method="visret", m=1))
    assert res2.stages["visret"]["instruction"] == "green frog on a leaf"  # the same LLM output


def test_example_photos_join_the_fusion(tmp_path):
    search = corpus(tmp_path)
    res = SearchEngine(search, search.backends).search(SearchRequest("zzz", method="visret", m=1, example_ids=[5]))
    assert res.stages["visret"]["examples"] == 1
    assert any("example" in x for x in res.stages["visret"]["lists"])
    assert 5 in [h.photo_id for h in res.hits[:2]]


def test_rerank_chains_earlier_answers_and_scores(tmp_path):
    judge = FakeJudge(lambda r: 0.9 if r.photo.id in (6, 2) else 0.2)
    search = corpus(tmp_path, FakeBackends(judge=judge), rerank_subquestions=3)
    res = SearchEngine(search, search.backends).search(
        SearchRequest("a red frog on a leaf", rerank="full", rerank_k=12, k=6))
    rr = res.stages["rerank"]
    assert len(rr["subquestions"]) >= 2 and rr["context"]
    by_photo: dict[int, list[JudgeRequest]] = {}
    for req in judge.calls:
        by_photo.setdefault(req.photo.id, []).append(req)
    for reqs in by_photo.values():
        assert [r.question for r in reqs] == rr["subquestions"]
        for j, req in enumerate(reqs):
            assert [q for q, _ in req.history] == rr["subquestions"][:j]
            assert all(a in ("yes", "no") for _, a in req.history)
            assert req.context == rr["context"] and req.query == "a red frog on a leaf"
    top = [h.photo_id for h in res.hits[:2]]
    assert set(top) == {2, 6} and rr["photos"][0]["score"] == pytest.approx(90.0)
    ans = rr["photos"][0]["answers"][0]
    assert set(ans) >= {"question", "answer", "p_yes", "reason"}


def test_rerank_ties_keep_first_stage_order_and_modes(tmp_path):
    search = corpus(tmp_path, FakeBackends(judge=FakeJudge(lambda r: 0.5)))
    pipe = SearchEngine(search, search.backends)
    base = [h.photo_id for h in pipe.search(SearchRequest("red frog", k=6)).hits]
    for mode in ("direct", "subq", "context", "full"):
        res = pipe.search(SearchRequest("red frog", k=6, rerank=mode, rerank_k=6))
        assert [h.photo_id for h in res.hits] == base, mode
        rr = res.stages["rerank"]
        assert (rr["context"] != "") == (mode in ("context", "full"))
        assert (len(rr["subquestions"]) == 1) == (mode in ("direct", "context"))


def test_judge_failure_keeps_first_stage_order(tmp_path):
    search = corpus(tmp_path, FakeBackends(judge=FakeJudge(fail=True)))
    pipe = SearchEngine(search, search.backends)
    base = [h.photo_id for h in pipe.search(SearchRequest("red frog", k=6)).hits]
    res = pipe.search(SearchRequest("red frog", k=6, rerank="direct"))
    assert [h.photo_id for h in res.hits] == base
    assert res.stages["rerank"]["order"] == "first-stage" and any("judge failed" in n for n in res.notices)


def test_judge_budget_and_votes(tmp_path):
    judge = FakeJudge(lambda r: 0.8)
    search = corpus(tmp_path, FakeBackends(judge=judge), max_judge_calls=4)
    res = SearchEngine(search, search.backends).search(SearchRequest("red frog", rerank="direct", rerank_k=6, votes=1))
    assert len(judge.calls) == 4 and res.stages["rerank"]["judged"] == 4
    assert any("budget reached" in n for n in res.notices)
    judge2 = FakeJudge(lambda r: 0.8)
    s2 = corpus(tmp_path / "b", FakeBackends(judge=judge2))
    res2 = SearchEngine(s2, s2.backends).search(SearchRequest("red frog", rerank="direct", rerank_k=2, votes=3))
    assert len(judge2.calls) == 6 and res2.stages["rerank"]["photos"][0]["answers"][0]["votes"] == ["yes"] * 3


def test_repeated_query_makes_no_backend_call(tmp_path):
    b = FakeBackends(judge=FakeJudge(lambda r: 0.7))
    search = corpus(tmp_path, b)
    req = dict(query="a red frog", method="visret", m=2, rerank="full", coverage=True, answer=True)
    first = SearchEngine(search, search.backends).search(SearchRequest(**req))
    assert first.stages["cache"]["backend_calls_total"] > 0
    loads = search.loads
    # a new pipeline: only the disk cache is shared
    second = SearchEngine(search, search.backends).search(SearchRequest(**req))
    assert second.stages["cache"]["backend_calls_total"] == 0 and second.stages["cache"]["cache_hits_total"] > 0
    assert search.loads == loads  # cached judge answers never read the photo
    assert [h.photo_id for h in first.hits] == [h.photo_id for h in second.hits]


def test_coverage_and_answer(tmp_path):
    search = corpus(tmp_path)
    res = SearchEngine(search, search.backends).search(
        SearchRequest("a red frog and a blue beetle and a snake", coverage=True, answer=True, reference=True))
    cov = res.stages["coverage"]
    assert [q["text"] for q in cov["subqueries"]] == ["red frog", "blue beetle", "snake"]
    assert cov["uncovered"] == [2]
    covered = {tuple(p["satisfies"]) for p in cov["photos"]}
    assert covered == {(0,), (1,)} and all("dense" in p for p in cov["photos"])
    assert cov["reference"]["generated"] is True and cov["reference"]["path"].endswith(".png")
    assert any("global image embedding" in n for n in res.notices)
    ans = res.stages["answer"]
    assert ans["verified"] is False and ans["cited_ids"] == [h.photo_id for h in res.hits[:5]]


def test_answer_cites_ids_from_llm(tmp_path):
    def reply(messages):
        first = re.search(r"\[(\d+)\]", messages[-1].content).group(1)
        return f"It is red [{first}] and sits on a leaf [{first}]."

    llm = FakeLLM({"Photo notes": reply})
    search = corpus(tmp_path, FakeBackends(llm=llm))
    res = SearchEngine(search, search.backends).search(SearchRequest("red frog", answer=True))
    assert res.stages["answer"]["cited_ids"] == [res.hits[0].photo_id] and res.stages["answer"]["verified"]


def test_answer_citing_photos_it_was_not_shown_is_refused(tmp_path):
    def reply(messages):
        first = re.search(r"\[(\d+)\]", messages[-1].content).group(1)
        return f"It is red [{first}] and sits on a leaf [999]."

    search = corpus(tmp_path, FakeBackends(llm=FakeLLM({"Photo notes": reply})))
    res = SearchEngine(search, search.backends).search(SearchRequest("red frog", answer=True))
    ans = res.stages["answer"]
    assert ans["cited_ids"] == [] and ans["verified"] is False and "999" in ans["refused"]
    assert any("999" in n and n.startswith("answer: not shown") for n in res.notices)


def test_feedback_moves_the_ranking(tmp_path):
    search = corpus(tmp_path)
    pipe = SearchEngine(search, search.backends)
    base = pipe.search(SearchRequest("zzz qqq", k=3))
    moved = pipe.search(SearchRequest("zzz qqq", k=3, relevant_ids=[7, 15 - 8],
                                      nonrelevant_ids=[base.hits[0].photo_id]))
    assert moved.hits[0].photo_id in (7, 15) and moved.stages["feedback"]["relevant"] == [7, 7]


def test_pool_filter_and_stream(tmp_path):
    search = corpus(tmp_path)
    events = list(SearchEngine(search, search.backends).stream(
        SearchRequest("red frog", filters=Filters(ids=(2, 3)), rerank="direct")))
    assert events[-1].kind == "done"
    res = events[-1].result
    assert {h.photo_id for h in res.hits} == {2, 3} and res.pool_size == 2
    assert [e.progress for e in events if e.kind == "judged"] == ["judged 1/2", "judged 2/2"]


def test_llm_failure_degrades_with_notice(tmp_path):
    llm = FakeLLM({"": RuntimeError("server down")})
    search = corpus(tmp_path, FakeBackends(llm=llm))
    res = SearchEngine(search, search.backends).search(
        SearchRequest("a red frog", method="rewrite", rerank="full", coverage=True))
    assert any("language model failed" in n for n in res.notices) and res.hits
    assert not math.isnan(res.hits[0].score)


def test_hung_judge_times_out_and_keeps_first_stage_order(tmp_path):
    import time

    search = corpus(tmp_path, FakeBackends(judge=FakeJudge(delay=1.5)), backend_timeout_s=0.1, judge_concurrency=6)
    base = [h.photo_id for h in SearchEngine(search, search.backends).search(SearchRequest("red frog", k=6)).hits]
    t0 = time.perf_counter()
    res = SearchEngine(search, search.backends).search(SearchRequest("red frog", k=6, rerank="direct", rerank_k=6))
    assert time.perf_counter() - t0 < 1.2
    assert [h.photo_id for h in res.hits] == base and any("no answer within" in n for n in res.notices)


def test_empty_pool_runs_every_stage_without_error(tmp_path):
    search = corpus(tmp_path)
    res = SearchEngine(search, search.backends).search(
        SearchRequest("a red frog", method="visret", m=1, rerank="full", coverage=True, answer=True,
                      filters=Filters(ids=(999,))))
    assert res.hits == [] and "rerank" not in res.stages
    assert res.stages["coverage"]["uncovered"] == [0] and res.stages["coverage"]["photos"] == []
    json.dumps(res.to_json())


@pytest.mark.parametrize("field,method", [("relevant_ids", "baseline"), ("nonrelevant_ids", "rewrite"),
                                          ("example_ids", "visret"), ("example_ids", "baseline")])
def test_unknown_photo_ids_are_input_errors(tmp_path, field, method):
    from core.contracts.errors import InputError

    gen = FakeGenerator()
    search = corpus(tmp_path, FakeBackends(generator=gen))
    with pytest.raises(InputError, match="photo id 999 is not in the index") as info:
        SearchEngine(search, search.backends).search(SearchRequest("red frog", method=method, m=1, **{field: [3, 999]}))
    assert info.value.hint == "use ids shown in the results" and gen.calls == []  # nothing costly ran first
