"""A result line of `search` in a terminal, as a field ecologist reads it: a camera-trap frame says its
deployment and its capture time with the UTC offset (or that the offset is not known), an event card its
frames; a stand-in embedder's similarity is called a stand-in's, as the page calls it."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cli.common import print_hits
from core.contracts.records import Hit, Photo


def _result(hits, stages):
    return SimpleNamespace(notices=[], hits=hits, stages=stages)


def _heron(camtrap):
    return Hit(rank=1, photo_id=10, score=0.114945, camtrap=camtrap,
               photo=Photo(path="/cards/RCNX0040.JPG", id=10, scientific_name="Ardea"))


@pytest.mark.parametrize("camtrap, says", [
    ({"deployment_id": "62c200a9", "event_id": "7245a2aa", "timestamp": "2021-04-11T20:43:15+01:00",
      "event_frames": 10, "event_frame_ids": list(range(1, 11))},
     "deployment 62c200a9 · 2021-04-11 20:43:15 UTC+01:00 · 10 frames"),
    ({"deployment_id": "north", "event_id": None, "timestamp": "2016-01-28T15:14:45"},
     "deployment north · 2016-01-28 15:14:45 (offset from UTC not known)"),
    ({"deployment_id": "south", "event_id": "south#1", "timestamp": None}, "deployment south · time unknown"),
    ({"deployment_id": None, "event_id": None, "timestamp": "2024-06-01T03:12:00Z"}, "2024-06-01 03:12:00 UTC+00:00"),
])
def test_a_camera_trap_frames_line_says_where_and_when(capsys, camtrap, says):
    print_hits(_result([_heron(camtrap)], {"score": {"kind": "cosine"}}))
    line = capsys.readouterr().out.strip()
    assert line.startswith("1. [10] 0.115  Ardea  /cards/RCNX0040.JPG") and line.endswith("  " + says), line


def test_a_photo_without_camera_trap_facts_keeps_its_plain_line(capsys):
    print_hits(_result([_heron(None)], {}))
    assert capsys.readouterr().out.strip() == "1. [10] 0.115  Ardea  /cards/RCNX0040.JPG"


@pytest.mark.parametrize("kind, standin", [("cosine", True), ("checks", False)])
def test_a_stand_in_embedders_similarity_is_called_so(capsys, kind, standin):
    """The demo world's encoder on a real heron: its 0.115 is a stand-in's number, with the note saying what
    such a number means; a checks score (Verify's percentage) is not a similarity: it keeps its plain number and
    no note speaks of stand-in scores none of the printed scores is."""
    print_hits(_result([_heron(None)], {"score": {"kind": kind}, "standin_similarity": "fieldguide"}))
    lines = [line.strip() for line in capsys.readouterr().out.strip().split("\n")]
    notes, line = lines[:-1], lines[-1]
    if standin:
        assert len(notes) == 1 and notes[0].startswith("note: scores are stand-in scores"), notes
        assert "invented species" in notes[0], notes
    else:
        assert notes == [], notes
    assert line.startswith("1. [10] stand-in 0.115  Ardea" if standin else "1. [10] 0.115  Ardea"), line
