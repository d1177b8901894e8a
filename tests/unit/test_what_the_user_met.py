"""What a user met around the exports and the doctor (issue 35, item 9): a Darwin Core export of nothing
marked says nothing is marked (not "unknown format"), INQUIRE exports carry the dataset's photo ids only,
the doctor's captioner row names the captioner's own setting, and fix lines keep names whole."""
from __future__ import annotations

import csv
from types import SimpleNamespace

import gradio as gr
import pytest

from cli.doctor import wrap
from core.contracts.records import Photo
from core.contracts.sessionlog import Label
from core.doctor import GENERIC_FIX, setting_of
from core.labels import export_labels
from core.sessions.memory_log import MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine
from ui.marks import FORMATS, MarkHandlers


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_an_export_of_nothing_marked_says_nothing_is_marked_in_every_format(tmp_path, fmt):
    h = MarkHandlers(FakeEngine(tmp_path), MemorySessionLog())
    with pytest.raises(gr.Error, match="No photo is marked"):
        h.export(fmt, [])
    with pytest.raises(gr.Error, match="Unknown export format 'xls'"):
        h.export("xls", [{"id": 1, "query": "q"}])


def test_a_marked_photo_goes_out_as_darwin_core(tmp_path):
    engine = FakeEngine(tmp_path)
    h = MarkHandlers(engine, MemorySessionLog())
    out = h.export("dwc", [{"id": 1, "query": "a frog", "preset": "Fast"}])
    assert out.endswith(".dwc.zip")


def test_inquire_rows_carry_the_datasets_ids_and_never_ecolens_own(tmp_path):
    photos = {7: Photo(path=str(tmp_path / "a.jpg"), id=7, extra={"inat24_image_id": "4711"}),
              8: Photo(path=str(tmp_path / "b.jpg"), id=8)}
    labels = [Label(session_id=1, query="q", photo_id=pid, label=1, annotator="ada") for pid in (7, 8)]
    export_labels(labels, "inquire-rerank", tmp_path / "r.csv", photos=photos, roots=[tmp_path])
    rows = {r["inat24_file_name"]: r["inat24_image_id"] for r in csv.DictReader((tmp_path / "r.csv").open())}
    assert rows == {"a.jpg": "4711", "b.jpg": ""}


@pytest.mark.parametrize("kind, given, shown", [
    ("captioner", {"captioner": "openai", "judge_model": "SmolVLM-256M"}, "openai (judge_model=SmolVLM-256M)"),
    ("captioner", {"captioner": "metadata", "judge_model": "x"}, "metadata"),
    ("captioner", {"captioner": "transformers:HuggingFaceTB/SmolVLM-256M-Instruct", "judge_model": ""},
     "transformers:HuggingFaceTB/SmolVLM-256M-Instruct"),
    ("llm", {"llm": "openai", "llm_model": "SmolLM2-360M"}, "openai (llm_model=SmolLM2-360M)"),
    ("judge", {"judge": "openai", "judge_model": ""}, "openai"),
])
def test_each_row_names_its_own_setting(kind, given, shown):
    assert setting_of(SimpleNamespace(**given), kind) == shown
    assert "captioner=" in GENERIC_FIX["captioner"]


def test_fix_lines_break_only_at_spaces_so_names_can_be_copied():
    name = "open_clip:ViT-B-32/laion2b_s34b_b79k"
    text = f"use trained weights: embedder={name} or embedder=transformers:HuggingFaceTB/SmolVLM-256M-Instruct"
    lines = wrap(text, 30)
    assert len(lines) > 2 and all(len(line) <= 30 or " " not in line for line in lines)
    assert f"embedder={name}" in lines and " ".join(lines) == text
    assert wrap("", 30) == [""]
