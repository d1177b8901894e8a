"""Search view handlers against fakes: first results at once, later stages streamed, badges, errors shown."""
from __future__ import annotations

import json
from types import SimpleNamespace

import gradio as gr
import pytest
from PIL import Image

from core.sessionlog import Label, MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine, FakeMethods
from ui.search_handlers import SearchHandlers

FORM = dict(k=5, m=2, rerank_k=10, rerank_mode="full", want_answer=False, taxon="", date_from="", date_to="",
            months=[], bbox="", license="", example=None, state=None)


def run(h, query="a frog calling", preset="Fast", **over):
    return list(h.search(query, preset, *{**FORM, **over}.values()))


@pytest.fixture()
def setup(tmp_path):
    engine = FakeEngine(tmp_path, password="hunter2")
    log = MemorySessionLog()
    methods = FakeMethods(engine)
    return engine, log, methods, SearchHandlers(engine, log, methods)


def test_fast_gives_one_update_with_rank_and_score_and_logs_without_secrets(setup):
    engine, log, methods, h = setup
    (out,) = run(h)
    gallery, status, vis, evidence, explanation, state = out
    assert len(gallery) == 5 and gallery[0][1].startswith("#1 · 0.990")
    assert "done" in status and "Search 1" in status
    assert methods.requests == []  # Fast never waits for the pipeline
    (session,) = log.sessions()
    req = log.session(session.id).requests[0]
    assert req.method == "baseline" and req.stages[0].ranking[0] == (1, 0.99)
    assert "hunter2" not in json.dumps(req.settings) and req.settings["password"] == "***"


def test_verify_streams_first_results_then_stages_then_final(setup):
    engine, log, methods, h = setup
    outs = run(h, preset="Verify")
    assert "later stages are running" in outs[0][1]
    assert [o[0][0][1].split(" · ")[2] for o in (outs[0], outs[-1])] == ["frog 1", "frog 5"]
    assert "generate finished" in outs[1][1] and outs[-1][1].endswith("done")
    assert any(len(o[2]) == 1 for o in outs[1:-1])  # the generated picture appears while streaming
    request = methods.requests[0]
    assert request.method == "visret" and request.rerank == "full" and request.m == 2
    state = outs[-1][-1]
    html, state = h.select(state, SimpleNamespace(index=0))
    assert html.count('class="ecolens-badge ') == 2 and "90% yes" in html
    assert "&lt;b&gt;green&lt;/b&gt;" in html and "<script>" not in html  # reasons and captions escaped
    assert state["selected"] == 0
    assert log.session(log.sessions()[0].id).requests[-1].method == "visret+rerank:full"


def test_failed_later_stage_keeps_first_results(tmp_path):
    engine = FakeEngine(tmp_path)
    h = SearchHandlers(engine, MemorySessionLog(), FakeMethods(engine, fail=RuntimeError("judge down")))
    with pytest.warns(UserWarning, match="judge down"):
        outs = run(h, preset="Verify")
    assert len(outs[-1][0]) == 5 and outs[-1][1].endswith("done")


def test_bad_inputs_become_gr_errors(setup, tmp_path):
    _, _, _, h = setup
    with pytest.raises(gr.Error, match="empty"):
        run(h, query="  ")
    with pytest.raises(gr.Error, match="four numbers"):
        run(h, bbox="1,2,3")
    with pytest.raises(gr.Error, match="not a date"):
        run(h, date_from="May")
    big = tmp_path / "big.png"
    Image.new("RGB", (900, 900)).save(big)
    h.settings = h.settings.__class__(data_dir=h.settings.data_dir, max_upload_mb=0.0001)
    with pytest.raises(gr.Error, match="MB"):
        run(h, example=str(big))
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(gr.Error, match="not a photo"):
        run(h, example=str(tmp_path / "notes.txt"))


def test_filters_reach_core_and_example_photo_alone_is_the_query(setup, tmp_path):
    engine, _, _, h = setup
    run(h, taxon="Rana", months=["May", "Jun"], date_from="2024-01-01", bbox="-10, 35, 30, 60")
    f = engine.search.calls[-1]["filters"]
    assert f.taxon == "Rana" and f.months == (5, 6) and f.bbox == (-10.0, 35.0, 30.0, 60.0)
    (out,) = run(h, query="", example=str(engine.search.by_id[3].path))
    assert engine.search.calls[-1]["image"] is True and out[0]


def test_more_like_this_and_refine_with_labels(setup):
    engine, log, methods, h = setup
    (out,) = run(h)
    state = out[-1]
    with pytest.warns(UserWarning):
        h.more_like_this(state)  # nothing selected yet
    _, state = h.select(state, SimpleNamespace(index=2))
    gallery, status, *_ , state = h.more_like_this(state)
    assert state["method"] == "more-like-this" and gallery
    with pytest.raises(gr.Error):
        h.refine_with_labels(state)  # more-like-this has no words to refine
    (out,) = run(h)
    with pytest.raises(gr.Error, match="Label some photos"):
        h.refine_with_labels(out[-1])
    sid = log.start_session("label")
    log.add_label(Label(session_id=sid, query="a frog calling", photo_id=4, label=1, annotator="a"))
    log.add_label(Label(session_id=sid, query="a frog calling", photo_id=7, label=0, annotator="a"))
    h.refine_with_labels(out[-1])
    req = methods.requests[-1]
    assert list(req.relevant_ids) == [4] and list(req.nonrelevant_ids) == [7]


def test_regenerate_and_drop_change_the_visret_seeds(setup):
    engine, log, methods, h = setup
    outs = run(h, preset="Visualize")
    state = outs[-1][-1]
    assert state["seeds"] == [0]
    form = ["a frog calling", "Visualize", *list(FORM.values())[:-1]]
    outs = list(h.regenerate(*form, state))
    assert methods.requests[-1].seeds == [1, 2]  # m=2 fresh seeds
    state = dict(outs[-1][-1], seeds=[1, 2], selected_vis=0)
    list(h.drop_visualization(*form, state))
    assert methods.requests[-1].seeds == [2] and methods.requests[-1].m == 1
    with pytest.warns(UserWarning, match="generated pictures"):
        list(h.drop_visualization(*form, dict(state, selected_vis=None)))
