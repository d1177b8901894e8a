"""Events (sequences, bursts): frames of one deployment closer in time than `event_gap_s` (setting, default 60 s)
form one event, unless the source says which event a frame belongs to (a Camtrap DP eventID wins); a frame
with no trusted time, and a lone frame, is an event of its own. An event's count is MaxN: the most
individuals seen in one of its frames (observations' counts, else animal detections at or above
detection_threshold).

`group` is the pure rule; `regroup` runs it over whole deployments through the camera-trap store at the end of
an ingest, so frames added later (a second card of the same deployment) are grouped with the earlier ones."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

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
