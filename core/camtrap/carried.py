"""What an event's identifications become when its frames are grouped again (core.camtrap.events.regroup, at the
end of every ingest of a deployment: the same card again, or one with frames added, renumbers made events).

An event made by grouping is known by its frames, not by its key: '<deployment>#<n>' numbers events in time
order, so a frame added before them shifts every number. Each of the old event's event-level observations (a
person's identification, with its count) is carried to the new event that holds the same frames: the one
holding most of them (the earliest such event on a tie). A carried identification keeps its annotator and
target in its key (core.camtrap.identifications.key_of), so a person still has one answer an event.

The new event's MaxN is the newest person's count among the animal identifications it holds (a blank: 0), not
the larger of that and the machine's count. Camtrap DP (observations-table-schema: observationLevel, count,
classificationMethod) says an event-level observation's `count` is the number of individuals observed in the
whole event, that event-level observations are the ones whose counts are summed for ecological use, and that
the classification method is the one used most recently: a person who looked at the frames and counted
replaces the machine's estimate (boxes at or above the threshold in one frame). Taking the larger would let a
box drawn twice over one animal, or one on a stump, outvote that person on every later ingest, and the
event's MaxN would then disagree with the count its own event-level observation exports. A frame added to the
event afterwards was not seen by that person: identifying the event again sets the count anew."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, Sequence

from core.contracts.camtrap import Capture, Observation


def old_events(captures: dict[int, Capture], made: re.Pattern) -> dict[int, tuple[str, set[int]]]:
    """event id -> (key, frames) of the made events these frames belonged to before grouping again."""
    out: dict[int, tuple[str, set[int]]] = {}
    for pid, c in captures.items():
        if c.event_id is not None and c.event_key and made.fullmatch(c.event_key):
            out.setdefault(int(c.event_id), (c.event_key, set()))[1].add(int(pid))
    return out


def targets(old: dict[int, tuple[str, set[int]]], groups: Sequence) -> dict[int, str]:
    """old event id -> the key of the new group (core.camtrap.events.Grouped, in their order) that holds most
    of its frames; an event none of whose frames is grouped now is left out."""
    out = {}
    for event_id, (_, frames) in old.items():
        shared = [(len(frames.intersection(g.photo_ids)), -i, g.key) for i, g in enumerate(groups)]
        best = max(shared, default=(0, 0, ""))
        if best[0]:
            out[event_id] = best[2]
    return out


def person_count(observations: Iterable[Observation]) -> int | None:
    """The newest person's count among these event-level identifications: an animal one with a count, or a
    blank, which counts 0 (as core.camtrap.identifications.identify sets it); None: no person counted."""
    counted = [o for o in observations if o.method == "human" and o.level == "event"
               and (o.type == "blank" or (o.type == "animal" and o.count is not None))]
    if not counted:
        return None
    newest = max(counted, key=lambda o: (o.classified_at or "", o.id or 0))
    return 0 if newest.type == "blank" else int(newest.count)


def person_counts(held: Sequence[Observation], moves_to: dict[int, str]) -> dict[str, int]:
    """new event key -> the person's count it takes as MaxN, from the old events' observations carried to it."""
    by_key: dict[str, list[Observation]] = {}
    for o in held:
        if o.event_id in moves_to:
            by_key.setdefault(moves_to[o.event_id], []).append(o)
    out = {}
    for key, observations in by_key.items():
        count = person_count(observations)
        if count is not None:
            out[key] = count
    return out


def moves(held: Sequence[Observation], moves_to: dict[int, str], old: dict[int, tuple[str, set[int]]],
          event_ids: dict[str, int]) -> list[Observation]:
    """The observations to point at their new event (ids from the upsert of the new events), oldest first so that
    where two end up with one key (a person who identified two events that are now one) the newest stays."""
    pairs = []
    for o in held:
        key = moves_to.get(o.event_id)
        if key is None or key not in event_ids:
            continue
        old_key, new_key = old[o.event_id][0], o.key
        if o.key and o.key.startswith("ecolens:") and o.key.endswith(f":event:{old_key}"):  # identifications.key_of
            new_key = o.key[: -len(old_key)] + key
        pairs.append((o, replace(o, event_id=event_ids[key], event_key=key, key=new_key)))
    keys = [now.key for _, now in pairs if now.key]
    shared = {k for k in keys if keys.count(k) > 1}  # every holder of a shared key goes in, so the newest wins
    out = [now for was, now in pairs if (now.event_id, now.key) != (was.event_id, was.key) or now.key in shared]
    return sorted(out, key=lambda o: (o.classified_at or "", o.id or 0))
