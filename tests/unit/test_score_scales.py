"""Scores that mean one thing (issue 35, item 5), table-driven: every scale holds to its range (a similarity is
a cosine clamped to 0-1; a checks score is 0-100, the share of the questions asked that passed, an unmade check
counting as undecided, and it says how many were made; 100% only when every check was made and passed); a
result whose checks were all "not checked" is not on the checks scale; rank-fusion values are not called a
similarity; a badge's reason never contradicts its verdict. Real searches of every preset on fakes, read back
through the API's JSON, stay on their scales."""
from __future__ import annotations

import numpy as np
import pytest

from core.backends.base import JudgeAnswer
from core.backends.reach import abstain
from core.config import Settings
from core.contracts import limits, standin_scores
from core.contracts.records import Photo
from core.methods.rerank import answer_entry, photo_score
from core.search import scales
from core.search.engine import SearchEngine
from core.search.presets import PRESET_NAMES, request_for
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge, FakeSearch, logprobs_for
from ui import badges, present
from ui import strings as S

BAND = Settings.model_fields["undecided_band"].default
DIM = 8


def _said(p: float) -> JudgeAnswer:
    return JudgeAnswer("yes" if p >= 0.5 else "no", logprobs_for(p), "r")


@pytest.mark.parametrize("cosine, shown", [(-0.097, 0.0), (-1.0, 0.0), (0.0, 0.0), (0.31, 0.31), (1.0, 1.0),
                                           (1.0000001, 1.0), (None, None)])
def test_a_similarity_is_a_cosine_clamped_to_0_1(cosine, shown):
    assert scales.similarity(cosine) == shown == limits.on_similarity_scale(cosine)  # one clamp, core's and the page's
    text = present.score_text({"id": 1, "similarity": cosine}, "similarity")
    assert text == ("–" if shown is None else f"{shown:.2f}") and not text.startswith("-0")


def test_the_page_holds_to_the_ranges_core_sets():
    assert present.SCALE_RANGES == {"similarity": limits.SIMILARITY_RANGE, "pictures": limits.SIMILARITY_RANGE,
                                    "checks": limits.CHECKS_RANGE}


@pytest.mark.parametrize("ps, expected, page", [
    ([1.0, 1.0, 1.0], 100.0, "100%"),                         # every check made and passed surely: 100%
    ([1.0, None, None], 100 * 2 / 3, "66% (1 of 3 checked)"),  # two unmade checks: undecided, never 100%
    ([1.0, 1.0, None], 100 * 2.5 / 3, "83% (2 of 3 checked)"),
    ([0.999, 0.999, 0.999], 99.9, "99%"),                      # almost: rounded down, not up to 100%
    ([0.0, 0.0], 0.0, "0%"),
    ([0.6, None], 55.0, "55% (1 of 2 checked)"),
    ([None, None], None, "not checked"),                       # no check made: not on the checks scale
])
def test_a_checks_score_is_the_share_passed_with_unmade_checks_undecided(ps, expected, page):
    answers = [answer_entry(f"q{i}", [abstain("cannot see") if p is None else _said(p)], BAND)
               for i, p in enumerate(ps)]
    score = photo_score(answers)
    assert score == (None if expected is None else pytest.approx(expected, abs=1e-3))
    if score is not None:
        assert scales.CHECKS_RANGE[0] <= score <= scales.CHECKS_RANGE[1]
    stages = {"rerank": {"photos": [{"id": 1, "answers": answers, "score": score}]}}
    checked = present.checked_ids(stages)
    assert present.score_text({"id": 1, "score": 0.0}, "checks", checked, made=present.checks_made(stages, 1)) == page
    assert present.scale_of(stages) == ("similarity" if score is None else "checks")


@pytest.mark.parametrize("entry, forbidden, wanted", [
    # "can't tell" with a note sure of a yes: the note loses its numbers and says the call was too close
    ({"question": "Is the belly clearly visible?", "answer": "can't tell", "judge_answer": "yes", "p_yes": 0.55,
      "checked": True, "reason": "belly visible 1.00"}, "sure", "too close to call"),
    # the votes turned the judge's own word: the note's confidence is not shown against the verdict
    ({"question": "q", "answer": "no", "judge_answer": "yes", "p_yes": 0.3, "checked": True,
      "reason": "crest red 0.90"}, "sure", "leaned yes"),
    # the judge's own yes: its note stands, with its confidence
    ({"question": "q", "answer": "yes", "judge_answer": "yes", "p_yes": 0.95, "checked": True,
      "reason": "crest red 0.95"}, "too close", "(95% sure)"),
    ({"question": "q", "answer": "not checked", "p_yes": None, "checked": False, "reason": "cannot see calls"},
     "sure", "cannot see calls"),
])
def test_a_badges_reason_never_contradicts_its_verdict(entry, forbidden, wanted):
    reason = badges.badge_reason(entry)
    assert forbidden not in reason and wanted in reason
    html = badges.badges_html([entry])
    assert wanted.replace("(", "") in html.replace("(", "")


def _engine(tmp_path, judge):
    rng = np.random.default_rng(3)
    n = 12
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)  # some cosines with a query come out negative
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    photos = [Photo(path=f"p{i}.png", id=i + 1, caption=f"a frog {i}") for i in range(n)]
    s = Settings(data_dir=str(tmp_path), k=n, rerank_k=n)
    search = FakeSearch(photos, vecs, s, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge))
    return SearchEngine(search, search.backends)


class HalfBlindJudge(FakeJudge):
    """Abstains on every question about odd-numbered photos: they are not on the checks scale."""

    def ask(self, request):
        if request.photo.id % 2:
            return abstain("cannot see it")
        return super().ask(request)


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("judge", [FakeJudge(lambda r: 0.9), HalfBlindJudge(lambda r: 0.8)], ids=["sure", "half"])
def test_no_score_of_any_preset_leaves_its_scale(tmp_path, preset, judge):
    result = _engine(tmp_path, judge).search(request_for(preset, "a frog on sand", k=12))
    hits = [h.to_json() for h in result.hits]
    out = present.results_json({"hits": hits, "stages": result.stages, "query": "a frog on sand"}, [], "done")
    lo, hi = out["score"]["range"]
    for row in out["results"]:
        assert row["score"] is None or lo <= row["score"] <= hi, (out["score"], row)
        assert row.get("similarity") is None or 0.0 <= row["similarity"] <= 1.0
        if out["score"]["scale"] == "checks passed" and not row["checked"]:
            assert row["score"] is None  # a photo with no check made has no checks score
        if row.get("checks"):
            assert 0 <= row["checks"]["made"] <= row["checks"]["asked"]
    if out["ranking"]["kind"] == "fusion":  # rank-fusion values are described as such, never as a similarity
        assert out["ranking"]["name"] == "rank fusion" and out["score"]["scale"] != "rank fusion"
        assert "similarity" not in out["ranking"]["name"]
    assert result.stages["score"] == out["ranking"]
    if preset == "Fast":  # the pool holds photos less like the query than unrelated ones: shown as 0, not < 0
        assert min(row["ranking_score"] for row in out["results"]) < 0
        assert min(row["similarity"] for row in out["results"]) == 0.0
    if out["score"]["scale"] == "checks passed" and isinstance(judge, HalfBlindJudge):
        assert {row["score"] is None for row in out["results"]} == {True, False}


def test_the_command_lines_checks_never_contradict_their_verdict(capsys):
    from types import SimpleNamespace

    from cli.methods_search import _print_checks

    rerank = {"photos": [{"id": 5, "answers": [
        {"question": "Is the belly clearly visible?", "answer": "can't tell", "judge_answer": "yes", "p_yes": 0.55,
         "checked": True, "reason": "belly visible 1.00"},
        {"question": "Is the crest red?", "answer": "yes", "judge_answer": "yes", "p_yes": 0.9, "checked": True,
         "reason": "crest red 0.90"}]}]}
    _print_checks(rerank, [SimpleNamespace(photo_id=5)])
    unsure, sure = capsys.readouterr().out.splitlines()
    assert "1.00" not in unsure and "leaned yes" in unsure and "belly visible" in unsure
    assert sure.endswith("(crest red 0.90)")


@pytest.mark.parametrize("embedder, source, standin", [("hash", "", "hash"), ("fieldguide", "fieldguide", None),
                                                       ("fieldguide", "camtrap-dp", "fieldguide")])
def test_a_stand_in_embedders_similarity_is_called_a_stand_ins_score_that_means_nothing(tmp_path, embedder, source,
                                                                                       standin):
    """With the hash stand-in (colour statistics and hashed words) a best match's 0.00 is no "unrelated": the
    score line, the gallery captions, the photo view and the API say the number is a stand-in's and means
    nothing about the photo; so does a world's own encoder on photos not of its world (a real camera-trap
    package's frames: the banner says its rankings are NOT meaningful there); on its world's photos (and a
    real model's) they stay similarities."""
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((6, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    photos = [Photo(path=f"p{i}.png", id=i + 1, caption=f"a frog {i}", source=source) for i in range(6)]
    s = Settings(data_dir=str(tmp_path), k=6, embedder=embedder)
    search = FakeSearch(photos, vecs, s, backends=FakeBackends(embedder=FakeEmbedder(DIM)))
    result = SearchEngine(search, search.backends).search(request_for("Fast", "a frog on sand", k=6))
    hits = [h.to_json() for h in result.hits]
    scale = present.scale_of(result.stages)
    line = present.scale_line(scale, result.stages)
    captions = [c for _, c in present.gallery_items(hits, result.stages, [f"/x/{h['id']}.png" for h in hits])]
    view = present.explanation_html(hits[0], result.stages)
    out = present.results_json({"hits": hits, "stages": result.stages, "query": "a frog on sand"}, [], "done")
    said = [line, view, out["score"]["meaning"], *captions]
    if standin:
        assert result.stages["standin_similarity"] == standin
        assert all("stand-in" in t.lower() for t in said), said
        assert "means nothing" in line and "means nothing" in view and "unrelated)" not in line
        assert all(" · stand-in " in c and c.split(" · stand-in ")[1][:4].replace(".", "").isdigit()
                   for c in captions), captions
        assert out["score"]["standin"] == standin and out["score"]["scale"] == "similarity"
    else:
        assert "standin_similarity" not in result.stages and "standin" not in out["score"]
        assert not any("stand-in" in t.lower() for t in said), said
        assert "from 0 (unrelated) to 1" in line and view.startswith("<p class='ecolens-score'><b>Similarity: ")


@pytest.mark.parametrize("embedder, standin", [("hash", True), ("fieldguide", False)])
def test_the_command_line_calls_a_stand_ins_scores_so_in_json_and_text(tmp_path, capsys, embedder, standin):
    """`search --json` carries the search's stages: with the hash stand-in its ranking description (stages.score,
    also the API's `ranking`) names the stand-in and says, in the page's words, that the numbers mean nothing;
    the text output says so once and writes each score as a stand-in's. A world's own encoder on its world's
    photos: neither."""
    from cli.common import print_hits

    rng = np.random.default_rng(5)
    vecs = rng.standard_normal((6, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    photos = [Photo(path=f"p{i}.png", id=i + 1, caption=f"a frog {i}", source="fieldguide") for i in range(6)]
    s = Settings(data_dir=str(tmp_path), k=4, embedder=embedder)
    search = FakeSearch(photos, vecs, s, backends=FakeBackends(embedder=FakeEmbedder(DIM)))
    result = SearchEngine(search, search.backends).search(request_for("Fast", "a frog on sand", k=4))
    ranking = result.to_json()["stages"]["score"]
    print_hits(result)
    lines = capsys.readouterr().out.splitlines()
    hits = [line for line in lines if not line.startswith("note: ")]
    assert len(hits) == 4 and ranking["kind"] == "cosine"
    said = standin_scores.meaning("hash")
    if standin:
        assert ranking["standin"] == "hash" and ranking["meaning"].endswith(said)
        assert ranking["meaning"].startswith(scales.RANKINGS["cosine"]["meaning"])
        assert [line for line in lines if "stand-in" in line and line.startswith("note: ")] == [
            f"note: scores are stand-in scores, {said}"]
        assert all(f"] stand-in {h.score:.3f}  " in line for h, line in zip(result.hits, hits)), hits
    else:
        assert "standin" not in ranking and ranking["meaning"] == scales.RANKINGS["cosine"]["meaning"]
        assert not any("stand-in" in line for line in lines)
        assert all(f"] {h.score:.3f}  " in line for h, line in zip(result.hits, hits)), hits
    assert present.scale_words("similarity", result.stages)[1] == (said if standin else S.SCALES["similarity"][1])
