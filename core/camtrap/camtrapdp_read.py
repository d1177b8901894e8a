"""Reading a checked Camtrap DP package (camtrapdp_validate) into core.contracts.camtrap's shapes: its
deployments, media (each a capture and the photo it becomes) and observations, and the events the
observations name. Rows the check found bad are skipped with their reasons, and so are rows that hang on a
skipped row (a medium of a skipped deployment, an observation of a skipped medium); the rest goes on.

Events: an observation's eventID names its event (deployment, eventStart, eventEnd). A media-level observation
puts its medium in that event; an event-level one, every frame of its deployment from eventStart to eventEnd.
Frames that no observation places in an event are grouped by time (EVENT_GAP_S apart at most) into events of
their own, keyed '<deploymentID>#<n>'."""
from __future__ import annotations

import csv
import logging
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from core.camtrap.camtrapdp_columns import DEPLOYMENT_COLUMNS, MEDIA_COLUMNS, MEDIA_SPECIAL, OBSERVATION_COLUMNS
from core.camtrap.camtrapdp_validate import Checked
from core.contracts.camtrap import Capture, Deployment, Event, Observation
from core.contracts.records import Photo

log = logging.getLogger(__name__)

EVENT_GAP_S = 60.0  # frames without a source event closer than this form one event
REMOTE = ("http://", "https://")


@dataclass
class Medium:
    """One media row: its capture (photo_id 0 until the catalog gives one), the photo it becomes, and where
    its file is (a local path or a URL), or why there is none."""

    row: str
    capture: Capture
    photo: Photo
    source: str  # absolute local path or URL
    missing: str = ""  # why the file cannot be had ('' when it may be)


@dataclass
class PackageContent:
    key: str  # the package's id, else its name, else its folder's name
    metadata: dict[str, Any]
    deployments: list[Deployment] = field(default_factory=list)
    media: list[Medium] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (row, reason)
    notices: list[str] = field(default_factory=list)


def split_timestamp(text: str) -> tuple[str, str | None, float | None]:
    """'2020-05-30T04:57:37+02:00' -> ('2020-05-30T04:57:37', '+02:00', epoch seconds); without an offset, the
    wall time alone (offset and epoch None). ValueError for text that is not an ISO 8601 date and time."""
    moment = datetime.fromisoformat(text.strip())  # (a final Z is +00:00 since Python 3.11)
    wall = moment.replace(tzinfo=None, microsecond=0).isoformat()
    offset = moment.utcoffset()
    if offset is None:
        return wall, None, None
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return wall, f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}", moment.timestamp()


def _epoch(text: str | None) -> float | None:
    try:
        return split_timestamp(text)[2] if text else None
    except ValueError:
        return None


def _value(raw: str, kind: str):
    raw = raw.strip()
    if raw == "":
        return None
    if kind == "float":
        return float(raw)
    if kind == "int":
        return int(float(raw))
    if kind == "bool":
        return raw.lower() in ("true", "1")
    return raw


def _rows(folder: Path, descriptor: dict, name: str) -> list[tuple[int, dict[str, str]]]:
    path = next(r["path"] for r in descriptor["resources"] if isinstance(r, dict) and r.get("name") == name)
    with open(folder / path, newline="", encoding="utf-8-sig") as fh:
        return [(n, {k: v or "" for k, v in row.items() if k is not None})
                for n, row in enumerate(csv.DictReader(fh), start=2)]


def _fill(obj, row: dict[str, str], columns: dict[str, tuple[str, str]], skip=()) -> None:
    """Set obj's fields from the row's columns; other non-empty columns go to obj.extra as given."""
    for column, raw in row.items():
        if column in columns:
            setattr(obj, columns[column][0], _value(raw, columns[column][1]))
        elif column not in skip and raw.strip():
            obj.extra[column] = raw


def read(folder: Path, descriptor: dict, checked: Checked, key: str) -> PackageContent:
    folder = folder.resolve()
    out = PackageContent(key, {k: v for k, v in descriptor.items() if k != "resources"})
    bad = checked.bad_rows
    licence = next((lic.get("path") or lic.get("name") or "" for lic in descriptor.get("licenses") or []
                    if isinstance(lic, dict) and lic.get("scope") == "media"), "")
    holder = next((c.get("title") or "" for c in descriptor.get("contributors") or []
                   if isinstance(c, dict) and c.get("role") == "rightsHolder"), "")

    deployments: dict[str, Deployment] = {}
    for n, row in _rows(folder, descriptor, "deployments"):
        where = f"deployments.csv row {n}"
        try:
            if ("deployments", n) in bad:
                raise ValueError("; ".join(bad[("deployments", n)]))
            d = Deployment(key="", extra={"package": key})
            _fill(d, row, DEPLOYMENT_COLUMNS)
            d.utc_offset = split_timestamp(d.start)[1] if d.start else None
        except ValueError as exc:
            out.skipped.append((where, str(exc)))
            continue
        deployments[d.key] = d
    out.deployments = list(deployments.values())

    media: dict[str, Medium] = {}
    for n, row in _rows(folder, descriptor, "media"):
        where = f"media.csv row {n}"
        try:
            if ("media", n) in bad:
                raise ValueError("; ".join(bad[("media", n)]))
            medium = _medium(folder, row, where, deployments, key, licence, holder)
        except ValueError as exc:
            out.skipped.append((where, str(exc)))
            continue
        media[medium.capture.media_key] = medium
    out.media = list(media.values())

    for n, row in _rows(folder, descriptor, "observations"):
        where = f"observations.csv row {n}"
        try:
            if ("observations", n) in bad:
                raise ValueError("; ".join(bad[("observations", n)]))
            o = Observation(level="", type="")
            _fill(o, row, OBSERVATION_COLUMNS)
            if o.deployment_key not in deployments:
                raise ValueError(f"its deployment {o.deployment_key!r} was skipped")
            if o.media_key and o.media_key not in media:
                raise ValueError(f"its medium {o.media_key!r} was skipped")
        except ValueError as exc:
            out.skipped.append((where, str(exc)))
            continue
        out.observations.append(o)
    _events(out, media)
    _names(out, media)
    return out


def _medium(folder: Path, row: dict[str, str], where: str, deployments: dict[str, Deployment], key: str,
            licence: str, holder: str) -> Medium:
    capture = Capture(photo_id=0, time_source="camtrap-dp")
    _fill(capture, row, MEDIA_COLUMNS, skip=MEDIA_SPECIAL)
    deployment = deployments.get(capture.deployment_key)
    if deployment is None:
        raise ValueError(f"its deployment {capture.deployment_key!r} was skipped")
    capture.captured_at, capture.utc_offset, capture.utc_epoch = split_timestamp(row["timestamp"])
    ref = row["filePath"].strip()
    missing = ""
    if ref.lower().startswith(REMOTE):
        source = ref
    else:
        f = (folder / ref).resolve()
        source = str(f)
        if not f.is_relative_to(folder):  # (folder: resolved by read)
            missing = f"its filePath {ref!r} lies outside the package folder"
        elif not f.is_file():
            missing = f"its file {ref} is not in the package"
    if not missing and not (capture.media_type or "image/").startswith("image/"):
        missing = f"it is a {capture.media_type} file (videos are not read for now)"
    capture.extra["filePath"] = ref  # as the package wrote it (a URL, or relative to the package)
    photo = Photo(path=source, source="camtrap-dp", observed_on=datetime.fromisoformat(capture.captured_at).date(),
                  latitude=deployment.latitude, longitude=deployment.longitude, license=licence,
                  rights_holder=holder, extra={"camtrap_package": key, "mediaID": capture.media_key})
    return Medium(where, capture, photo, source, missing)


def _events(out: PackageContent, media: dict[str, Medium]) -> None:
    """Events from the observations' eventIDs, then time groups for the frames left without one."""
    events: dict[str, Event] = {}
    frames: dict[str, list[Medium]] = {}
    by_deployment: dict[str, list[Medium]] = {}
    for m in media.values():
        by_deployment.setdefault(m.capture.deployment_key, []).append(m)
    for o in out.observations:
        if not o.event_key:
            continue
        events.setdefault(o.event_key, Event(key=o.event_key, deployment_key=o.deployment_key))
        if o.level == "media" and o.media_key:
            _join(media[o.media_key], o.event_key, frames)
    timed = {d: sorted((m for m in items if m.capture.utc_epoch is not None), key=lambda m: m.capture.utc_epoch)
             for d, items in by_deployment.items()}
    epochs = {d: [m.capture.utc_epoch for m in items] for d, items in timed.items()}
    for o in out.observations:  # event-level: the deployment's frames within the event's time
        start, end = _epoch(o.event_start), _epoch(o.event_end)
        if o.level != "event" or not o.event_key or start is None or end is None or o.deployment_key not in timed:
            continue
        line = epochs[o.deployment_key]
        for m in timed[o.deployment_key][bisect_left(line, start):bisect_right(line, end)]:
            if m.capture.event_key is None:
                _join(m, o.event_key, frames)
    for deployment, items in by_deployment.items():
        alone = sorted((m for m in items if m.capture.event_key is None),
                       key=lambda m: (m.capture.utc_epoch is None, m.capture.utc_epoch or 0.0, m.capture.media_key))
        n, last = 0, None
        for m in alone:
            t = m.capture.utc_epoch
            if last is None or t is None or t - last > EVENT_GAP_S:
                n += 1
                while f"{deployment}#{n}" in events:
                    n += 1
                events[f"{deployment}#{n}"] = Event(key=f"{deployment}#{n}", deployment_key=deployment)
            _join(m, f"{deployment}#{n}", frames)
            last = t
    counts: dict[str, int] = {}  # individuals seen on a frame (media-level), or in an event (event-level)
    for o in out.observations:
        where = o.media_key if o.level == "media" else f"event:{o.event_key}"
        if o.count and where:
            counts[where] = counts.get(where, 0) + o.count
    for key, event in events.items():
        members = frames.get(key, [])
        times = sorted(m.capture.captured_at for m in members if m.capture.captured_at)
        event.start, event.end = (times[0], times[-1]) if times else (None, None)
        event.frames = len(members)
        per_frame = [counts[m.capture.media_key] for m in members if m.capture.media_key in counts]
        event.max_n = max(per_frame) if per_frame else counts.get(f"event:{key}")
    out.events = list(events.values())


def _join(m: Medium, event_key: str, frames: dict[str, list[Medium]]) -> None:
    if m.capture.event_key is None:
        m.capture.event_key = event_key
        frames.setdefault(event_key, []).append(m)


def _names(out: PackageContent, media: dict[str, Medium]) -> None:
    """A frame whose observations (its own, else its event's) name one species takes it as the photo's name,
    so that the taxon filter finds it."""
    names: dict[str, set[str]] = {}
    for o in out.observations:
        if o.scientific_name and o.type == "animal":
            where = o.media_key if o.level == "media" else f"event:{o.event_key}"
            names.setdefault(where, set()).add(o.scientific_name)
    for m in media.values():
        found = names.get(m.capture.media_key) or names.get(f"event:{m.capture.event_key}") or set()
        if len(found) == 1:
            m.photo.scientific_name = next(iter(found))
