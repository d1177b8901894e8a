"""One undecided band (setting undecided_band): the verdict of a check is decided once, in core, and what
`search --json` prints is what the page's badge and the API show."""
from __future__ import annotations

import json

import numpy as np

from core.config import Settings
from core.contracts.records import Photo
from core.contracts.search_request import SearchRequest
from core.methods.confidence import verdict
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge, FakeSearch
from ui.badges import badges_html
from ui.present import results_json

DIM = 8
P = {1: 0.5, 2: 0.58, 3: 0.9, 4: 0.1}  # coin flip, inside the band, yes, no


def _search(tmp_path, band: float):
    photos = [Photo(path=f"p{i}.png", id=i, caption=f"a frog {i}") for i in P]
    vecs = (np.eye(DIM)[[i % DIM for i in P]] + 0.01).astype(np.float32)
    judge = FakeJudge(lambda r: P[r.photo.id])
    s = Settings(data_dir=str(tmp_path), k=4, rerank_k=4, undecided_band=band)
    search = FakeSearch(photos, vecs, s, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge))
    return SearchEngine(search, search.backends).search(SearchRequest("a frog", rerank="direct"))


def _badge_word(entry) -> str:
    html = badges_html([entry])
    return html[html.index("<b>") + 3:html.index("</b>")].replace("&#x27;", "'")


def test_the_verdict_rule():
    assert [verdict(p, 0.1) for p in (0.5, 0.6, 0.4, 0.61, 0.39)] == ["can't tell"] * 3 + ["yes", "no"]
    assert verdict(None, 0.1) == "not checked" and verdict(0.5, 0.0) == "can't tell" and verdict(0.51, 0.0) == "yes"


def test_search_json_the_badge_and_the_api_say_the_same(tmp_path):
    res = _search(tmp_path, 0.1)
    printed = json.loads(json.dumps(res.to_json(), default=str))  # what `search --json` prints
    said = {p["id"]: p["answers"][0]["answer"] for p in printed["stages"]["rerank"]["photos"]}
    assert said == {1: "can't tell", 2: "can't tell", 3: "yes", 4: "no"}
    for p in printed["stages"]["rerank"]["photos"]:
        assert _badge_word(p["answers"][0]) == said[p["id"]]
    api = results_json({"hits": [h.to_json() for h in res.hits], "stages": printed["stages"]}, [], "done")
    assert {r["id"]: r["badges"][0]["answer"] for r in api["results"]} == said
    assert res.stages["rerank"]["passed"] == 1  # only the yes passes; a can't tell is not a yes


def test_the_band_is_the_setting(tmp_path):
    res = _search(tmp_path, 0.05)
    said = {p["id"]: p["answers"][0]["answer"] for p in res.stages["rerank"]["photos"]}
    assert said[2] == "yes" and said[1] == "can't tell"


def test_history_entries_saved_before_verdicts_are_read_with_the_default_band():
    old = {"question": "q", "answer": "yes", "p_yes": 0.55, "checked": True, "reason": "r"}  # no judge_answer
    assert _badge_word(old) == "can't tell"
    assert results_json({"hits": [{"id": 1, "rank": 1}], "stages": {"rerank": {"photos": [
        {"id": 1, "answers": [old]}]}}}, [], "done")["results"][0]["badges"][0]["answer"] == "can't tell"


def test_the_simulated_user_is_not_sure_inside_the_band(tmp_path):
    """PlugIR's simulated user reads the judge as the page does: a coin flip is "not sure", not a yes."""
    from core.evaluation.items import EvalItem
    from core.evaluation.simulated_user import plugir_ranks

    photos = [Photo(path=f"p{i}.png", id=i, caption=f"a small bird {i}") for i in P]
    vecs = (np.eye(DIM)[[i % DIM for i in P]] + 0.01).astype(np.float32)
    said = []

    search = FakeSearch(photos, vecs, Settings(data_dir=str(tmp_path), k=4),
                       backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=FakeJudge(lambda r: 0.55)))
    engine = SearchEngine(search, search.backends)
    key_of = {f"k{i}": i for i in P}
    real = engine.dialogue

    def dialogue(*a, **kw):
        session = real(*a, **kw)
        answer = session.answer
        session.answer = lambda text="", **k: (said.append(text), answer(text, **k))[1]
        return session

    engine.dialogue = dialogue
    plugir_ranks(engine, EvalItem("q", "a small bird", pool=list(key_of), relevant={"k3": 1}), 2, key_of)
    assert said and all(s == "not sure" for s in said)
