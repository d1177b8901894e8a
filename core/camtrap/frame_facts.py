"""What a camera-trap frame is, gathered for the page and the API from the camera-trap store: its deployment
(and place), capture time (with its offset when known), event and the event's frames, the detector's boxes,
and the observations people and machines made of it or of its event. Plain photos have no facts ({}).

`event_frames` is also how a label given to an event reaches its frames: the ui's label board and the API's
/label call it, so both expand an event the same way."""
from __future__ import annotations

from typing import Any, Sequence

from core.contracts.camtrap import CamtrapStore, Detection, Observation


def event_frames(store: CamtrapStore | None, photo_ids: Sequence[int]) -> dict[int, list[int]]:
    """photo id -> the photo ids of its event's frames in time order (itself included); a photo without an
    event (a plain photo, a frame not grouped) is its own only frame."""
    ids = [int(i) for i in photo_ids]
    if store is None or not ids:
        return {i: [i] for i in ids}
    captures = store.captures(ids)
    events = {c.event_id for c in captures.values() if c.event_id is not None}
    frames = store.event_photos(sorted(events)) if events else {}
    out = {}
    for i in ids:
        event = captures[i].event_id if i in captures else None
        out[i] = list(frames.get(event) or [i]) if event is not None else [i]
        if i not in out[i]:
            out[i].append(i)
    return out


def timestamp(captured_at: str | None, utc_offset: str | None) -> str | None:
    """The capture time as the camera recorded it (after the clock correction), with '+HH:MM' only when the
    offset is known; None when the time is not known."""
    if not captured_at:
        return None
    return f"{captured_at}{utc_offset}" if utc_offset else captured_at


def detection_json(d: Detection) -> dict[str, Any]:
    return {"bbox": [round(float(v), 4) for v in (d.x, d.y, d.w, d.h)], "category": d.category,
            "conf": round(float(d.conf), 4), "model": d.model, **({"label": d.label} if d.label else {})}


def observation_json(o: Observation) -> dict[str, Any]:
    keep = ("level", "type", "scientific_name", "count", "life_stage", "sex", "behavior", "method",
            "classified_by", "probability", "classified_at", "annotator")
    return {k: getattr(o, k) for k in keep if getattr(o, k) not in (None, "")}


def facts(store: CamtrapStore | None, photo_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """photo id -> its camera-trap facts as plain data (JSON-ready), for the frames that have any:
    deployment_id (key), place, latitude, longitude, timestamp, time_issue, event_id (key), event_frames,
    event_frame_ids, max_n, detections ([] when none), observations (the frame's and its event's)."""
    ids = sorted({int(i) for i in photo_ids})
    if store is None or not ids:
        return {}
    captures = store.captures(ids)
    if not captures:
        return {}
    deployments = {d.id: d for d in store.deployments() if any(c.deployment_id == d.id for c in captures.values())}
    event_ids = sorted({c.event_id for c in captures.values() if c.event_id is not None})
    events = {e.id: e for e in store.events(event_ids)} if event_ids else {}
    frames = store.event_photos(event_ids) if event_ids else {}
    boxes = store.detections(list(captures))
    observed = store.observations(photo_ids=list(captures), event_ids=event_ids or None)
    out = {}
    for pid, c in captures.items():
        dep = deployments.get(c.deployment_id)
        event = events.get(c.event_id)
        # the frame's own observations and its event's event-level ones; another frame's media-level observation
        # carries the event too (Camtrap DP gives every observation its eventID) but says nothing of this frame
        mine = [o for o in observed if o.photo_id == pid
                or (o.level == "event" and event is not None and o.event_id == event.id)]
        out[pid] = {
            "deployment_id": dep.key if dep else c.deployment_key,
            "place": (dep.location_name or dep.location_id) if dep else None,
            "latitude": dep.latitude if dep else None, "longitude": dep.longitude if dep else None,
            "timestamp": timestamp(c.captured_at, c.utc_offset), "time_issue": c.time_issue,
            "event_id": event.key if event else c.event_key,
            "event_frames": len(frames.get(c.event_id) or []) or (event.frames if event else 0),
            "event_frame_ids": list(frames.get(c.event_id) or []),
            "max_n": event.max_n if event else None,
            "detector_looked": bool(c.detector_looked), "file_public": bool(c.file_public),
            "detections": [detection_json(d) for d in boxes.get(pid, [])],
            "observations": [observation_json(o) for o in mine],
        }
    return out
