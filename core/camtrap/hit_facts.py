"""The camera-trap facts every search result carries (issue 34, "The JSON a search returns"), looked up for the
final hits in one store query each, in the one search facade (core.search.engine) so that the web app, the
command line and the evaluation show the same:

  deployment_id     the deployment's key, or null
  event_id          the event's key, or null (every camera-trap frame has one)
  timestamp         captured_at (after the clock correction, never converted to UTC), with +HH:MM only when
                    the offset is known; null when the time is unknown
  detections        [{"bbox": [x, y, w, h], "category", "conf", "model"}], boxes normalised from the top left
  matched_detection the detection the match went through (a crop), else null (set by the crop search)
  event_frames, event_frame_ids   with by_event: the frames of the result's event

`by_event` collapses a ranking to one result per event (its best-ranked frame) before it is cut to k."""
from __future__ import annotations

from typing import Any

from core.camtrap.capture_time import timestamp
from core.contracts.records import Filters, Hit

Ranked = list[tuple[int, float]]


def _store(corpus):
    return getattr(corpus, "camtrap", None)


def wants_events(filters: Filters | None) -> bool:
    return bool(filters is not None and filters.camtrap is not None and filters.camtrap.by_event)


def by_event(corpus, filters: Filters | None, ranked: Ranked) -> Ranked:
    """`ranked` with only the best-ranked frame of each event (frames without an event stay as they are)."""
    store = _store(corpus)
    if store is None or not wants_events(filters) or not ranked:
        return ranked
    captures = store.captures([i for i, _ in ranked])
    seen: set[int] = set()
    out = []
    for pid, score in ranked:
        event = captures[pid].event_id if pid in captures else None
        if event is not None:
            if event in seen:
                continue
            seen.add(event)
        out.append((pid, score))
    return out


def detection_json(d) -> dict[str, Any]:
    return {"bbox": [round(float(v), 6) for v in (d.x, d.y, d.w, d.h)], "category": d.category,
            "conf": round(float(d.conf), 6), "model": d.model}


def attach(corpus, hits: list[Hit], filters: Filters | None) -> None:
    """Set each hit's camera-trap facts (Hit.camtrap) from the store (nothing without one)."""
    store = _store(corpus)
    if store is None or not hits:
        return
    ids = [h.photo_id for h in hits]
    captures = store.captures(ids)
    boxes = store.detections(ids)
    frames: dict[int, list[int]] = {}
    if wants_events(filters):
        frames = store.event_photos(sorted({c.event_id for c in captures.values() if c.event_id is not None}))
    for h in hits:
        c = captures.get(h.photo_id)
        facts: dict[str, Any] = {
            "deployment_id": c.deployment_key if c else None, "event_id": c.event_key if c else None,
            "timestamp": timestamp(c.captured_at, c.utc_offset) if c else None,
            "detections": [detection_json(d) for d in boxes.get(h.photo_id, [])],
            "matched_detection": h.matched_detection}
        if wants_events(filters):
            members = frames.get(c.event_id, []) if c and c.event_id is not None else []
            members = members or [h.photo_id]
            facts.update(event_frames=len(members), event_frame_ids=list(members))
        h.camtrap = facts

