"""Abstentions in the rerank, with fakes: a question the judge cannot check is neither pass nor fail (the score is
the paper's mean over the checked questions), what was not checked is named in one notice, a photo with nothing
checked follows the scored ones, and the OpenAI judge abstains when its first token is mostly neither yes nor no."""
from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from core.backends.base import JudgeAnswer, JudgeRequest
from core.backends.openai_judge import OpenAIJudge
from core.backends.reach import NOT_CHECKED, abstain, notice_text, phrases
from core.config import Settings
from core.contracts.records import Photo
from core.contracts.search_request import SearchRequest
from core.methods.cache import CachedJudge
from core.methods.disk_cache import DiskCache
from core.methods.rerank import answer_entry, passed, photo_score
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeChatClient, FakeEmbedder, FakeJudge, FakeSearch, logprobs_for

DIM = 8
QUERY = "a frog calling at night"
BAND = Settings.model_fields["undecided_band"].default  # 0.1


class ReachJudge(FakeJudge):
    """FakeJudge that cannot see sounds or time of day: it abstains on questions naming them."""

    UNSEEN = {"calling", "night"}

    def unseen(self, text: str) -> list[str]:
        return phrases(text, lambda w: w in self.UNSEEN)

    def ask(self, request: JudgeRequest) -> JudgeAnswer:
        parts = self.unseen(request.question)
        if parts:
            with self._lock:
                self.calls.append(request)
            return abstain(f"{', '.join(parts)}: cannot be seen", parts)
        return super().ask(request)


def engine(tmp_path, judge, n=6):
    rng = np.random.default_rng(0)
    vecs = np.eye(DIM)[[i % DIM for i in range(n)]] + 0.01 * rng.standard_normal((n, DIM))
    photos = [Photo(path=f"p{i}.png", id=i + 1, caption=f"a frog {i}") for i in range(n)]
    s = Settings(data_dir=str(tmp_path), k=n, rerank_k=n)
    search = FakeSearch(photos, vecs.astype(np.float32), s,
                        backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge))
    return SearchEngine(search, search.backends)


def _answer(p: float) -> JudgeAnswer:
    return JudgeAnswer("yes" if p >= 0.5 else "no", logprobs_for(p), "r")


def test_phrases_group_unseen_words_and_open_a_phrase_at_a_preposition():
    unseen = {"calling", "night", "singing", "dawn", "rain"}.__contains__
    assert phrases("Is the frog calling at night?", unseen) == ["calling", "at night"]
    assert phrases("a bird singing at dawn in the rain", unseen) == ["singing", "at dawn", "in the rain"]
    assert phrases("Is there a frog on sand?", unseen) == []
    assert notice_text(["calling", "at night"]) == "not checked by the photo checker: calling, at night"


def test_an_abstention_is_neither_pass_nor_fail_and_counts_as_undecided_in_the_score():
    entries = [answer_entry("Is there a frog?", [_answer(0.8)], BAND),
               answer_entry("Is the frog calling at night?", [abstain("cannot see", ["calling", "at night"])], BAND),
               answer_entry("Is it on sand?", [_answer(0.7)], BAND)]
    assert entries[1] == {"question": "Is the frog calling at night?", "answer": NOT_CHECKED, "p_yes": None,
                          "checked": False, "unchecked": ["calling", "at night"], "reason": "cannot see"}
    assert photo_score(entries) == pytest.approx(100 * (0.8 + 0.5 + 0.7) / 3)  # the unmade check: undecided, 0.5
    assert photo_score([entries[0], entries[2]]) == pytest.approx(75.0)  # the paper's mean when nothing abstains
    sure = answer_entry("Is there a frog?", [_answer(1.0)], BAND)
    assert photo_score([sure, sure]) == 100.0 and photo_score([sure, entries[1]]) == pytest.approx(75.0)
    assert passed({"answers": entries})  # every checked answer is a yes
    assert not passed({"answers": [entries[1]]}) and photo_score([entries[1]]) is None  # nothing checked
    assert not passed({"answers": [entries[0], answer_entry("q", [_answer(0.2)], BAND), entries[1]]})


def test_a_check_inside_the_undecided_band_is_cant_tell_and_does_not_pass():
    """The one band (setting undecided_band): p(yes) = 0.5 or 0.6 is "can't tell" in the stage (what
    `search --json` prints), never a yes, and a photo with such a check has not passed every check."""
    coin = answer_entry("Is it on sand?", [_answer(0.5)], BAND)
    edge = answer_entry("Is it on sand?", [_answer(0.6)], BAND)
    assert coin["answer"] == edge["answer"] == "can't tell" and coin["judge_answer"] == "yes"
    assert coin["checked"] and coin["p_yes"] == pytest.approx(0.5)
    assert not passed({"answers": [answer_entry("q", [_answer(0.8)], BAND), coin]})
    assert answer_entry("q", [_answer(0.6)], 0.05)["answer"] == "yes"  # a narrower band: a yes
    assert answer_entry("q", [_answer(0.35)], BAND)["answer"] == "no"


def test_votes_an_abstention_must_win_the_vote_to_count():
    two_yes = answer_entry("q", [_answer(0.9), abstain("undecided"), _answer(0.7)], BAND)
    assert two_yes["answer"] == "yes" and two_yes["p_yes"] == pytest.approx(0.8) and two_yes["checked"]
    assert two_yes["votes"] == ["yes", NOT_CHECKED, "yes"]
    mostly = answer_entry("q", [abstain("undecided"), abstain("undecided"), _answer(0.9)], BAND)
    assert mostly["answer"] == NOT_CHECKED and mostly["p_yes"] is None and not mostly["checked"]


def test_rerank_orders_by_checked_questions_and_names_the_unchecked_parts_once(tmp_path):
    p_frog = {1: 0.2, 2: 0.9, 3: 0.5, 4: 0.95, 5: 0.1, 6: 0.7}
    judge = ReachJudge(lambda r: p_frog[r.photo.id])
    res = engine(tmp_path, judge).search(SearchRequest(QUERY, rerank="subq"))
    rr = res.stages["rerank"]
    assert len(rr["subquestions"]) >= 2 and any("calling" in q for q in rr["subquestions"])
    for photo in rr["photos"]:
        checked = [a for a in photo["answers"] if a["checked"]]
        assert all("calling" not in a["question"] for a in checked)
        asked = photo["answers"]  # every question asked: an unmade one counts 0.5
        share = (sum(a["p_yes"] for a in checked) + 0.5 * (len(asked) - len(checked))) / len(asked)
        assert photo["score"] == pytest.approx(100 * share, abs=1e-3)
        assert (photo["checks_made"], photo["checks_asked"]) == (len(checked), len(asked))
    assert res.ids[:3] == [4, 2, 6]  # by the frog question alone
    assert [n for n in res.notices if "not checked" in n] == [
        "not checked by the photo checker: calling, at night"]
    assert rr["unchecked"] == ["calling", "at night"] and rr["not_checked_answers"] > 0


def test_a_photo_with_nothing_checked_follows_the_scored_ones_and_all_unchecked_keeps_the_first_order(tmp_path):
    def rule(r):  # photo 1 (first in the first stage) is undecided on everything
        if r.photo.id == 1:
            raise AssertionError("not reached")
        return 0.9

    class Undecided(ReachJudge):
        def ask(self, request):
            if request.photo.id == 1:
                return abstain("neither yes nor no")
            return super().ask(request)

    res = engine(tmp_path / "a", Undecided(rule)).search(SearchRequest("a red frog", rerank="subq"))
    rr = res.stages["rerank"]
    assert res.ids[-1] == 1 and rr["scored"] == len(res.ids) - 1
    assert next(p for p in rr["photos"] if p["id"] == 1)["score"] is None
    notice = next(n for n in res.notices if n.startswith("not checked"))
    assert "answers, where it could say neither yes nor no" in notice

    first = engine(tmp_path / "b", FakeJudge()).search(SearchRequest("calling at night"))
    blind = engine(tmp_path / "c", ReachJudge()).search(SearchRequest("calling at night", rerank="direct"))
    assert blind.stages["rerank"]["order"] == "first-stage" and blind.ids == first.ids
    assert any("could check none of the questions" in n for n in blind.notices)


def test_cached_judge_keeps_an_abstention_and_forwards_unseen(tmp_path):
    inner = ReachJudge()
    judge = CachedJudge(inner, DiskCache(tmp_path))
    img = Image.new("RGB", (4, 4))
    first = judge.ask(JudgeRequest(img, "Is the frog calling at night?"))
    again = judge.ask(JudgeRequest(img, "Is the frog calling at night?"))
    assert len(inner.calls) == 1 and again.abstained and again.unchecked == ("calling", "at night")
    assert again.answer == first.answer == NOT_CHECKED
    assert judge.unseen(QUERY) == ["calling", "at night"]


@pytest.mark.parametrize("top,abstained", [
    ({"It": math.log(0.8), "Yes": math.log(0.15), "No": math.log(0.05)}, True),  # 20% yes/no
    ({"I": math.log(0.5), "Yes": math.log(0.3), "No": math.log(0.2)}, False),  # half: still an answer
    ({"Yes": -0.1, "No": -2.4}, False),
    ({"Maybe": -0.01}, True),  # no yes or no at all: not an answer, not an error
])
def test_openai_judge_abstains_when_its_first_token_is_mostly_neither_yes_nor_no(top, abstained):
    judge = OpenAIJudge(FakeChatClient("It is hard to say from this photo", top), "vlm")
    a = judge.ask(JudgeRequest(Image.new("RGB", (4, 4)), "Is the wing red?"))
    assert a.abstained is abstained
    if abstained:
        assert a.answer == NOT_CHECKED and "neither yes nor no" in a.reason and a.unchecked == ()
    else:
        assert a.answer in ("yes", "no")


def test_a_dialogue_constraint_the_judge_cannot_check_moves_no_photo(tmp_path):
    from types import SimpleNamespace as NS

    from core.methods.constraints import Constraint, ConstraintChecker

    judge = CachedJudge(ReachJudge(lambda r: 0.1), DiskCache(tmp_path))  # "no" to everything it can see
    photos = {i: Photo(path=f"p{i}.png", id=i) for i in (1, 2, 3)}
    checker = ConstraintChecker(NS(judge=judge), lambda ids: [photos[i] for i in ids],
                                lambda p: Image.new("RGB", (4, 4)), "a frog", notice=lambda text: None, band=0.1)
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7)]
    night = Constraint("Is it calling at night?", "words:calling,night", wanted=True)
    assert checker.reorder(ranked, [night], depth=3) == ranked and night.checked == 0
    sand = Constraint("Is it on sand?", "habitat=sand", wanted=True)
    assert checker.reorder(ranked, [sand], depth=3) == ranked and sand.checked == 3 and sand.contradicting == 3
