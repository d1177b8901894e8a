"""A label given to an event card applies to its frames (core.camtrap.event_labels through the desk): on the
label board (an event card of a search with one result per event: every frame gets the judgement, undo takes
them all back) and through the API's /label with whole_event; a plain photo's label stays one label."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.camtrap.desk import CamtrapDesk
from core.contracts.camtrap import Capture
from core.search.presets import request_for
from core.sessions.memory_log import MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine
from ui.label_handlers import LabelHandlers


class FramesStore:
    """The reads an event's frames need: photo -> its event, event -> its frames in time order (and the
    detections every view asks for: none here)."""

    def __init__(self, events: dict[int, list[int]]):
        self.events = events

    def captures(self, photo_ids):
        return {p: Capture(photo_id=p, event_id=e) for e, frames in self.events.items() for p in frames
                if p in photo_ids}

    def detections(self, photo_ids):  # no boxes: nobody to keep from view
        return {}

    def event_photos(self, event_ids):
        return {e: list(self.events[e]) for e in event_ids if e in self.events}


@pytest.fixture()
def setup(tmp_path):
    engine, log = FakeEngine(tmp_path), MemorySessionLog()
    ids = [int(i) for i in engine.search(request_for("Fast", "a frog calling", k=4)).ids]
    # the first result is the best frame of an event of three (itself and two frames not among the results)
    store = FramesStore({9: [ids[0], 901, 902]})
    desk = CamtrapDesk(store, SimpleNamespace(detection_threshold=0.2))
    return engine, log, ids, LabelHandlers(engine, log, camtrap=desk)


def _cards(ids):
    return [{"id": ids[0], "rank": 1, "score": 0.5, "event_id": "siteA#1", "event_frames": 3,
             "event_frame_ids": [ids[0], 901, 902]}] + [{"id": i, "rank": r + 2, "score": 0.1} for r, i in
                                                       enumerate(ids[1:])]


def test_a_label_on_an_event_card_is_given_to_every_frame_and_undone_together(setup):
    _, log, ids, h = setup
    _, _, _, board, _, st, _, _ = h.from_search({"query": "a frog calling", "hits": _cards(ids)}, "ada")
    assert "· 3 frames</div>" in board  # the event card's caption on the board
    *_, message, st = h.act("ada", st, SimpleNamespace(index=ids[0], value={"action": "1", "seq": 1}))
    labels = log.labels(query="a frog calling")
    assert [(lb.photo_id, lb.label) for lb in labels] == [(ids[0], 1), (901, 1), (902, 1)]
    assert "all 3 frames of this event" in message
    *_, st = h.act("ada", st, SimpleNamespace(index=ids[1], value={"action": "0", "seq": 2}))
    assert len(log.labels(query="a frog calling")) == 4  # a plain photo: one label
    *_, st = h.act("ada", st, SimpleNamespace(index=0, value={"action": "undo", "seq": 3}))
    *_, st = h.act("ada", st, SimpleNamespace(index=0, value={"action": "undo", "seq": 4}))
    assert log.labels(query="a frog calling") == []


def test_the_api_gives_an_events_frames_the_label_only_when_asked(setup):
    _, log, ids, h = setup
    h.label_photo("frogs", ids[0], 1, "script")
    assert [lb.photo_id for lb in log.labels(query="frogs")] == [ids[0]]
    first = h.label_photo("frogs", ids[0], 0, "script", 2.0, True)
    labels = log.labels(query="frogs")[1:]
    assert [(lb.photo_id, lb.label, lb.seconds) for lb in labels] == [(ids[0], 0, 2.0), (901, 0, 0.0), (902, 0, 0.0)]
    assert labels[0].id == first and len({lb.session_id for lb in labels}) == 1
