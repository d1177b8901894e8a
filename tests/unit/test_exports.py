"""Exports name photos without server paths, marked photos carry their metadata, query and preset, and the
disagreements between annotators are found with the final word if given."""
from __future__ import annotations

import csv
import json
from datetime import date

import pytest

from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.contracts.sessionlog import Label
from core.exports import MARK_COLUMNS, export_marks, public_name
from core.labels import ADJUDICATED, agreement, disagreements


def test_public_names_are_urls_benchmark_names_or_relative_paths(tmp_path):
    collection = tmp_path / "photos"
    assert public_name(Photo(path="https://example.org/a.jpg")) == "https://example.org/a.jpg"
    assert public_name(Photo(path="/srv/data/media/x.jpg", extra={"inat24_file_name": "train/123/x.jpg"})) == \
        "train/123/x.jpg"
    assert public_name(Photo(path=str(collection / "owls" / "o.jpg")), [collection]) == "owls/o.jpg"
    assert public_name(Photo(path="/somewhere/else/o.jpg"), [collection]) == "o.jpg"  # never the server path


def test_marked_photos_export_with_their_metadata(tmp_path):
    photos = {3: Photo(path=str(tmp_path / "a" / "p3.jpg"), id=3, scientific_name="Hyla arborea",
                       common_name="European tree frog", observed_on=date(2024, 5, 31), latitude=45.5,
                       longitude=6.25, license="cc-by", rights_holder="ada")}
    marks = [{"id": 3, "query": "a frog calling", "preset": "Verify"}, {"id": 99, "query": "x", "preset": "Fast"}]
    assert export_marks(marks, photos, "csv", tmp_path / "m.csv", [tmp_path]) == 2
    rows = list(csv.DictReader(open(tmp_path / "m.csv")))
    assert list(rows[0]) == list(MARK_COLUMNS)
    assert rows[0] == {"id": "3", "species": "Hyla arborea", "common_name": "European tree frog",
                       "path": "a/p3.jpg", "latitude": "45.5", "longitude": "6.25", "date": "2024-05-31",
                       "month": "5", "license": "cc-by", "license_url": "https://creativecommons.org/licenses/by/4.0/",
                       "rights_holder": "ada", "query": "a frog calling", "preset": "Verify"}
    assert rows[1]["id"] == "99" and rows[1]["species"] == "" and rows[1]["path"] == ""  # gone from the catalog
    export_marks(marks, photos, "jsonl", tmp_path / "m.jsonl", [tmp_path])
    assert json.loads(open(tmp_path / "m.jsonl").readline())["month"] == 5
    with pytest.raises(InputError, match="No photo is marked"):
        export_marks([], photos, "csv", tmp_path / "e.csv")
    with pytest.raises(InputError, match="format"):
        export_marks(marks, photos, "xlsx", tmp_path / "e.xlsx")


def _lb(photo, label, who):
    return Label(session_id=1, query="q", photo_id=photo, label=label, annotator=who)


def test_disagreements_and_the_final_word():
    labels = [_lb(1, 1, "a"), _lb(1, 0, "b"), _lb(2, 1, "a"), _lb(2, 1, "b"), _lb(3, -1, "a"), _lb(3, 1, "b"),
              _lb(4, 0, "a"), _lb(4, 1, "b"), _lb(4, 1, "a")]  # a changes her mind on 4: they agree now
    found = disagreements(labels)
    assert [(d.photo_id, d.labels, d.adjudicated) for d in found] == [(1, {"a": 1, "b": 0}, None)]
    labels.append(_lb(1, 0, ADJUDICATED))
    assert disagreements(labels)[0].adjudicated == 0
    assert [g.annotators for g in agreement(labels)] == [("a", "b")]  # the final word is not an annotator


def test_a_frames_count_is_not_doubled_by_its_observation_naming_its_event_too():
    """Darwin Core's individualCount of a camera-trap frame: a media-level observation that also names the frame's
    event (a Camtrap DP package gives every observation its eventID) was read once for the photo and once for
    the event, and its count of 2 was written as 4."""
    from core.contracts.camtrap import Capture, Observation
    from core.exporting import individual_counts

    seen = [Observation(level="media", type="animal", key="obs-1", photo_id=1, event_id=5, count=2, method="machine",
                        scientific_name="Vulpes vulpes", id=11),
            Observation(level="media", type="animal", key="obs-2", photo_id=2, event_id=5, count=1, method="machine",
                        scientific_name="Vulpes vulpes", id=12)]

    class Store:  # as storage.camtrap_store answers: the observations of these photos or these events, each once
        def captures(self, ids):
            return {i: Capture(photo_id=i, event_id=5) for i in ids}

        def observations(self, photo_ids=None, event_ids=None):
            return [o for o in seen if o.photo_id in (photo_ids or ()) or o.event_id in (event_ids or ())]

    photos = [Photo(path="a.jpg", id=1, scientific_name="Vulpes vulpes"),
              Photo(path="b.jpg", id=2, scientific_name="Vulpes vulpes")]
    assert individual_counts(Store(), photos) == {1: 2, 2: 1}
