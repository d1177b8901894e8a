"""A Camtrap DP package as an ingest source (`python app.py ingest PACKAGE`): its media with a file (beside the
package, or at a URL fetched through the bounded downloader and a HostGate) are read and embedded like any
photo; then `finish` writes what the package says into the camera-trap store: deployments, events, each
medium's capture and the observations, and the package's metadata (for the export).

A medium whose file cannot be had (not in the package, its host unreachable, a video, not a picture) stays
in the catalog as a photo without a vector: sha256 'media:<package>:<mediaID>', its path the URL or file it
names, with its deployment, time, event and observations (counted, filtered and exported; never found by
picture). Media-level observations with a box also become detections of their frame
(core.camtrap.observation_boxes). An ingest of the same package again finds its photos by content (or by that
placeholder) and writes the same rows again: nothing is added twice."""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from core.camtrap import camtrapdp_read, camtrapdp_validate, observation_boxes, package_files
from core.contracts.camtrap import CamtrapStore
from core.contracts.catalog import Catalog
from core.contracts.errors import InputError
from core.imageio import sha256_bytes
from core.ingest.downloads import DownloadPolicy
from core.ingest.host_gate import HostGate
from core.ingest.local_files import read_bounded
from core.ingest.sources import SourceItem, SourceScan
from core.ingest.state import IngestReport

log = logging.getLogger(__name__)

KIND = "camtrap-dp"


def placeholder_hash(package: str, media_key: str) -> str:
    return f"media:{package}:{media_key}"


def scan(path: Path, unpack_to: Path) -> SourceScan:
    """The package at `path` (folder, datapackage.json or .zip), checked and read; InputError when it cannot
    be used at all."""
    folder = package_files.locate(path, unpack_to)
    descriptor = package_files.read_descriptor(folder)
    checked = camtrapdp_validate.check(descriptor, folder)
    key = str(descriptor.get("id") or descriptor.get("name") or folder.name)
    content = camtrapdp_read.read(folder, descriptor, checked, key)
    if not content.deployments:
        raise InputError(f"{path}: no deployment of the package could be read", "see the rows named above")
    hooks = PackageHooks(content)
    items = [SourceItem(m.source, hooks.reader(m), m.photo) for m in content.media if not m.missing]
    scan_ = SourceScan(items, KIND, notices=checked.notices + content.notices, hooks=hooks)
    log.info("camtrap-dp %s: %d deployments, %d media (%d with a file to read), %d observations, %d events",
             path, len(content.deployments), len(content.media), len(items), len(content.observations),
             len(content.events))
    return scan_


class PackageHooks:
    """What the ingest asks of a package beyond its items: how its URLs are fetched, and what is written once
    its photos are in the catalog."""

    def __init__(self, content: camtrapdp_read.PackageContent):
        self.content = content
        self.gate: HostGate | None = None
        self._digests: dict[str, str] = {}  # mediaID -> content hash of the bytes read
        self._failed: dict[str, str] = {}  # mediaID -> why its file could not be read
        self._lock = threading.Lock()

    def bind(self, policy: DownloadPolicy) -> None:
        self.gate = HostGate(policy)

    def reader(self, medium: camtrapdp_read.Medium) -> Callable[[], bytes]:
        def read() -> bytes:
            try:
                if medium.source.lower().startswith(camtrapdp_read.REMOTE):
                    if self.gate is None:
                        self.gate = HostGate(DownloadPolicy())
                    data = self.gate.fetch(medium.source)
                else:
                    data = read_bounded(medium.source)
            except OSError as exc:
                with self._lock:
                    self._failed[medium.capture.media_key] = str(exc)
                raise
            with self._lock:
                self._digests[medium.capture.media_key] = sha256_bytes(data)
            return data
        return read

    def finish(self, catalog: Catalog, store: CamtrapStore | None, run_id: int, report: IngestReport) -> None:
        if store is None:
            raise RuntimeError("a Camtrap DP ingest needs the camera-trap store (Ingestor(camtrap=...))")
        c = self.content
        found = catalog.ids_for_hashes(sorted(set(self._digests.values())))
        ids = {k: found[h] for k, h in self._digests.items() if h in found}
        stand_ins = self._stand_ins(catalog, store)  # from an earlier ingest of this package
        # media kept without their file by an earlier ingest that have it now: their stand-ins go
        replaced = store.remove_stand_ins([stand_ins[k] for k in ids if k in stand_ins])
        without = [m for m in c.media if m.capture.media_key not in ids]
        new = []
        for m in without:
            key = m.capture.media_key
            m.photo.extra["file_missing"] = (m.missing or self._failed.get(key)
                                             or "its file could not be read as a picture")
            if key in stand_ins:
                ids[key] = stand_ins[key]
            else:
                m.photo.sha256 = placeholder_hash(c.key, key)
                new.append(m)
        if new:
            catalog.add_photos([m.photo for m in new], run_id)
            ids.update({m.capture.media_key: m.photo.id for m in new})
        store.upsert_deployments(c.deployments)
        store.upsert_events(c.events)
        captures = []
        for m in c.media:
            m.capture.photo_id = ids[m.capture.media_key]
            captures.append(m.capture)
        store.set_captures(captures)
        for o in c.observations:
            if o.media_key:
                o.photo_id = ids[o.media_key]
        store.add_observations(c.observations)
        # media-level boxes become detections of their frame (their crops are embedded at the end of the ingest)
        written, boxes = observation_boxes.store_boxes(store, c.observations)
        store.save_package(c.key, c.metadata)
        if boxes:
            report.notices.append(f"{boxes} observation boxes of the package are detections of their frames "
                                  f"({written} new or changed): their crops are searched beside the frames")
        self._report(report, without, len(new))
        if replaced:
            report.notices.append(f"{replaced} media kept earlier without their file have it now: they are "
                                  "searchable by picture (their stand-ins were replaced)")

    def _stand_ins(self, catalog: Catalog, store: CamtrapStore) -> dict[str, int]:
        """mediaID -> the photo standing in for it since an earlier ingest of this package: found through the
        captures first (why not by content hash: every stand-in's hash starts alike, and the catalog's hash index
        holds only the first bytes), then by hash for the media without a capture (an ingest cut short between
        adding the stand-ins and writing their captures; none at all the first time)."""
        c = self.content
        keys = [m.capture.media_key for m in c.media]
        prior = store.photo_ids_for_media(keys)
        photos = {p.id: p.sha256 for p in catalog.get_photos(sorted(set(prior.values())))} if prior else {}
        found = {k: pid for k, pid in prior.items() if photos.get(pid) == placeholder_hash(c.key, k)}
        hashes = {placeholder_hash(c.key, k): k for k in keys if k not in prior}
        found.update({hashes[h]: pid for h, pid in catalog.ids_for_hashes(sorted(hashes)).items()})
        return found

    def _report(self, report: IngestReport, without: list, new: int) -> None:
        c = self.content
        kept = {m.source for m in without}
        report.skipped = [s for s in report.skipped if s[0] not in kept]  # kept in the catalog, not skipped
        report.skipped += c.skipped
        report.notices.append(f"Camtrap DP package {c.key}: {len(c.deployments)} deployments, {len(c.media)} media, "
                              f"{len(c.observations)} observations, {len(c.events)} events"
                              + (f"; {len(c.skipped)} rows skipped" if c.skipped else ""))
        if without:
            reasons: dict[str, int] = {}
            for m in without:
                why = m.photo.extra.get("file_missing", "")
                reasons[_reason_kind(why)] = reasons.get(_reason_kind(why), 0) + 1
            report.notices.append(f"{len(without)} media are kept without their file ({new} new): they are counted, "
                                  "filtered and exported, but not found by picture ("
                                  + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
                                  + ")")
        if self.gate is not None:
            report.notices += self.gate.notices()


def _reason_kind(why: str) -> str:
    if "could not be reached" in why or "could not be resolved" in why or "no answer" in why or "was not tried" in why:
        return "on a host that could not be reached"
    if "not in the package" in why or "outside the package" in why:
        return "whose file is not in the package"
    if "videos" in why:
        return "videos"
    return "whose file could not be read"
