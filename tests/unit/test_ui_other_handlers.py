"""Dialogue, compare and history handlers against fakes."""
from __future__ import annotations

import re
from types import SimpleNamespace

import gradio as gr
import pytest

from core.contracts.sessionlog import Label, RequestRecord
from core.sessions.memory_log import MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine
from ui.compare_handlers import CompareHandlers
from ui.dialogue_handlers import DialogueHandlers
from ui.history_handlers import HistoryHandlers


@pytest.fixture()
def setup(tmp_path):
    engine = FakeEngine(tmp_path)
    return engine, MemorySessionLog(), engine


def test_two_dialogue_turns_update_gallery_and_log(setup):
    engine, log, methods = setup
    h = DialogueHandlers(engine, log)
    chat, _, gallery0, caption, _, answer, st = h.start("a frog on a leaf", None)
    assert chat[-1] == {"role": "assistant", "content": "Question 1?"} and answer == ""
    _, marked, st = h.mark(st, SimpleNamespace(index=1))
    assert "#2" in marked and st["marked"] == [2]
    chat, _, gallery1, caption, *_, st = h.turn("yes", st)
    assert gallery1 != gallery0 and caption == "a frog on a leaf, yes"
    chat, _, gallery2, *_, st = h.not_sure(st)
    assert gallery2 != gallery1 and chat[-2] == {"role": "user", "content": "not sure"}
    detail = log.session(st["id"])
    assert [(t.question, t.answer) for t in detail.turns] == [("", "a frog on a leaf"),
                                                              ("Question 1?", "yes · these look right: #2"),
                                                              ("Question 2?", "not sure")]
    assert all(t.request_id for t in detail.turns) and len(detail.requests) == 3
    with pytest.raises(gr.Error, match="empty"):
        h.turn("  ", st)
    with pytest.raises(gr.Error, match="no longer open"):
        h.turn("yes", {"id": 999, "marked": [], "chat": [], "hits": []})


def test_compare_shows_ranks_side_by_side_and_overlap(setup):
    engine, log, methods = setup
    h = CompareHandlers(engine, log)
    out = h.compare("frogs", ["Fast", "Verify", "Cover"], 4)
    galleries, titles, overlap, state = out[0:8:2], out[1:8:2], out[-2], out[-1]
    assert [len(g["value"]) for g in galleries] == [4, 4, 4, 0] and titles[3] == ""
    assert [g["visible"] for g in galleries] == [True, True, True, False]
    assert "| Fast | 4 (100%) |" in overlap and "only the ranks are shown" in overlap
    assert all(re.fullmatch(r"frog \d+ · #\d|#\d covers: .+ · frog \d+", caption)  # Cover: the parts first
               for col in galleries[:3] for _, caption in col["value"])
    assert [r.method for r in engine.requests] == ["baseline", "visret", "baseline"]
    assert engine.requests[2].coverage is True and [r.label for r in engine.requests] == ["Fast", "Verify", "Cover"]
    column = h.column(state, 1)
    assert column["preset"] == "Verify" and column["scale"] == "checks" and column["stages"]["rerank"]
    assert h.column(state, 0)["scale"] == "similarity"  # Fast: to the words
    with pytest.raises(gr.Error, match="two to four"):
        h.compare("frogs", ["Fast"], 4)


def test_history_reopens_a_search_with_badges_pictures_and_labels(setup, tmp_path):
    engine, log, methods = setup
    from ui.search_handlers import SearchHandlers

    search = SearchHandlers(engine, log)
    list(search.search("frogs", "Verify", 3, 2, 10, "full", False, "", "", "", [], "", "", None, None, None))
    sid = log.sessions()[0].id
    log.add_label(Label(session_id=sid, query="frogs", photo_id=2, label=1, annotator="a|b", seconds=1.0))
    h = HistoryHandlers(engine, log)
    token = log.token(sid)
    assert h.choices()[0][1] == token and token != str(sid)  # the list offers the session by its token
    table, gallery, pictures, chat, labels, hstate = h.open(token)
    assert "frogs" in table and "checked" in table and len(gallery) == 3 and "a\\|b" in labels
    assert len(pictures) == 2 and chat == []
    assert hstate["stages"]["rerank"]["photos"] and "%" in gallery[0][1]  # the checks' scale, as when searched
    assert h.open(f" {token} ")[1] == gallery  # as a script sends a search's session_id
    assert h.open(None)[1] == []
    for other in (sid, str(sid), 12345, "yesterday", "1 OR 1=1"):  # a number is no longer a way in
        with pytest.raises(gr.Error, match="There is no session"):
            h.open(other)
    long = "frogs calling from a flooded meadow at dusk after the first warm rain of spring, seen from the bank"
    log.log_request(RequestRecord(session_id=sid, query=long, method="baseline"))  # a second search, same page
    assert f"frogs · {long}" in h.choices()[0][0]  # titled by every query, each whole


def test_history_lists_no_empty_sessions_and_reopens_dialogue_turns(setup):
    engine, log, _ = setup
    empty = log.start_session("label", "nothing happened")
    dialogue = DialogueHandlers(engine, log)
    *_, st = dialogue.start("a frog on a leaf", None)
    dialogue.turn("yes", st)
    h = HistoryHandlers(engine, log)
    assert log.token(empty) not in [sid for _, sid in h.choices()]
    table, gallery, _, chat, _, hstate = h.open(log.token(st["id"]))
    assert [m["content"] for m in chat] == ["a frog on a leaf", "Question 1?", "yes"]
    picker = h.requests_picker(hstate)
    assert picker["visible"] and len(picker["choices"]) == 2 and gallery
    first = picker["choices"][0][1]
    other, _, hstate = h.show_request(first, hstate)
    assert other and hstate["request_id"] == first


def test_history_of_a_labelling_session_shows_the_judged_photos(setup):
    engine, log, _ = setup
    sid = log.start_session("label", "frogs (ada)")
    log.add_label(Label(session_id=sid, query="frogs", photo_id=5, label=1, annotator="ada"))
    log.add_label(Label(session_id=sid, query="frogs", photo_id=6, label=0, annotator="ada"))
    _, gallery, _, _, labels, _ = HistoryHandlers(engine, log).open(log.token(sid))
    assert [c for _, c in gallery] == ["5 · relevant (ada)", "6 · not relevant (ada)"] and "ada" in labels
