"""Label view handlers against fakes: load, label as made with seconds taken, move, resume, export, kappa,
and the scriptable label endpoint."""
from __future__ import annotations

import csv
import json

import gradio as gr
import pytest

from core.presets import request_for
from core.sessionlog import MemorySessionLog
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


def test_label_saves_as_made_with_seconds_and_moves_on(setup):
    engine, log, clock, h = setup
    first, second, third = order(engine, "a frog calling", 6)[:3]
    photo, info, progress, grid, message, st = h.load("a frog calling", "ada", 6)
    assert photo == h.photos.photo_file(first)[0] and progress.startswith("0 of 6") and len(grid) == 6
    assert "&lt;script&gt;" in info and "<script>" not in info
    clock.now += 2.5
    *_, message, st = h.label(1, "ada", st)
    assert "2.5 s" in message and st["pos"] == 1
    clock.now += 1.0
    *_, st = h.label(0, "ada", st)
    *_, st = h.label(-1, "ada", st)
    *_, st = h.move(-1, st)
    photo, _, progress, grid, _, st = h.label(1, "ada", st)  # relabel the skipped one
    labels = log.labels(query="a frog calling")
    assert [(lb.photo_id, lb.label) for lb in labels] == [(first, 1), (second, 0), (third, -1), (third, 1)]
    assert labels[0].seconds == pytest.approx(2.5) and labels[1].seconds == pytest.approx(1.0)
    assert progress.startswith("3 of 6 labelled (2 relevant)") and "relevant" in grid[0][1]
    *_, st = h.jump(st, 5)
    assert st["pos"] == 5
    # a second load by the same annotator resumes what was already said
    *_, progress, _, _, st2 = h.load("a frog calling", "ada", 6)
    assert progress.startswith("3 of 6")


def test_label_needs_photos_and_a_name(setup):
    _, _, _, h = setup
    with pytest.raises(gr.Error):
        h.label(1, "ada", None)
    *_, st = h.load("a frog calling", "", 3)
    with pytest.raises(gr.Error, match="annotator"):
        h.label(1, "  ", st)


def test_exports_and_agreement(setup):
    engine, log, clock, h = setup
    *_, a = h.load("frogs", "ada", 4)
    *_, b = h.load("frogs", "bob", 4)
    for value in (1, 0, 1, 1):
        *_, a = h.label(value, "ada", a)
    for value in (1, 0, 0, 1):
        *_, b = h.label(value, "bob", b)
    path = h.export("csv", a)
    rows = list(csv.DictReader(open(path)))
    assert len(rows) == 8 and {r["annotator"] for r in rows} == {"ada", "bob"}
    assert len(open(h.export("jsonl", a)).read().splitlines()) == 8
    rerank = list(csv.DictReader(open(h.export("inquire-rerank", a))))
    scores = {hit["id"]: hit["score"] for hit in a["items"]}
    row = rerank[0]
    assert row["inat24_species_name"] == f"Rana {row['inat24_image_id']}"
    assert float(row["clip_score"]) == pytest.approx(scores[int(row["inat24_image_id"])])
    assert [e.format for e in log.exports()] == ["csv", "jsonl", "inquire-rerank"]
    md = h.kappa(a)
    assert "| ada | bob | 4 | 75% | 0.500 |" in md
    with pytest.raises(gr.Error):
        h.export("csv", None)
    json.dumps([e.path for e in log.exports()])


def test_scriptable_label_endpoint(setup):
    _, log, _, h = setup
    first = h.label_photo("frogs", 3, 1, "script", 1.5)
    second = h.label_photo("frogs", 4, 0, "script")
    labels = log.labels(query="frogs")
    assert [lb.id for lb in labels] == [first, second] and labels[0].session_id == labels[1].session_id
