"""Label exports and Cohen's kappa on constructed labels with known answers."""
from __future__ import annotations

import csv
import json
from datetime import date

import pytest

from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.contracts.sessionlog import Label
from core.labels import INQUIRE_RERANK_COLUMNS, agreement, cohen_kappa, export_labels, latest
from core.sessions.memory_log import MemorySessionLog


def _lb(photo, label, who="a", query="q"):
    return Label(session_id=1, query=query, photo_id=photo, label=label, annotator=who, seconds=1.0)


def test_kappa_known_values():
    assert cohen_kappa([1, 1, 0, 0], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    # 20 items: both say yes 7, both no 8, a-yes/b-no 2, a-no/b-yes 3 -> po=0.75, pe=0.45*0.5+0.55*0.5=0.5
    a = [1] * 7 + [0] * 8 + [1] * 2 + [0] * 3
    b = [1] * 7 + [0] * 8 + [0] * 2 + [1] * 3
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    assert cohen_kappa([1, 1], [1, 1]) == 1.0
    with pytest.raises(InputError):
        cohen_kappa([], [])


def test_agreement_uses_latest_shared_non_skipped_pairs():
    labels = [_lb(1, 1, "a"), _lb(1, 0, "a"), _lb(2, 1, "a"), _lb(3, -1, "a"),
              _lb(1, 0, "b"), _lb(2, 1, "b"), _lb(3, 1, "b"), _lb(4, 1, "b")]
    (ag,) = agreement(labels)
    assert ag.annotators == ("a", "b") and ag.pairs == 2 and ag.observed == 1.0 and ag.kappa == pytest.approx(1.0)
    assert agreement([_lb(1, 1, "a"), _lb(2, 1, "b")])[0].kappa is None
    assert len(latest(labels)) == 7


def test_exports_parse(tmp_path):
    labels = [_lb(1, 1), _lb(2, 0), _lb(3, -1), _lb(2, 1)]
    assert export_labels(labels, "csv", tmp_path / "l.csv") == 3  # one row per photo: 2's relabel replaces it
    rows = list(csv.DictReader((tmp_path / "l.csv").open()))
    assert [(r["photo_id"], r["label"], r["judgement"]) for r in rows] == [
        ("1", "1", "relevant"), ("2", "1", "relevant"), ("3", "-1", "skipped")]
    assert export_labels(labels, "keypresses", tmp_path / "k.csv") == 4  # every label as made
    assert [r["label"] for r in csv.DictReader((tmp_path / "k.csv").open())] == ["1", "0", "-1", "1"]
    assert export_labels(labels, "jsonl", tmp_path / "l.jsonl") == 3
    assert json.loads((tmp_path / "l.jsonl").read_text().splitlines()[1])["label"] == 1
    photos = {1: Photo(path="/p/1.jpg", id=1, scientific_name="Rana temporaria", latitude=1.0, longitude=2.0,
                       observed_on=date(2024, 5, 1), license="cc-by", rights_holder="x")}
    n = export_labels(labels, "inquire-rerank", tmp_path / "r.csv", photos=photos, scores={1: 0.3})
    assert n == 2  # skip dropped, photo 2 relabelled -> latest only
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert tuple(rows[0].keys()) == INQUIRE_RERANK_COLUMNS
    assert rows[0]["inat24_species_name"] == "Rana temporaria" and rows[0]["clip_score"] == "0.3"
    assert rows[1]["relevant"] == "1"
    with pytest.raises(InputError):
        export_labels(labels, "xml", tmp_path / "x")


def test_memory_log_behaves_like_the_protocol():
    log = MemorySessionLog()
    sid = log.start_session("label", "t")
    log.add_label(_lb(1, 1))  # session 1 exists
    assert log.labels(session_id=sid)[0].photo_id == 1
    assert log.session(sid).session.labels == 1
