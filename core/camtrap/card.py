"""A camera card (or any folder, CSV or parquet) as the ingest reads it: every photo's EXIF capture facts, its
deployment from the folder layout (deployment_pattern) and the deployments CSV, written to the camera-trap
store at the end of the ingest, and the touched deployments' events grouped again.

The ingest makes one CardIngest (`begin`, which refuses a bad deployments CSV or pattern before anything is
written), whose reader hook sees each photo's bytes once as they are read for hashing (core.ingest.decode):
the EXIF date fills the photo's date when its source gave none, its GPS (else the deployment's place) its
place. `finish` writes the captures of the photos the catalog now holds (new and already known: a second
ingest with a corrected deployments CSV corrects the times), the deployments and the events, and reports:
lying EXIF (with the files named), videos skipped."""
from __future__ import annotations

import logging
import mimetypes
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.camtrap import events as event_grouping
from core.camtrap.capture_time import CaptureTime, offset_problem, resolve
from core.camtrap.deployments import (
    DeploymentPattern,
    deployment_keys,
    read_deployments_csv,
)
from core.camtrap.exif import ExifFacts, read_exif
from core.contracts.camtrap import Capture, Deployment
from core.contracts.errors import InputError

log = logging.getLogger(__name__)

VIDEO_SUFFIXES = {".mp4", ".avi", ".mov", ".mkv", ".m4v", ".wmv", ".3gp", ".mts", ".webm"}
VIDEO_REASON = "is a video: videos are not read yet (only its photos are ingested)"
NAMED = 5  # files named in a notice; the count says the rest
CHUNK = 5000
NO_DEPLOYMENTS = "none"  # deployment_pattern value: no folder is a deployment (EXIF facts are still read)
OWN_TIME_SOURCES = (None, "exif", "file-time")  # times a card may replace (a Camtrap DP timestamp stays)


@dataclass(frozen=True, slots=True)
class _Seen:
    name: str
    path: str
    facts: ExifFacts
    time: CaptureTime
    deployment: str | None


class CardIngest:
    def __init__(self, store, settings, deployments: list[dict[str, Any]], keys: dict[str, str]):
        self.store, self.settings = store, settings
        stored = {d.key: d for d in store.deployments()} if store is not None else {}
        self.given = {r["key"]: Deployment(**r) for r in deployments}  # the CSV's rows: they replace stored ones
        self.known = {**stored, **self.given}
        self.keys = keys  # photo path -> deployment key (folder layout)
        self.seen: dict[str, _Seen] = {}  # content hash -> what its EXIF said
        self._lock = threading.Lock()

    def bind(self, items) -> None:
        for item in items:
            item.on_read = self.read

    def read(self, item, data: bytes, digest: str) -> None:
        """The reader hook: one photo's bytes, as read for hashing (called on the decoding threads)."""
        facts = read_exif(data, item.name)
        key = self.keys.get(item.photo.path)
        dep = self.known.get(key) if key else None
        time = resolve(facts, clock_offset_s=dep.clock_offset_s if dep else 0.0,
                       deployment_offset=dep.utc_offset if dep else None,
                       default_offset=self.settings.default_utc_offset)
        photo = item.photo
        if photo.observed_on is None and time.observed_on is not None:
            photo.observed_on = time.observed_on
        if photo.latitude is None and photo.longitude is None:
            if facts.latitude is not None:
                photo.latitude, photo.longitude = facts.latitude, facts.longitude
            elif dep is not None and dep.latitude is not None and dep.longitude is not None:
                photo.latitude, photo.longitude = dep.latitude, dep.longitude
        if facts.is_empty() and key is None:
            return  # a plain photo: no capture row
        with self._lock:
            self.seen[digest] = _Seen(item.name, photo.path, facts, time, key)

    def finish(self, catalog, report) -> None:
        """Write deployments, captures and events for what this ingest read; add its notices to `report`."""
        videos = [f for f in report.ignored if Path(f).suffix.lower() in VIDEO_SUFFIXES]
        if videos:
            report.ignored = [f for f in report.ignored if f not in set(videos)]
            report.skipped += [(f, VIDEO_REASON) for f in videos]
        lying = sorted((s.name, s.time.time_issue) for s in self.seen.values() if s.time.time_issue)
        if lying:
            named = "; ".join(f"{n} ({why})" for n, why in lying[:NAMED])
            more = f" and {len(lying) - NAMED} more" if len(lying) > NAMED else ""
            one = len(lying) == 1
            report.notices.append(f"{len(lying)} photo{'' if one else 's'} carr{'ies' if one else 'y'} an EXIF time "
                                  "that cannot be true, kept out of the date, time-of-day and event filters: "
                                  f"{named}{more} (how to fix: set the camera's clock; give the deployment's "
                                  "clock_offset_s in a deployments CSV, or its utc_offset, and ingest again)")
            log.warning("ingest %s: %d photos with lying EXIF times, e.g. %s", report.source, len(lying), named)
        if self.store is None:
            return
        used = {s.deployment for s in self.seen.values() if s.deployment}
        fresh = [Deployment(key=k) for k in sorted(used) if k not in self.known]
        self.store.upsert_deployments(list(self.given.values()) + fresh)
        ids = catalog.ids_for_hashes(list(self.seen))
        captures = self._captures(ids)
        for i in range(0, len(captures), CHUNK):
            self.store.set_captures(captures[i:i + CHUNK])
        touched = used | {c.deployment_key for c in captures if c.deployment_key}
        made = event_grouping.regroup(self.store, sorted(touched), self.settings.event_gap_s,
                                      self.settings.detection_threshold)
        if captures or self.given:
            report.notices.append(
                f"camera traps: {len(captures)} photo{'s' if len(captures) != 1 else ''} with capture facts, "
                f"{sum(1 for c in captures if c.captured_at)} with a capture time; deployments: "
                f"{', '.join(sorted(touched | set(self.given))) or 'none'}; {made} event{'s' if made != 1 else ''}")

    def _captures(self, ids: dict[str, int]) -> list[Capture]:
        existing = self.store.captures(list(ids.values()))
        out = []
        for digest, pid in ids.items():
            s = self.seen[digest]
            old = existing.get(pid)
            mine: dict[str, Any] = {"file_name": Path(s.path).name if s.path else None,
                                    "media_type": mimetypes.guess_type(s.path)[0] if s.path else None,
                                    "camera_make": s.facts.make or None, "camera_model": s.facts.model or None,
                                    "camera_serial": s.facts.serial or None}
            if old is None or old.time_source in OWN_TIME_SOURCES:
                mine.update(captured_at=s.time.captured_at, utc_offset=s.time.utc_offset, utc_epoch=s.time.utc_epoch,
                            time_issue=s.time.time_issue, time_source="exif" if s.time.captured_at else None)
            if old is None:
                out.append(Capture(photo_id=pid, deployment_key=s.deployment, **mine))
            else:
                cleared = ("utc_offset", "utc_epoch", "time_issue")  # a corrected time may clear these
                keep = {k: v for k, v in mine.items() if v is not None or k in cleared}
                dep = {"deployment_id": None, "deployment_key": s.deployment} if s.deployment else {}
                out.append(replace(old, event_key=None, **dep, **keep))
        return out


def begin(store, settings, source, root: Path | None, deployments_csv: str | None) -> CardIngest:
    """The card step of one ingest, bound to the source's items; raises InputError for a bad deployments CSV or
    deployment_pattern (before anything is written)."""
    problem = offset_problem(settings.default_utc_offset)
    if problem:
        raise InputError(f"The default_utc_offset setting: {problem}",
                         "set it to the offset of the cameras' zone, e.g. +02:00 or -05:00 (settings reference)")
    rows = read_deployments_csv(deployments_csv) if deployments_csv else []
    off = settings.deployment_pattern.strip().lower() == NO_DEPLOYMENTS
    pattern = None if off else DeploymentPattern(settings.deployment_pattern)
    keys: dict[str, str] = {}
    if pattern is not None and source is not None and source.kind == "folder" and root is not None:
        keys = deployment_keys(root, [str(i.photo.path) for i in source.items], pattern)
    card = CardIngest(store, settings, rows, keys)
    if source is not None:
        card.bind(source.items)
    return card
