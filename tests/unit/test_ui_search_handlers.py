"""Search view handlers on the real engine (in-memory corpus, fake backends): what the page shows is the
engine's final ranking, later stages stream in, badges, errors shown, cancellation by a newer search."""
from __future__ import annotations

import json
import re
import threading
from types import SimpleNamespace

import gradio as gr
import pytest
from PIL import Image

from core.contracts.errors import BackendError
from core.search.presets import request_for
from core.contracts.sessionlog import Label
from core.sessions.memory_log import MemorySessionLog
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge
from tests.unit.test_ui_fakes import DIM, FakeEngine
from ui import strings as S
from ui.search_handlers import SearchHandlers

FORM = dict(k=5, m=2, rerank_k=10, rerank_mode="full", want_answer=False, taxon="", date_from="", date_to="",
            months=[], bbox="", license="", example=None, state=None)


def run(h, query="a frog calling", preset="Fast", request=None, **over):
    return list(h.search(query, preset, *{**FORM, **over}.values(), request=request))


@pytest.fixture()
def setup(tmp_path):
    engine = FakeEngine(tmp_path, password="hunter2")
    log = MemorySessionLog()
    return engine, log, SearchHandlers(engine, log)


def shown_ids(out) -> list[int]:
    return [h["id"] for h in out[-1]["hits"]]


def items(out) -> list:
    """The gallery items of one update."""
    return out[0]


def test_fast_gives_one_update_with_rank_and_score_and_logs_without_secrets(setup):
    engine, log, h = setup
    (out,) = run(h)
    gallery, status, notices, scale, vis, evidence, explanation, details, result, state = out
    assert len(gallery) == 5 and gallery[0][1].startswith("frog ")
    assert " · #1 · 0." in gallery[0][1] and scale.startswith("Scores: similarity, that is how close each photo")
    assert [r["id"] for r in result["results"]] == shown_ids(out) and "path" not in result["results"][0]
    assert result["score"]["scale"] == "similarity" and result["session_id"] == log.token(state["session_id"])
    assert status.startswith("Search 1 · 5 photos · done in ") and status.endswith(" s")
    assert result["status"] == status and "the whole search" in details
    (req,) = engine.requests
    assert req.label == "Fast" and req.method == "baseline"
    (session,) = log.sessions()
    logged = log.session(session.id).requests[0]
    assert logged.method == "baseline" and [i for i, _ in logged.stages[0].ranking] == shown_ids(out)
    assert "hunter2" not in json.dumps(logged.settings) and logged.settings["password"] == "***"


@pytest.mark.parametrize("preset", ["Fast", "Visualize", "Verify", "Cover"])
def test_every_preset_shows_the_engines_final_ranking(setup, preset):
    engine, _, h = setup
    outs = run(h, preset=preset)
    direct = engine.search(request_for(preset, "a frog calling", k=5, m=2, rerank_k=10, rerank_mode="full"))
    assert shown_ids(outs[-1]) == direct.ids
    assert [g[0] for g in items(outs[-1])] == h.photos.files(direct.ids)[0]  # the served copies, in that order


def test_verify_streams_preview_then_pictures_then_checks_then_final(setup):
    engine, log, h = setup
    outs = run(h, preset="Verify")
    assert outs[0][1] == "Search 1 · 5 photos so far · still working…"
    assert any(len(o[4]) >= 1 for o in outs[1:-1])  # a generated picture appears while streaming
    assert any("checking the photos… (checked 10 of 10)" in o[1] for o in outs)
    # progress updates leave the results as they are on the page (no photo files sent again): only the
    # preview/first results and the end carry the gallery
    progress = [o for o in outs[1:-1] if o[0] == gr.skip()]
    assert progress and all(o[8] == gr.skip() and o[1] for o in progress)
    assert all(len(o[0]) == 5 for o in outs if o[0] != gr.skip())
    questions = len(outs[-1][-1]["stages"]["rerank"]["subquestions"])
    assert re.fullmatch(rf"Search 1 · 5 photos found with 2 drawings · 10 checked with {questions} yes/no "
                        r"questions · done in \d\.\d\d s", outs[-1][1]), outs[-1][1]
    details = outs[-1][7]  # only the steps that ran, in seconds
    assert "drawing the pictures: " in details and "checking each photo: " in details and "ms" not in details
    assert "splitting" not in details and "the whole search: " in details
    request = engine.requests[0]
    assert request.method == "visret" and request.rerank == "full" and request.m == 2
    state = outs[-1][-1]
    html, picked = h.select(state, SimpleNamespace(index=0))
    assert picked == state["hits"][0]["id"]
    n_questions = len(state["stages"]["rerank"]["subquestions"])
    assert html.count('class="ecolens-badge ') == n_questions and "50% sure it is yes" in html
    assert "badge-unsure" in html and "can&#x27;t tell" in html  # a 50% check is neither yes nor no
    assert "Checks passed: 50%" in html and outs[-1][3].startswith("Scores: checks passed, that is")
    assert outs[-1][8]["results"][0]["badges"][0]["p_yes"] == pytest.approx(0.5)
    assert "<script>" not in html and "&lt;script&gt;" in html  # captions escaped
    assert log.session(log.sessions()[0].id).requests[-1].method == "visret+rerank:full"


@pytest.mark.parametrize("error,reason", [
    (RuntimeError("image encoder crashed"), "A later step failed (RuntimeError, an error inside EcoLens"),
    (BackendError("the picture maker failed: out of memory", "use a smaller model"),
     "picture maker failed: out of memory")])
def test_a_failing_stage_keeps_the_first_results_and_says_why(tmp_path, caplog, error, reason):
    """Issue 36, item 4: the reason is in the notices (the page's and the API's), the session log and
    ecolens.log, not only in a toast."""
    class BrokenImages(FakeEmbedder):
        def embed_images(self, images):
            raise error

    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=BrokenImages(DIM)))
    log = MemorySessionLog()
    h = SearchHandlers(engine, log)
    with pytest.warns(UserWarning, match=re.escape(reason[:30])), caplog.at_level("WARNING", "ui.search_handlers"):
        outs = run(h, preset="Visualize")
    assert len(items(outs[-1])) == 5 and outs[-1][1].endswith(S.STOPPED_EARLY)
    assert reason in outs[-1][2]  # the page's notices
    assert any(reason in n for n in outs[-1][8]["notices"]), outs[-1][8]["notices"]  # the API's
    assert any("stopped after its first results" in r.message and reason.split(" (")[0][:20] in r.message
               or "RuntimeError" in r.message for r in caplog.records), caplog.text  # ecolens.log
    recorded = log.session(log.sessions()[0].id).requests[-1].stages[-1].artefacts["notices"]
    assert any(reason in n for n in recorded), recorded  # the session log


def test_a_hung_photo_checker_is_waited_for_on_screen_until_the_time_limit_then_said(tmp_path):
    """The page's status line counts the wait for the remote photo checker by its host while it hangs; at
    Verify's time limit the search ends with its photos in the order before the checks and a notice in the
    page's words."""
    release = threading.Event()

    class HungJudge(FakeJudge):
        def ask(self, request):
            release.wait()
            return super().ask(request)

    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=HungJudge()),
                        judge="openai", openai_base_url="http://judge.example.org/v1", deadline_verify_s=2.5)
    try:
        outs = run(SearchHandlers(engine, MemorySessionLog()), preset="Verify")
    finally:
        release.set()
    waits = [o[1] for o in outs if "waiting for the photo checker at judge.example.org" in o[1]]
    assert waits and re.search(r", \d(\.\d)? s$", waits[-1]), [o[1] for o in outs]
    final = outs[-1]
    assert "time limit of 2.5 s" in final[2] and "whoever runs EcoLens can let searches wait longer" in final[2]
    assert "photo checker at http://judge.example.org/v1" in final[2] and "first-stage" not in final[2]
    assert len(items(final)) == 5


def test_no_photo_passing_the_checks_is_said_above_the_gallery(tmp_path):
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=FakeJudge(lambda r: 0.1)))
    outs = run(SearchHandlers(engine, MemorySessionLog()), preset="Verify")
    assert "No photo passed every check" in outs[-1][2]


def test_bad_inputs_become_gr_errors(setup, tmp_path):
    _, _, h = setup
    with pytest.raises(gr.Error, match="empty"):
        run(h, query="  ")
    with pytest.raises(gr.Error, match="four numbers"):
        run(h, bbox="1,2,3")
    with pytest.raises(gr.Error, match="not a date"):
        run(h, date_from="May")
    with pytest.raises(gr.Error, match="outside 1 to 1000"):
        run(h, k=1_000_000_000)
    big = tmp_path / "big.png"
    Image.new("RGB", (900, 900)).save(big)
    h.settings = h.settings.model_copy(update={"max_upload_mb": 0.0001})  # below the allowed range: unchecked copy
    with pytest.raises(gr.Error, match="MB"):
        run(h, example=str(big))
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(gr.Error, match="not a photo"):
        run(h, example=str(tmp_path / "notes.txt"))


def test_filters_reach_core_and_example_photo_alone_is_the_query(setup):
    engine, _, h = setup
    run(h, taxon="Rana", months=["May", "Jun"], date_from="2024-01-01", bbox="-10, 35, 30, 60")
    f = engine.requests[-1].filters
    assert f.taxon == "Rana" and f.months == (5, 6) and f.bbox == (-10.0, 35.0, 30.0, 60.0)
    (out,) = run(h, query="", example=engine.corpus.photos([3])[0].path)
    req = engine.requests[-1]
    assert req.query == "" and len(req.examples) == 1 and items(out)
    assert out[4][0][1] == "your example photo"  # the user's own photo leads the pictures strip


def test_more_like_this_and_refine_with_labels(setup):
    engine, log, h = setup
    (out,) = run(h)
    state = out[-1]
    with pytest.warns(UserWarning):
        h.more_like_this(None, state)  # nothing selected yet
    _, picked = h.select(state, SimpleNamespace(index=2))
    assert picked == state["hits"][2]["id"]
    *_, result, state = h.more_like_this(picked, state)
    assert tuple(engine.requests[-1].example_ids) == (picked,) and result["results"]
    assert state["hits"][0]["id"] == picked  # the photo itself is the most similar one
    assert log.session(state["session_id"]).requests[-1].method == "baseline+more-like-this"
    # the search without words is named by its photo: on the page, in marks (the photo view's query), history
    assert re.fullmatch(rf"more like photo {picked} \(.+\)", state["query"]) and state["like"]
    assert log.session(state["session_id"]).requests[-1].query == state["query"]
    assert state["query"] in log.sessions()[0].named()
    with pytest.raises(gr.Error, match="not a photo number"):
        h.more_like_this("twelve", state)
    with pytest.raises(gr.Error):
        h.refine_with_labels(state)  # more-like-this has no words to refine
    (out,) = run(h)
    with pytest.raises(gr.Error, match="Label some photos"):
        h.refine_with_labels(out[-1])
    sid = log.start_session("label")
    log.add_label(Label(session_id=sid, query="a frog calling", photo_id=4, label=1, annotator="a"))
    log.add_label(Label(session_id=sid, query="a frog calling", photo_id=7, label=0, annotator="a"))
    *_, state = h.refine_with_labels(out[-1])
    req = engine.requests[-1]
    assert list(req.relevant_ids) == [4] and list(req.nonrelevant_ids) == [7]
    assert log.session(state["session_id"]).requests[-1].method == "baseline+feedback"  # its real method


def test_a_selection_made_while_a_search_streams_is_kept(tmp_path):
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=FakeJudge(delay=0.05)),
                        judge_concurrency=1)
    h = SearchHandlers(engine, MemorySessionLog())
    page = SimpleNamespace(session_hash="page-9")
    stream = h.search("a frog calling", "Verify", *{**FORM, "k": 12, "rerank_k": 12}.values(), request=page)
    first = next(stream)
    picked = first[-1]["hits"][3]["id"]
    html, _ = h.select(first[-1], SimpleNamespace(index=3), page)  # clicked while the checks still run
    assert f"<td>{picked}</td>" in html
    outs = list(stream)
    final = outs[-1]
    assert f"<td>{picked}</td>" in final[6] and 'class="ecolens-badge ' in final[6]  # same photo, now with badges
    # the gallery's highlight goes with the photo to its place in the final ranking (the browser would keep it
    # on the fourth place), sent as a component because a plain list cannot carry it
    place = [h["id"] for h in final[-1]["hits"]].index(picked)
    assert isinstance(final[0], gr.Gallery) and final[0].selected_index == place
    assert len(final[0].value) == len(final[-1]["hits"])
    (fresh,) = run(h, preset="Fast", request=page)
    assert fresh[6] == "Click a photo to see it large, with why it was returned."  # a new search starts afresh
    assert isinstance(fresh[0], gr.Gallery) and fresh[0].selected_index is None  # with no photo highlighted
    (later,) = run(h, preset="Fast", request=page)
    assert isinstance(later[0], list)  # a page with nothing highlighted gets the plain list, as scripts do


def test_taxon_choices_and_the_species_a_query_names(setup):
    engine, _, h = setup
    choices = h.form.taxon_choices()["choices"]
    assert ("frog 3 (common name)", "frog 3") in choices and "" not in [v for _, v in choices]  # empty: any
    ranks = [label.rsplit(" (", 1)[1] for label, _ in choices]
    assert ranks == sorted(ranks, key=["species)", "common name)"].index)  # by rank, then by name
    species = [v for label, v in choices if label.endswith("(species)")]
    assert species == sorted(species, key=str.casefold)
    button, name = h.form.suggest_taxon("is Rana 3 calling?", "")
    assert button["visible"] and name == "Rana 3" and "Only show Rana 3" in button["value"]
    assert h.form.suggest_taxon("is Rana 3 calling?", "rana 3")[0]["visible"] is False  # already the filter
    assert h.form.suggest_taxon("a frog calling", "")[0]["visible"] is False


def test_regenerate_and_drop_change_the_visret_seeds(setup):
    engine, _, h = setup
    outs = run(h, preset="Visualize")
    state = outs[-1][-1]
    assert state["seeds"] == [0, 1]
    form = ["a frog calling", "Visualize", *list(FORM.values())[:-1]]
    outs = list(h.regenerate(*form, state))
    assert engine.requests[-1].seeds == [2, 3]  # m=2 fresh seeds
    state = dict(outs[-1][-1], selected_vis=0)
    list(h.drop_visualization(*form, state))
    assert engine.requests[-1].seeds == [3] and engine.requests[-1].m == 1
    with pytest.warns(UserWarning, match="drawn pictures"):
        list(h.drop_visualization(*form, dict(state, selected_vis=None)))


def test_a_newer_search_from_the_same_page_cancels_the_running_one(tmp_path):
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=FakeJudge(delay=0.3)),
                        judge_concurrency=1)
    log = MemorySessionLog()
    h = SearchHandlers(engine, log)
    page = SimpleNamespace(session_hash="page-1")
    slow = h.search("a frog calling", "Verify", *{**FORM, "rerank_k": 40}.values(), request=page)
    first = next(slow)  # the preview is on screen; judging has started in the background
    assert "still working" in first[1]
    rest: list = []
    worker = threading.Thread(target=lambda: rest.extend(slow))
    worker.start()
    (fast,) = run(h, preset="Fast", request=page)
    worker.join(timeout=10)
    assert not worker.is_alive(), "the cancelled search should end promptly"
    assert "previous search was stopped" in fast[2]
    assert all("checked 40 of 40" not in o[1] for o in rest)  # it never finished judging
    notes = [r.stages[0].artefacts.get("notices") for s in log.sessions() for r in log.session(s.id).requests]
    assert ["cancelled: a newer search replaced it"] in notes
    assert sum(1 for call in engine.backends.raw.judge.calls) < 40 * 3  # queued judge calls were dropped


def test_stop_cancels_the_running_search(tmp_path):
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=FakeJudge(delay=0.3)),
                        judge_concurrency=1)
    h = SearchHandlers(engine, MemorySessionLog())
    page = SimpleNamespace(session_hash="page-2")
    slow = h.search("a frog calling", "Verify", *{**FORM, "rerank_k": 40}.values(), request=page)
    next(slow)
    assert h.stop(page) == "Search stopped."
    outs = list(slow)
    assert "stopped (you pressed Stop)" in outs[-1][1]
    assert h.stop(page) == "No search is running."


def test_a_search_the_page_stopped_listening_to_is_cancelled_and_recorded(tmp_path):
    """Gradio closes the generator (the page went away mid-search): the engine's work stops and the session log
    keeps the search with why, just as for Stop."""
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=FakeJudge(delay=0.3)),
                        judge_concurrency=1)
    log = MemorySessionLog()
    h = SearchHandlers(engine, log)
    slow = h.search("a frog calling", "Verify", *{**FORM, "rerank_k": 40}.values(),
                    request=SimpleNamespace(session_hash="p"))
    next(slow)
    slow.close()
    notes = [r.stages[0].artefacts.get("notices") for s in log.sessions() for r in log.session(s.id).requests]
    assert ["cancelled: nobody is waiting for the results any more"] in notes
    assert sum(1 for call in engine.backends.raw.judge.calls) < 40 * 3
