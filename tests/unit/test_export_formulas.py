"""CSV exports never hand a spreadsheet a formula (OWASP's CSV-injection rule): text cells that begin with
=, +, -, @, a tab or a carriage return get a leading apostrophe in every CSV export (labels, the
INQUIRE-Rerank columns, marked photos); numbers and number-only text are written unchanged; JSONL stays raw."""
from __future__ import annotations

import csv
import json
from datetime import date

import pytest

from core.contracts.records import Photo
from core.contracts.sessionlog import Label
from core.exports import export_marks, spreadsheet_safe
from core.labels import export_labels

CELLS = [  # (cell as made, cell as written to a CSV)
    ("=HYPERLINK(\"http://evil\",\"x\")", "'=HYPERLINK(\"http://evil\",\"x\")"),
    ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
    ("\t=1+1", "'\t=1+1"),
    ("\r=1+1", "'\r=1+1"),
    ("-", "'-"),
    ("a heron = bird", "a heron = bird"),  # only the first character counts
    (" =1", " =1"),
    ("", ""),
    ("renée", "renée"),
    ("-3.5", "-3.5"),  # plain numbers written as text stay numbers
    ("+4", "+4"),
    ("-1e-3", "-1e-3"),
    (-1, -1),
    (-33.25, -33.25),
    (None, None),
]


@pytest.mark.parametrize("made, written", CELLS, ids=[repr(c[0])[:20] for c in CELLS])
def test_a_cell_is_neutralised_only_when_a_spreadsheet_would_run_it(made, written):
    assert spreadsheet_safe(made) == written


def _label(query: str, who: str, label: int = 1, photo: int = 1) -> Label:
    return Label(session_id=1, query=query, photo_id=photo, label=label, annotator=who)


def test_label_exports_neutralise_query_and_annotator_but_keep_numbers(tmp_path):
    labels = [_label("=1+1", "@renée", -1), _label("+frog", "-x", 0, 2), _label("a heron", "ada", 1, 3)]
    export_labels(labels, "csv", tmp_path / "l.csv")
    rows = list(csv.DictReader(open(tmp_path / "l.csv", newline="", encoding="utf-8")))
    assert [(r["query"], r["annotator"], r["label"]) for r in rows] == [
        ("'=1+1", "'@renée", "-1"), ("'+frog", "'-x", "0"), ("a heron", "ada", "1")]
    export_labels(labels, "jsonl", tmp_path / "l.jsonl")
    raw = [json.loads(line) for line in open(tmp_path / "l.jsonl", encoding="utf-8")]
    assert [(r["query"], r["annotator"], r["label"]) for r in raw] == [
        ("=1+1", "@renée", -1), ("+frog", "-x", 0), ("a heron", "ada", 1)]


def test_inquire_rerank_export_neutralises_metadata_text_and_keeps_negative_coordinates(tmp_path):
    photo = Photo(path=str(tmp_path / "p.jpg"), id=1, scientific_name="=cmd()", latitude=-33.5, longitude=-70.25,
                  license="@cc-by", rights_holder="\rbob", observed_on=date(2024, 5, 1))
    export_labels([_label("-frog", "ada")], "inquire-rerank", tmp_path / "r.csv", photos={1: photo},
                  scores={1: -0.5}, roots=[tmp_path])
    row = next(csv.DictReader(open(tmp_path / "r.csv", newline="", encoding="utf-8")))
    assert (row["query"], row["inat24_species_name"], row["license"], row["rights_holder"]) == \
        ("'-frog", "'=cmd()", "'@cc-by", "'\rbob")
    assert (row["latitude"], row["longitude"], row["clip_score"], row["relevant"]) == ("-33.5", "-70.25", "-0.5", "1")


def test_marked_photo_exports_neutralise_text_cells(tmp_path):
    photos = {3: Photo(path=str(tmp_path / "p3.jpg"), id=3, scientific_name="+Hyla", common_name="=tree frog",
                       latitude=-45.5, longitude=-6.25, rights_holder="@ada")}
    marks = [{"id": 3, "query": "=WEBSERVICE(\"x\")", "preset": "Verify"}]
    export_marks(marks, photos, "csv", tmp_path / "m.csv", [tmp_path])
    row = next(csv.DictReader(open(tmp_path / "m.csv", newline="", encoding="utf-8")))
    assert (row["species"], row["common_name"], row["rights_holder"], row["query"]) == \
        ("'+Hyla", "'=tree frog", "'@ada", "'=WEBSERVICE(\"x\")")
    assert (row["latitude"], row["longitude"], row["id"]) == ("-45.5", "-6.25", "3")
    export_marks(marks, photos, "jsonl", tmp_path / "m.jsonl", [tmp_path])
    assert json.loads(open(tmp_path / "m.jsonl").readline())["query"] == "=WEBSERVICE(\"x\")"
