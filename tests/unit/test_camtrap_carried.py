"""core.camtrap.carried on plain values: where an old event's identifications go when its frames are grouped
again, the count it keeps as MaxN, and two events that become one keeping each person's newest answer."""
from __future__ import annotations

import re

from core.camtrap import carried
from core.camtrap.events import Grouped
from core.contracts.camtrap import Capture, Observation

MADE = re.compile(r"s1#\d+")
KEYS = {10: "s1#1", 11: "s1#2"}  # event id -> key, before grouping again


def _obs(i, event_id, annotator, count, at, kind="animal", method="human"):
    return Observation(id=i, level="event", type=kind, event_id=event_id, event_key=KEYS[event_id],
                       key=f"ecolens:{annotator}:event:{KEYS[event_id]}", count=count, method=method,
                       classified_by=annotator, classified_at=at)


def test_old_events_and_the_group_holding_most_of_their_frames():
    captures = {pid: Capture(photo_id=pid, event_id=eid, event_key=key)
                for pid, eid, key in ((1, 10, "s1#1"), (2, 10, "s1#1"), (3, 11, "s1#2"), (4, 12, "pkg-event-7"))}
    old = carried.old_events(captures, MADE)
    assert old == {10: ("s1#1", {1, 2}), 11: ("s1#2", {3})}  # a source's event is not a made one
    groups = [Grouped("s1#1", [9]), Grouped("s1#2", [1]), Grouped("s1#3", [2, 3])]
    assert carried.targets(old, groups) == {10: "s1#2", 11: "s1#3"}  # a tie: the earlier group
    assert carried.targets({13: ("s1#9", {77})}, groups) == {}  # its frames are gone: it stays


def test_the_newest_persons_count_is_the_maxn_a_machines_or_an_uncounted_one_is_not_and_a_blank_is_0():
    held = [_obs(1, 10, "ann", 3, "2026-01-02"), _obs(2, 10, "bo", 1, "2026-01-03"),
            _obs(3, 10, "cy", None, "2026-01-04"), _obs(4, 10, "md", 7, "2026-01-05", method="machine"),
            _obs(5, 11, "ann", 2, "2026-01-01")]
    assert carried.person_counts(held, {10: "s1#2", 11: "s1#3"}) == {"s1#2": 1, "s1#3": 2}
    assert carried.person_count([held[2], held[3]]) is None
    blank = _obs(6, 10, "di", None, "2026-01-06", kind="blank")  # the newest person says: no animal
    assert carried.person_count(held[:4] + [blank]) == 0
    assert carried.person_count([blank, _obs(7, 10, "ed", 2, "2026-01-07")]) == 2  # a later count beats it


def test_two_events_that_become_one_keep_each_persons_newest_answer():
    old = {10: ("s1#1", {1}), 11: ("s1#2", {2})}
    held = [_obs(1, 10, "ann", 3, "2026-01-05"), _obs(2, 11, "ann", 1, "2026-01-02"),
            _obs(3, 11, "bo", 2, "2026-01-03")]
    moves_to = {10: "s1#1", 11: "s1#1"}  # a wider gap: one event now
    moved = carried.moves(held, moves_to, old, {"s1#1": 10})
    # Ann's older answer on s1#2 goes first, her newer one on s1#1 last (it takes the key back, so it stays)
    assert [(o.id, o.key, o.event_id) for o in moved] == [
        (2, "ecolens:ann:event:s1#1", 10), (3, "ecolens:bo:event:s1#1", 10), (1, "ecolens:ann:event:s1#1", 10)]
    assert carried.person_counts(held, moves_to) == {"s1#1": 3}
    assert carried.moves(held[:1], {10: "s1#1"}, old, {"s1#1": 10}) == []  # nothing changes: nothing to write
