"""What one ingest run knows while it runs: its report, the content it has seen, and the batches its
engine hands to the committer. Shared by the local and the Ray engines so that both skip, count and
report exactly alike."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.contracts.catalog import Catalog
from core.contracts.records import Photo
from core.ingest.decode import ReadItem
from core.ingest.media_store import is_remote, keep_local

MAX_DUPLICATE_NOTICES = 20  # a few examples; the count says the rest


@dataclass
class IngestReport:
    source: str
    kind: str = ""
    seen: int = 0
    added: int = 0
    already: int = 0  # in the catalog from an earlier run
    duplicates: int = 0  # same content as another file of this run
    reembedded: int = 0  # catalog photos that had no vector yet (an interrupted run, a new model)
    updated: int = 0  # photos already in the catalog whose metadata this source changed (not embedded again)
    updated_fields: dict[str, int] = field(default_factory=dict)  # field -> photos it changed for
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)
    ignored: list[str] = field(default_factory=list)  # not images by their suffix
    notices: list[str] = field(default_factory=list)
    vector_notes: list[str] = field(default_factory=list)  # precomputed vectors beside the source: used, or why not
    index_kind: str = "flat"
    engine: str = "local"
    workers: int = 0
    seconds: float = 0.0
    crops: int = 0  # detection crops embedded (core.camtrap.crops)
    hashed: int = 0  # photos given their perceptual hashes (core.ingest.near_hashing)
    near_copies: int | None = 0  # of those, near-copies of another photo (None: not counted, a very large catalog)

    def to_json(self) -> dict:
        return {"source": self.source, "kind": self.kind, "seen": self.seen, "added": self.added,
                "already_indexed": self.already, "updated": self.updated, "updated_fields": dict(self.updated_fields),
                "duplicates": self.duplicates, "reembedded": self.reembedded,
                "skipped": [{"path": n, "reason": r} for n, r in self.skipped], "ignored": self.ignored,
                "notices": self.notices, "precomputed_vectors": self.vector_notes, "index": self.index_kind,
                "engine": self.engine, "workers": self.workers, "seconds": round(self.seconds, 2),
                "crops_embedded": self.crops, "hashed": self.hashed, "near_copies": self.near_copies}


@dataclass
class EmbeddedBatch:
    """Photos with their vectors, ready to commit. `new`: not yet in the catalog (else re-embedded);
    `seen`: source items this batch accounts for (progress)."""

    photos: list[Photo]
    vectors: np.ndarray
    new: bool
    seen: int


class Deduper:
    """Decides, in source order, which read items are new content: known hashes are counted as already in
    the catalog, repeats within the run as duplicates, and copies of a broken file are skipped like it."""

    def __init__(self, catalog: Catalog, report: IngestReport, media_dir: Path | None = None,
                 carries_metadata: bool = False):
        """`media_dir`: where the bytes of remote photos are kept (core.ingest.media_store); None keeps none.
        `carries_metadata`: the source says what the photos show (a CSV, a parquet; not a folder), so a photo
        already in the catalog is kept in `known` with its id, for its metadata to be updated."""
        self.catalog, self.report, self.media_dir = catalog, report, media_dir
        self.carries_metadata = carries_metadata
        self.known: list[tuple[int, Photo]] = []  # (catalog id, the source's record) of photos already indexed
        self.first: dict[str, str] = {}  # content hash -> name of the first file with it
        self.copies: dict[str, list[str]] = {}  # content hash -> names counted as its duplicates
        self.bad: dict[str, str] = {}  # content hash -> why it cannot be used

    def new_items(self, read: list[ReadItem]) -> list[ReadItem]:
        report = self.report
        ok = []
        for r in read:
            if r.error:
                report.skipped.append((r.item.name, r.error))
            else:
                ok.append(r)
        known = self.catalog.ids_for_hashes([r.digest for r in ok])
        out = []
        for r in ok:
            if r.digest in self.bad:
                report.skipped.append((r.item.name, self.bad[r.digest]))
            elif r.digest in self.first:
                report.duplicates += 1
                self.copies.setdefault(r.digest, []).append(r.item.name)
                if report.duplicates <= MAX_DUPLICATE_NOTICES:
                    report.notices.append(f"{r.item.name}: same content as {self.first[r.digest]}; skipped")
            elif r.digest in known:
                report.already += 1
                if self.carries_metadata:
                    self.known.append((known[r.digest], r.item.photo))
            else:
                self.first[r.digest] = r.item.name
                out.append(r)
        return out

    def failed(self, r: ReadItem, reason: str) -> None:
        """The item's bytes could not be decoded: skip it, and its copies seen so far, with the reason."""
        report = self.report
        report.skipped.append((r.item.name, reason))
        self.bad[r.digest] = reason.replace(r.item.name, "the file")
        for name in self.copies.pop(r.digest, []):
            report.duplicates -= 1
            report.skipped.append((name, self.bad[r.digest]))
            report.notices = [n for n in report.notices if not n.startswith(f"{name}: same content as")]
        self.first.pop(r.digest, None)

    def keep_bytes(self, r: ReadItem) -> str | None:
        """Write bytes that have no local file of their own: parquet images to their place under the data
        directory, remote photos under `media_dir` (the photo then points there). Returns that local path,
        or None when the item is a file already (or its bytes were dropped)."""
        item = r.item
        if item.save_to is not None:
            if r.data and not item.save_to.exists():
                item.save_to.parent.mkdir(parents=True, exist_ok=True)
                item.save_to.write_bytes(r.data)
            return str(item.save_to)
        if self.media_dir is not None and r.data and is_remote(item.photo.path):
            item.photo.path = keep_local(item.photo, r.data, r.digest, self.media_dir)
            return item.photo.path
        return None

    def photo_for(self, r: ReadItem, size: tuple[int, int]) -> Photo:
        """The item's photo record with content hash, byte count and original size, its bytes kept locally
        where they have no file of their own (keep_bytes)."""
        photo = r.item.photo
        photo.sha256, photo.bytes, (photo.width, photo.height) = r.digest, r.nbytes, size
        self.keep_bytes(r)
        return photo
