"""Events (sequences, bursts): frames of one deployment closer in time than `event_gap_s` (setting, default 60 s)
form one event, unless the source says which event a frame belongs to (a Camtrap DP eventID wins); a frame
with no trusted time, and a lone frame, is an event of its own. An event's count is MaxN: the most
individuals seen in one of its frames (observations' counts, else animal detections at or above
detection_threshold), or a person's count of the event (core.camtrap.identifications), which a later grouping
keeps, carrying the identification with its frames (core.camtrap.carried).

`group` is the pure rule; `regroup` runs it over whole deployments through the camera-trap store at the end of
an ingest, so frames added later (a second card of the same deployment) are grouped with the earlier ones."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from core.camtrap import carried
from core.contracts.camtrap import CamtrapFilters, Event

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Frame:
    photo_id: int
    utc_epoch: float | None = None  # None: the time is unknown or lies (the frame is an event of its own)
    captured_at: str | None = None  # local wall time, for the event's start and end
    source_event: str | None = None  # the source's event key, when it gave one
    individuals: int = 0  # individuals seen in this frame


@dataclass
class Grouped:
    key: str
    photo_ids: list[int] = field(default_factory=list)
    start: str | None = None
    end: str | None = None
    max_n: int = 0
    from_source: bool = False

    @property
    def frames(self) -> int:
        return len(self.photo_ids)


def group(deployment_key: str, frames: list[Frame], gap_s: float) -> list[Grouped]:
    """The events of one deployment's frames: the source's events first (by key), then the made ones keyed
    '<deployment>#<n>', numbered in time order (frames without a time last, by photo id)."""
    if gap_s < 0:
        raise ValueError(f"event gap {gap_s} is negative")
    given: dict[str, list[Frame]] = {}
    timed, untimed = [], []
    for f in frames:
        if f.source_event:
            given.setdefault(f.source_event, []).append(f)
        elif f.utc_epoch is not None:
            timed.append(f)
        else:
            untimed.append(f)
    runs: list[list[Frame]] = []
    for f in sorted(timed, key=lambda f: (f.utc_epoch, f.photo_id)):
        if runs and f.utc_epoch - runs[-1][-1].utc_epoch < gap_s:
            runs[-1].append(f)
        else:
            runs.append([f])
    runs += [[f] for f in sorted(untimed, key=lambda f: f.photo_id)]
    out = [_grouped(key, members, True) for key, members in sorted(given.items())]
    out += [_grouped(f"{deployment_key}#{n}", members, False) for n, members in enumerate(runs, start=1)]
    return out


def _grouped(key: str, members: list[Frame], from_source: bool) -> Grouped:
    ordered = sorted(members, key=lambda f: (f.utc_epoch is None, f.utc_epoch or 0.0, f.photo_id))
    stamps = sorted(f.captured_at for f in members if f.captured_at)
    return Grouped(key, [f.photo_id for f in ordered], stamps[0] if stamps else None,
                   stamps[-1] if stamps else None, max((f.individuals for f in members), default=0), from_source)


def individuals(counts: dict[int, int], animals: dict[int, int], photo_id: int) -> int:
    """Individuals in one frame: the sum of its observations' counts when it has any, else its animal
    detections at or above the threshold."""
    return counts[photo_id] if photo_id in counts else animals.get(photo_id, 0)


def regroup(store, deployment_keys: list[str], gap_s: float, threshold: float) -> int:
    """Group every frame of these deployments again (through the camera-trap store) and write the events and
    each frame's event; returns how many events they have now. The source's events stay as they are named;
    made events are keyed '<deployment>#<n>' afresh (a made event a regrouping no longer needs is kept with 0
    frames, so nothing that names it breaks). The source's events (and their rows) are left as they are."""
    total = 0
    for key in deployment_keys:
        ids = store.camtrap_ids(CamtrapFilters(deployments=(key,)), threshold)
        ids = [int(i) for i in (ids if ids is not None else [])]
        if not ids:
            continue
        captures = store.captures(ids)
        made = re.compile(re.escape(key) + r"#\d+")
        counts: dict[int, int] = {}
        for o in store.observations(photo_ids=ids):
            if o.level == "media" and o.type == "animal" and o.photo_id is not None:
                counts[o.photo_id] = counts.get(o.photo_id, 0) + int(o.count or 1)
        animals = {pid: sum(1 for d in boxes if d.category == "animal" and d.conf >= threshold)
                   for pid, boxes in store.detections(ids).items()}
        frames = [Frame(pid, c.utc_epoch if not c.time_issue else None, c.captured_at,
                        c.event_key if c.event_key and not made.fullmatch(c.event_key) else None,
                        individuals(counts, animals, pid)) for pid, c in captures.items()]
        groups = group(key, frames, gap_s)
        stale = {c.event_key for c in captures.values() if c.event_key and made.fullmatch(c.event_key)}
        stale -= {g.key for g in groups}
        dep_id = next((c.deployment_id for c in captures.values() if c.deployment_id is not None), None)
        mine = [g for g in groups if not g.from_source]  # a source's events stay as the source wrote them
        # the made events' identifications go with their frames, and a person's count stays the MaxN
        old = carried.old_events(captures, made)
        held = [o for o in store.observations(event_ids=list(old)) if o.level == "event"] if old else []
        moves_to = carried.targets(old, mine)
        counted = carried.person_counts(held, moves_to)
        rows = [Event(key=g.key, deployment_id=dep_id, start=g.start, end=g.end, frames=g.frames,
                      max_n=counted.get(g.key, g.max_n))
                for g in mine] + [Event(key=k, deployment_id=dep_id, frames=0, max_n=0) for k in sorted(stale)]
        event_ids = store.upsert_events(rows)
        store.assign_events({pid: event_ids[g.key] for g in mine for pid in g.photo_ids})
        store.move_observations(carried.moves(held, moves_to, old, event_ids))
        total += len(groups)
        log.info("events of deployment %s: %d frames in %d events (gap %g s)", key, len(frames), len(groups), gap_s)
    return total
