"""Structured reranking: majority votes are separate judge draws (vote index in the request, the cache key
and the OpenAI sampling), a failed photo does not throw away the other scores, and the default budget covers
K x sub-questions x 3 votes."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from core.backends.base import JudgeRequest
from core.backends.openai_judge import VOTE_TEMPERATURE, OpenAIJudge
from core.config import Settings
from core.contracts.records import Photo
from core.contracts.search_request import SearchRequest
from core.methods.cache import CachedJudge
from core.methods.disk_cache import DiskCache
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeChatClient, FakeEmbedder, FakeJudge, FakeSearch

DIM = 8


def corpus(tmp_path, judge, n=12, **settings):
    rng = np.random.default_rng(0)
    vecs = np.eye(DIM)[[i % DIM for i in range(n)]] + 0.01 * rng.standard_normal((n, DIM))
    photos = [Photo(path=f"p{i}.png", id=i + 1, caption=f"a red frog {i}") for i in range(n)]
    s = Settings(data_dir=str(tmp_path), **{"k": 6, "rerank_k": 6, **settings})
    return FakeSearch(photos, vecs.astype(np.float32), s,
                      backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge))


def test_each_vote_is_its_own_judge_request_and_cache_entry(tmp_path):
    # the first (greedy) draw says yes, the two sampled draws say no: a real majority vote
    judge = FakeJudge(lambda r: 0.9 if r.vote == 0 else 0.2)
    search = corpus(tmp_path, judge)
    request = dict(query="red frog", rerank="direct", rerank_k=2, votes=3)
    res = SearchEngine(search, search.backends).search(SearchRequest(**request))
    assert sorted(r.vote for r in judge.calls) == [0, 0, 1, 1, 2, 2]
    ans = res.stages["rerank"]["photos"][0]["answers"][0]
    assert ans["votes"] == ["yes", "no", "no"] and ans["answer"] == "no"
    # the confidence is the mean p_yes of the majority's votes (the two "no" draws), not of all three
    assert ans["p_yes"] == pytest.approx(0.2, abs=1e-6)
    # every vote answered from its own cache entry
    again = SearchEngine(search, search.backends).search(SearchRequest(**request))
    assert len(judge.calls) == 6 and again.stages["cache"]["backend_calls_total"] == 0
    assert again.stages["rerank"]["photos"][0]["answers"][0]["votes"] == ["yes", "no", "no"]


def test_cached_judge_passes_the_vote_to_the_inner_judge(tmp_path):
    inner = FakeJudge(lambda r: 0.9 if r.vote == 0 else 0.1)
    judge = CachedJudge(inner, DiskCache(tmp_path))
    img = Image.new("RGB", (4, 4), (1, 2, 3))
    first = judge.ask(JudgeRequest(img, "Is it red?"))
    second = judge.ask(JudgeRequest(img, "Is it red?", vote=2))
    assert [r.vote for r in inner.calls] == [0, 2] and (first.answer, second.answer) == ("yes", "no")
    assert judge.ask(JudgeRequest(img, "Is it red?"), vote=2).answer == "no" and len(inner.calls) == 2


def test_openai_judge_samples_votes_after_the_first():
    client = FakeChatClient("Yes - the wings are red")
    judge = OpenAIJudge(client, "vlm")
    img = Image.new("RGB", (4, 4))
    for vote in (0, 1, 2):
        ans = judge.ask(JudgeRequest(img, "Are the wings red?", vote=vote))
        assert ans.answer == "yes" and ans.reason == "the wings are red"
    sent = [(r["temperature"], r["seed"]) for r in client.requests]
    assert sent == [(0.0, 0), (VOTE_TEMPERATURE, 1), (VOTE_TEMPERATURE, 2)] and VOTE_TEMPERATURE > 0


def test_one_failed_photo_keeps_the_other_judge_scores(tmp_path):
    base_search = corpus(tmp_path / "base", FakeJudge())
    first = SearchEngine(base_search, base_search.backends).search(SearchRequest("red frog", k=6))
    base = [h.photo_id for h in first.hits]
    failing = base[1]
    # the judge prefers the first-stage order reversed, and fails on the second photo
    score = {pid: 0.1 + 0.1 * r for r, pid in enumerate(base)}
    judge = FakeJudge(lambda r: score[r.photo.id], fail_when=lambda r: r.photo.id == failing)
    search = corpus(tmp_path / "run", judge)
    res = SearchEngine(search, search.backends).search(SearchRequest("red frog", k=6, rerank="direct", rerank_k=6))
    judged = [pid for pid in reversed(base) if pid != failing]
    assert [h.photo_id for h in res.hits] == judged + [failing]
    rr = res.stages["rerank"]
    assert rr["failed"] == 1 and rr["judged"] == 5 and rr["order"] == "judge, then unjudged in first-stage order"
    assert any("failed on 1 of 6 photos" in n for n in res.notices)


def test_default_budget_covers_three_votes_on_three_subquestions(tmp_path):
    s = Settings()
    assert s.max_judge_calls >= s.rerank_k * 3 * 3
    judge = FakeJudge(lambda r: 0.6)
    search = corpus(tmp_path, judge, n=100, k=10, rerank_k=100, rerank_subquestions=3, judge_concurrency=4)
    res = SearchEngine(search, search.backends).search(SearchRequest("a red frog on a leaf", rerank="subq", votes=3))
    rr = res.stages["rerank"]
    assert len(rr["subquestions"]) == 3 and rr["judged"] == 100 and rr["skipped"] == 0
    assert len(judge.calls) == 900 and not any("budget reached" in n for n in res.notices)


def test_majority_vote_confidence_is_the_mean_of_the_majority():
    from core.methods.rerank import majority

    assert majority(["yes", "no", "yes"], [0.8, 0.3, 0.6]) == ("yes", pytest.approx(0.7), 0)
    assert majority(["No", "no", "yes"], [0.2, 0.4, 0.9]) == ("no", pytest.approx(0.3), 0)
    word, p, first = majority(["yes", "no"], [0.9, 0.4])  # a tie goes where the mean of all votes points
    assert (word, first) == ("yes", 0) and p == pytest.approx(0.9)


def test_subquestions_only_answers_each_question_independently(tmp_path):
    judge = FakeJudge(lambda r: 0.7)
    search = corpus(tmp_path, judge, rerank_subquestions=3)
    engine = SearchEngine(search, search.backends)
    res = engine.search(SearchRequest("a red frog on a leaf", rerank="subq", rerank_k=3))
    rr = res.stages["rerank"]
    assert len(rr["subquestions"]) >= 2 and rr["chained"] is False
    assert judge.calls and all(r.history == () and r.context == "" for r in judge.calls)
    judge.calls.clear()
    full = engine.search(SearchRequest("a red frog on a leaf", rerank="full", rerank_k=3)).stages["rerank"]
    assert full["chained"] is True and any(r.history for r in judge.calls)
