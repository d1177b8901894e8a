"""A Camtrap DP 1.0 package out of the catalog: `write_package` writes datapackage.json, deployments.csv,
media.csv and observations.csv into a new folder, valid against the standard's profile and table schemas.

What goes in: without a list of photos, every photo that has a deployment, every deployment and every
observation (an imported package round-trips); with one (the photos a query's labels judged relevant), those
photos, their deployments, their observations and those of their events. Each medium's filePath is relative
to the package (the file copied into media/) or its URL, so a re-import finds it. Rows are made by
core.camtrap.camtrapdp_rows, the descriptor by core.camtrap.package_meta.

A deployment without coordinates takes the setting camtrap_default_place, or the export is
refused (before anything is written) with the fix: a deployments CSV. The package is written into a hidden
folder beside PATH and moved into place at the end, so a failed export leaves nothing half written."""
from __future__ import annotations

import csv
import json
import logging
import mimetypes
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from core.camtrap import camtrapdp_media, package_meta
from core.camtrap.camtrapdp_media import MediaFiles
from core.camtrap.camtrapdp_rows import (
    DEPLOYMENT_COLUMNS,
    MEDIA_COLUMNS,
    OBSERVATION_COLUMNS,
    cell,
    deployment_row,
    has_offset,
    machine_rows,
    media_row,
    observation_row,
    with_offset,
)
from core.camtrap.observation_boxes import is_imported
from core.contracts.camtrap import CamtrapFilters, Capture, Deployment, Observation
from core.contracts.errors import InputError
from core.contracts.records import Photo

log = logging.getLogger(__name__)

FILE_TIME_NOTE = "capture time unknown: the file's modification time is used"


@dataclass
class Written:
    deployments: int = 0
    media: int = 0
    observations: int = 0
    copied: int = 0
    notices: list[str] = field(default_factory=list)


def _tz(offset: str) -> timezone:
    sign = -1 if offset.startswith("-") else 1
    hours, minutes = offset[1:].split(":")
    return timezone(sign * timedelta(hours=int(hours), minutes=int(minutes)))


def default_place(settings: Any) -> tuple[float | None, float | None]:
    """The setting camtrap_default_place as (latitude, longitude); (None, None) when unset."""
    text = str(settings.camtrap_default_place or "").strip()
    if not text:
        return None, None
    try:
        lat, lon = (float(v) for v in text.split(","))
    except ValueError:
        lat = lon = float("nan")
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        raise InputError(f"camtrap_default_place = {text!r} is not a place",
                         "write it as 'LATITUDE,LONGITUDE' in decimal degrees, e.g. '51.18,5.66'")
    return lat, lon


class _Package:
    def __init__(self, store: Any, photos: Callable[[Sequence[int]], list[Photo]], settings: Any):
        self.store, self.photos, self.settings = store, photos, settings
        self.threshold = float(settings.detection_threshold)
        self.default_offset = str(settings.default_utc_offset or "+00:00")
        self.out = Written()
        self.assumed: set[str] = set()  # deployments for which an offset was assumed
        # deployment key -> (the time is doubtful, seconds since 1970, timestamp) of its media
        self.span: dict[str, list[tuple[bool, float, str]]] = {}

    # ---- what is written ----------------------------------------------------------------------------
    def select(self, ids: Sequence[int] | None) -> tuple[dict[int, Deployment], dict[int, Capture]]:
        deployments = {d.id: d for d in self.store.deployments()}
        if ids is None:
            found = self.store.camtrap_ids(CamtrapFilters(deployments=tuple(d.key for d in deployments.values())),
                                           self.threshold) if deployments else None
            ids = [] if found is None else [int(i) for i in found]
        captures = {pid: c for pid, c in self.store.captures(list(ids)).items() if c.deployment_id in deployments}
        if not captures:
            raise InputError("No photo to export has a camera-trap deployment" if ids else
                             "This catalog has no camera-trap photo with a deployment",
                             "ingest a Camtrap DP package, or a camera card with `python app.py ingest FOLDER "
                             "--deployments FILE.csv`, first")
        return deployments, captures

    def offset_of(self, d: Deployment, given: str | None = None) -> str:
        """The offset of a time of `d` that carries none: the frame's own, else the deployment's, else the
        setting default_utc_offset (then the deployment's timestampIssues is set)."""
        if given:
            return given
        if d.utc_offset:
            return d.utc_offset
        self.assumed.add(d.key)
        return self.default_offset

    def stamp(self, d: Deployment, text: str | None) -> str | None:
        """A time of `d` kept as given when it carries an offset, else with the deployment's (offset_of)."""
        if not text or has_offset(text):
            return with_offset(text, "")
        return with_offset(text, self.offset_of(d))

    def place(self, d: Deployment) -> tuple[float, float]:
        if d.latitude is not None and d.longitude is not None:
            return float(d.latitude), float(d.longitude)
        lat, lon = default_place(self.settings)
        if lat is None or lon is None:
            raise InputError(f"Deployment {d.key!r} has no coordinates, which Camtrap DP requires",
                             "give its latitude and longitude in a deployments CSV (`python app.py ingest FOLDER "
                             "--deployments FILE.csv`), or set camtrap_default_place = 'LATITUDE,LONGITUDE'")
        self.out.notices.append(f"deployment {d.key} has no coordinates: the configured default ({lat}, {lon}) "
                                "is written")
        return float(lat), float(lon)

    # ---- media --------------------------------------------------------------------------------------
    def timestamp(self, c: Capture, d: Deployment, photo: Photo) -> tuple[str | None, str | None]:
        """(timestamp with offset, comment about it) of a frame; (None, None) when it has no time at all."""
        if c.captured_at:
            return with_offset(c.captured_at, self.offset_of(d, c.utc_offset)), None
        epoch = c.utc_epoch
        if epoch is None and photo.path and "://" not in photo.path:
            try:
                epoch = os.stat(photo.path).st_mtime
            except OSError:
                epoch = None
        if epoch is None:
            return None, None
        when = datetime.fromtimestamp(epoch, _tz(self.offset_of(d, c.utc_offset))).replace(microsecond=0)
        return when.isoformat(), (None if c.utc_epoch is not None else FILE_TIME_NOTE)

    def media_rows(self, deployments: dict[int, Deployment], captures: dict[int, Capture], folder: Path
                   ) -> tuple[list[dict], dict[int, str], dict[int, str]]:
        """(media rows, photo id -> mediaID, photo id -> timestamp) in deployment then time order."""
        photos = {p.id: p for p in self.photos(sorted(captures))}
        # boxes made from imported observations are written as those observations, not again as a machine's
        detections = {pid: kept for pid, dets in self.store.detections(sorted(captures)).items()
                      if (kept := [d for d in dets if not is_imported(d)])}
        rows, ids, times, untimed, taken = [], {}, {}, [], set()
        files = MediaFiles(folder)
        order = sorted(captures, key=lambda pid: (deployments[captures[pid].deployment_id].key,
                                                  captures[pid].captured_at or "", pid))
        for pid in order:
            c, photo = captures[pid], photos.get(pid)
            if photo is None:
                continue
            d = deployments[c.deployment_id]
            media_id = camtrapdp_media.media_id(c, photo, pid, taken)
            taken.add(media_id)
            stamp, note = self.timestamp(c, d, photo)
            if stamp is None:
                untimed.append(media_id)
                continue
            path, name = files.place(photo, c, media_id)
            people = any(x.category == "person" and x.conf >= self.threshold for x in detections.get(pid, []))
            doubt = f"the camera's time is doubtful ({c.time_issue})" if c.time_issue else None
            comments = "; ".join(t for t in (c.comments, note, doubt) if t) or None
            kind = c.media_type or mimetypes.guess_type(name)[0] or "image/jpeg"
            rows.append(media_row(media_id, d.key, c, stamp, path, bool(c.file_public) and not people, name, kind,
                                  comments))
            ids[pid], times[pid] = media_id, stamp
            self.span.setdefault(d.key, []).append((bool(c.time_issue), datetime.fromisoformat(stamp).timestamp(),
                                                    stamp))
        if untimed:
            self.out.notices.append(f"{len(untimed)} frame(s) without any capture or file time left out "
                                    f"(e.g. {', '.join(untimed[:3])})")
        if files.missing:
            self.out.notices.append(f"{len(files.missing)} media file(s) could not be copied; their filePath names "
                                    f"a file the package lacks (e.g. {', '.join(files.missing[:3])})")
        self.out.copied = files.copied
        self.detections = detections
        return rows, ids, times

    # ---- observations -------------------------------------------------------------------------------
    def observation_rows(self, deployments: dict[int, Deployment], captures: dict[int, Capture],
                         media_ids: dict[int, str], times: dict[int, str], everything: bool) -> list[dict]:
        events = {e.id: e for e in self.store.events()}
        if everything:
            stored = self.store.observations()
        else:
            stored = self.store.observations(photo_ids=sorted(media_ids),
                                             event_ids=sorted({c.event_id for c in captures.values() if c.event_id}))
        by_key = {d.key: d for d in deployments.values()}
        rows, seen = [], set()
        for o in stored:
            row = self._stored(o, deployments, by_key, events, media_ids, times)
            if row is not None and row["observationID"] not in seen:
                seen.add(row["observationID"])
                rows.append(row)
        for pid, media_id in media_ids.items():
            c = captures[pid]
            for row in machine_rows(media_id, deployments[c.deployment_id].key, c.event_key, times[pid],
                                    self.detections.get(pid, []), self.threshold, bool(c.detector_looked)):
                if row["observationID"] not in seen:
                    seen.add(row["observationID"])
                    rows.append(row)
        return rows

    def _stored(self, o: Observation, deployments, by_key, events, media_ids, times) -> dict | None:
        d = deployments.get(o.deployment_id) or by_key.get(o.deployment_key or "")
        if d is None or (o.level == "media" and o.photo_id not in media_ids):
            return None
        if o.level == "media":
            start, end = o.event_start or times[o.photo_id], o.event_end or times[o.photo_id]
        else:
            event = events.get(o.event_id)
            start = o.event_start or (event.start if event else None)
            end = o.event_end or (event.end if event else None) or start
        start, end = self.stamp(d, start), self.stamp(d, end)
        if not start:
            return None
        event_key = o.event_key or (events[o.event_id].key if o.event_id in events else None)
        key = o.key or f"obs-{o.id}"
        return observation_row(o, key, d.key, media_ids.get(o.photo_id) if o.photo_id else None, event_key,
                               start, end, d.utc_offset or self.default_offset)

    # ---- deployments --------------------------------------------------------------------------------
    def deployment_rows(self, deployments: Sequence[Deployment]) -> list[dict]:
        rows = []
        for d in deployments:
            span = sorted(self.span.get(d.key, []), key=lambda t: t[1])  # by the moment, whatever the offsets
            times = [t for doubtful, _, t in span if not doubtful] or [t for _, _, t in span]  # a 1970 clock: not
            start = self.stamp(d, d.start) if d.start else (times[0] if times else None)
            end = self.stamp(d, d.end) if d.end else (times[-1] if times else None)
            if not start or not end:
                self.out.notices.append(f"deployment {d.key} has no start, end or media: left out")
                continue
            rows.append(deployment_row(d, start, end, d.key in self.assumed, self.place(d)))
        return rows


def _write_csv(path: Path, columns: Sequence[str], rows: Sequence[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([cell(row.get(c)) for c in columns])


def write_package(folder: Path | str, store: Any, photos: Callable[[Sequence[int]], list[Photo]], settings: Any,
                  ids: Sequence[int] | None = None) -> Written:
    """Write the package into `folder` (new, or empty); `ids`: only these photos (None: every camera-trap
    photo with a deployment). Returns what was written, with notices."""
    folder = Path(folder)
    pack = _Package(store, photos, settings)
    deployments, captures = pack.select(ids)
    used = {c.deployment_id for c in captures.values()}
    written = [d for d in deployments.values() if ids is None or d.id in used]
    for d in written:
        pack.place(d)  # a deployment without coordinates is refused before anything is written
    pack.out.notices.clear()
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        media, media_ids, times = pack.media_rows(deployments, captures, work)
        observations = pack.observation_rows(deployments, captures, media_ids, times, ids is None)
        deployment_rows = pack.deployment_rows(sorted(written, key=lambda d: d.key))
        if pack.assumed:
            pack.out.notices.append(f"no UTC offset was recorded for deployment(s) {', '.join(sorted(pack.assumed))}"
                                    f": {pack.default_offset} (setting default_utc_offset) was written and "
                                    "timestampIssues set")
        kept = {r["deploymentID"] for r in deployment_rows}
        source = package_meta.source_for(store, [d for d in written if d.key in kept])
        meta, notes = package_meta.descriptor(settings, deployment_rows, media, observations, source)
        _write_csv(work / "deployments.csv", DEPLOYMENT_COLUMNS, deployment_rows)
        _write_csv(work / "media.csv", MEDIA_COLUMNS, media)
        _write_csv(work / "observations.csv", OBSERVATION_COLUMNS, observations)
        (work / "datapackage.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        if folder.is_dir():
            folder.rmdir()  # empty (checked by the caller); a folder that filled meanwhile fails here
        work.rename(folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    pack.out.deployments, pack.out.media, pack.out.observations = len(deployment_rows), len(media), len(observations)
    pack.out.notices += notes
    log.info("camtrap-dp package %s: %d deployments, %d media (%d files copied), %d observations", folder,
             pack.out.deployments, pack.out.media, pack.out.copied, pack.out.observations)
    return pack.out
