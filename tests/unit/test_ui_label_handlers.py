"""Label view handlers against fakes: load (no empty session), presses that name their photo (so a fast
typist's labels land where they looked), seconds taken, progress that counts judgements not skips, undo,
next unjudged, the done state (a key at the last photo overwrites nothing), instructions per query, exports
(one INQUIRE row per query, photo and annotator, relative file names), kappa with disagreements to
adjudicate, and the scriptable label endpoint."""
from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import gradio as gr
import pytest

from core.labels import ADJUDICATED
from core.search.presets import request_for
from core.sessions.memory_log import MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine
from ui.label_handlers import LabelHandlers


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


@pytest.fixture()
def setup(tmp_path):
    engine, log, clock = FakeEngine(tmp_path), MemorySessionLog(), FakeClock()
    return engine, log, clock, LabelHandlers(engine, log, clock=clock)


def order(engine, query: str, k: int) -> list[int]:
    """The photos the engine returns for `query` (what Label loads), best first."""
    return engine.search(request_for("Fast", query, k=k)).ids


def load(h, query="a frog calling", who="ada", k=6):
    *out, instructions = h.load(query, who, k)
    return out, instructions


def press(h, st, action, photo=None, who="ada"):
    """One press as the page's queue sends it: the photo it is for (default: the one under the cursor)."""
    if photo is None:
        photo = st["items"][st["pos"]]["id"] if st["pos"] is not None else 0
    seq = st["seq"] + 1
    return h.act(who, st, SimpleNamespace(index=photo, value={"action": action, "seq": seq}))


def test_loading_opens_no_session_and_labels_land_on_the_named_photos(setup):
    engine, log, clock, h = setup
    ids = order(engine, "a frog calling", 6)
    (photo, info, progress, board, message, st), _ = load(h)
    assert not log.sessions(), "loading photos must not create an (empty) session"
    assert photo == h.photos.photo_file(ids[0])[0] and progress.startswith("0 of 6 judged")
    assert board.count("class='lb-tile") == 6 and f"data-cursor='{ids[0]}'" in board
    assert "&lt;script&gt;" in info and "<script>" not in info
    clock.now += 2.5
    *_, message, st = press(h, st, "1")
    assert "2.5 s" in message and st["items"][st["pos"]]["id"] == ids[1] and len(log.sessions()) == 1
    # two presses sent before the page showed the second photo still name their own photos
    *_, st = press(h, st, "0", photo=ids[1])
    *_, st = press(h, st, "s", photo=ids[2])
    labels = log.labels(query="a frog calling")
    assert [(lb.photo_id, lb.label) for lb in labels] == [(ids[0], 1), (ids[1], 0), (ids[2], -1)]
    assert labels[0].seconds == pytest.approx(2.5) and st["seq"] == 3
    _, _, progress, board, _, st = press(h, st, "prev")
    assert progress.startswith("2 of 6 judged") and "1 skipped: not counted" in progress
    assert st["items"][st["pos"]]["id"] == ids[2] and "is-skip" in board


def test_undo_next_unjudged_and_the_done_state(setup):
    engine, log, _, h = setup
    ids = order(engine, "a frog calling", 3)
    (*_, st), _ = load(h, k=3)
    *_, st = press(h, st, "1")
    *_, st = press(h, st, "1")
    *_, message, st = press(h, st, "undo")
    assert "Undone: photo 2" in message and st["items"][st["pos"]]["id"] == ids[1]
    assert [lb.photo_id for lb in log.labels(query="a frog calling")] == [ids[0]]
    *_, message, st = press(h, st, "undo")
    assert log.labels(query="a frog calling") == [] and "not judged any more" in message
    assert "Nothing to undo" in press(h, st, "undo")[4]
    *_, st = press(h, st, "s")  # photo 1 skipped: the cursor goes on to photo 2
    *_, st = press(h, st, "1", photo=ids[1])
    *_, st = press(h, st, "0", photo=ids[2])  # the last photo: the cursor wraps to the skipped one
    assert st["items"][st["pos"]]["id"] == ids[0]
    photo, info, progress, board, _, st = press(h, st, "1")
    assert st["pos"] is None and photo is None and progress.startswith("**All 3 photos judged")
    assert "data-cursor=''" in board and "Done: every photo is judged" in info
    # a key pressed now (or a queued one naming no photo) overwrites nothing
    before = len(log.labels(query="a frog calling"))
    *_, message, st = press(h, st, "0")
    assert "Every photo is judged" in message and len(log.labels(query="a frog calling")) == before
    *_, message, st = press(h, st, "unjudged")
    assert "No unjudged photo" in message
    *_, st = press(h, st, "goto", photo=ids[1])  # a click on a photo picks it again: now it may be changed
    *_, st = press(h, st, "0")
    assert log.labels(query="a frog calling")[-1].photo_id == ids[1]


def test_resume_instructions_and_a_missing_name(setup):
    engine, log, _, h = setup
    (*_, st), instructions = load(h, k=4)
    assert instructions == ""
    assert h.save_instructions("relevant only if the frog calls", st).startswith("Instructions saved")
    *_, st = press(h, st, "1")
    (_, _, progress, *_, st2), instructions = load(h, k=4)
    assert progress.startswith("1 of 4 judged") and instructions == "relevant only if the frog calls"
    assert st2["items"][st2["pos"]]["id"] != st["items"][0]["id"]  # resumes at the first photo not judged
    *_, message, _ = press(h, st2, "1", who="  ")
    assert "annotator name is empty" in message  # said, not raised: the page's queue goes on
    with pytest.raises(gr.Error):
        h.load("  ", "ada", 3)


def test_exports_one_inquire_row_per_query_photo_and_annotator_with_relative_names(setup):
    engine, log, clock, h = setup
    (*_, a), _ = load(h, "frogs", "ada", 4)
    (*_, b), _ = load(h, "frogs", "bob", 4)
    for value in ("1", "0", "1", "1"):
        *_, a = press(h, a, value)
    *_, a = press(h, a, "goto", photo=a["items"][1]["id"])
    *_, a = press(h, a, "1")  # ada changes her mind about photo 2
    for value in ("1", "0", "0", "1"):
        *_, b = press(h, b, value, who="bob")
    rows = list(csv.DictReader(open(h.export("csv", "", "", a))))
    # one row per photo and annotator: ada's second word on photo 2 replaces her first
    assert len(rows) == 8 and {r["annotator"] for r in rows} == {"ada", "bob"}
    assert len({(r["photo_id"], r["annotator"]) for r in rows}) == 8
    ada2 = [r for r in rows if r["annotator"] == "ada" and r["photo_id"] == str(a["items"][1]["id"])]
    assert [(r["label"], r["judgement"]) for r in ada2] == [("1", "relevant")]
    presses = list(csv.DictReader(open(h.export("keypresses", "", "", a))))
    assert len(presses) == 9  # every key press, in order: the changed mind is two rows
    assert [r["label"] for r in presses if r["photo_id"] == str(a["items"][1]["id"]) and r["annotator"] == "ada"] \
        == ["0", "1"]
    assert len(open(h.export("jsonl", "frogs", "bob")).read().splitlines()) == 4  # one annotator, by query
    rerank = list(csv.DictReader(open(h.export("inquire-rerank", "frogs"))))
    assert len(rerank) == 8 and len({(r["query"], r["inat24_file_name"], r["annotator"]) for r in rerank}) == 8
    # these photos have no iNat24 id: the column is empty, never EcoLens's own row id
    assert {r["inat24_image_id"] for r in rerank} == {""}
    names = {hit["id"]: engine.corpus.photos([hit["id"]])[0].path.rsplit("/", 1)[1] for hit in a["items"]}
    mine = {r["inat24_file_name"]: r["relevant"] for r in rerank if r["annotator"] == "ada"}
    assert mine[names[a["items"][1]["id"]]] == "1"  # her latest word, once
    assert all(not r["inat24_file_name"].startswith("/") and r["inat24_file_name"].endswith(".png")
               for r in rerank)
    scores = {names[hit["id"]]: hit["score"] for hit in a["items"]}
    row = next(r for r in list(csv.DictReader(open(h.export("inquire-rerank", "", "", a)))))
    assert float(row["clip_score"]) == pytest.approx(scores[row["inat24_file_name"]])
    assert [e.format for e in log.exports()] == ["csv", "keypresses", "jsonl", "inquire-rerank", "inquire-rerank"]
    with pytest.raises(gr.Error, match="No labels"):
        h.export("csv", "toads", "")
    with pytest.raises(gr.Error, match="No query"):
        h.export("csv", "", "", None)
    json.dumps([e.path for e in log.exports()])


def test_kappa_lists_disagreements_to_adjudicate(setup):
    engine, log, _, h = setup
    (*_, a), _ = load(h, "frogs", "ada", 4)
    (*_, b), _ = load(h, "frogs", "bob", 4)
    for value in ("1", "0", "1", "1"):
        *_, a = press(h, a, value)
    for value in ("1", "0", "0", "1"):
        *_, b = press(h, b, value, who="bob")
    table, gallery, note, a = h.kappa(a)
    assert "| ada | bob | 4 | 75% | 0.500 |" in table and len(gallery) == 1 and "disagree" in note
    third = a["items"][2]["id"]
    assert gallery[0][1] == f"photo {third} · ada: relevant, bob: not relevant · final word: not given yet"
    with pytest.raises(gr.Error, match="Click a photo"):
        h.adjudicate(1, "cal", a)
    a = h.pick(a, SimpleNamespace(index=0))
    table, gallery, message, a = h.adjudicate(0, "cal", a)
    assert gallery[0][1].endswith("final word: not relevant") and f"photo {third} is not relevant" in message
    assert [lb.annotator for lb in log.labels(query="frogs")][-1] == ADJUDICATED
    assert "| ada | bob | 4 |" in table  # the final word is not a third annotator in kappa


def test_scriptable_label_endpoint(setup):
    _, log, _, h = setup
    first = h.label_photo("frogs", 3, 1, "script", 1.5)
    second = h.label_photo("frogs", 4, 0, "script")
    labels = log.labels(query="frogs")
    assert [lb.id for lb in labels] == [first, second] and labels[0].session_id == labels[1].session_id


def test_one_annotator_however_the_name_is_typed_and_exports_without_formulas(setup):
    """"Renée" typed composed, decomposed and in capitals is one annotator: her labels resume, her export
    filter finds them all, kappa sees one person; a name or query that a spreadsheet would run as a formula
    reaches the CSV neutralised (JSONL keeps it raw)."""
    import unicodedata

    _, log, _, h = setup
    decomposed = unicodedata.normalize("NFD", "Renée")
    (*_, a), _ = load(h, "frogs", "Renée", 4)
    *_, a = press(h, a, "1", who="Renée")
    (*_, a2), _ = load(h, "frogs", decomposed, 4)
    assert a2["done"] == a["done"]  # her earlier label resumes under the other spelling
    *_, a2 = press(h, a2, "0", photo=a2["items"][1]["id"], who=decomposed)
    assert {lb.annotator for lb in log.labels(query="frogs")} == {"Renée"}  # stored NFC
    assert len(open(h.export("jsonl", "frogs", "RENÉE")).read().splitlines()) == 2
    h.label_photo("=HYPERLINK(\"http://x\")", 3, 1, "@evil")
    [row] = list(csv.DictReader(open(h.export("csv", "=HYPERLINK(\"http://x\")", ""), newline="", encoding="utf-8")))
    assert (row["query"], row["annotator"]) == ("'=HYPERLINK(\"http://x\")", "'@evil")
    raw = json.loads(open(h.export("jsonl", "=HYPERLINK(\"http://x\")", "")).readline())
    assert (raw["query"], raw["annotator"]) == ("=HYPERLINK(\"http://x\")", "@evil")
