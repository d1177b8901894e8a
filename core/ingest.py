"""Ingest: read photos from a source, skip duplicates and broken files with reasons, embed in batches, and
add them to the catalog and the index. Resumable (the index is checkpointed, the catalog follows it) and
incremental (known content hashes are not read twice)."""
from __future__ import annotations

import fcntl
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from PIL import Image

from core.backends.base import Embedder
from core.catalog import Catalog
from core.errors import InputError
from core.imageio import decode_image, load_image
from core.index_store import IndexStore
from core.media_store import keep_local
from core.records import Photo
from core.settings import Settings
from core.sources import SourceItem, content_hash, scan

Progress = Callable[[int, int], None]  # (done, total)


@dataclass
class IngestReport:
    source: str
    kind: str = ""
    seen: int = 0
    added: int = 0
    already: int = 0  # in the catalog from an earlier run
    duplicates: int = 0  # same content as another file of this run
    reembedded: int = 0  # catalog photos that had no vector yet (an interrupted run, a new model)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)
    ignored: list[str] = field(default_factory=list)  # not images by their suffix
    notices: list[str] = field(default_factory=list)
    index_kind: str = "flat"
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"source": self.source, "kind": self.kind, "seen": self.seen, "added": self.added,
                "already_indexed": self.already, "duplicates": self.duplicates, "reembedded": self.reembedded,
                "skipped": [{"path": n, "reason": r} for n, r in self.skipped], "ignored": self.ignored,
                "notices": self.notices, "index": self.index_kind, "seconds": round(self.seconds, 2)}


class Ingestor:
    def __init__(self, catalog: Catalog, index_store: IndexStore, embedder: Embedder, settings: Settings):
        self.catalog, self.store, self.embedder, self.settings = catalog, index_store, embedder, settings
        self._bad: dict[str, str] = {}  # content hash -> why it cannot be used

    def run(self, path: str | Path, progress: Progress | None = None) -> IngestReport:
        """Ingest every photo of `path` (folder, CSV or parquet); raises InputError only if `path` itself is
        unusable or another ingest is writing to the same data directory. Bad photos are skipped and listed
        in the report."""
        self.settings.path().mkdir(parents=True, exist_ok=True)
        with open(self.settings.path("ingest.lock"), "w") as lock:
            try:  # why: two ingests would both rewrite the index file and one's vectors would be lost
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise InputError(f"Another ingest is running in {self.settings.path()}",
                                 "wait for it to finish, then run this ingest again") from None
            try:
                return self._run(path, progress)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _run(self, path: str | Path, progress: Progress | None) -> IngestReport:
        started = time.perf_counter()
        source = scan(path, self.settings.path("media", Path(str(path)).stem))
        report = IngestReport(source=str(path), kind=source.kind, ignored=source.ignored, notices=list(source.notices))
        run_id = self.catalog.start_ingest(str(path))
        vs = self.catalog.vector_set(self.embedder.model_id, self.embedder.dim)
        index, rec = self.store.open(vs, self.catalog)
        report.notices += rec.notices()
        index_path = self.store.path_for(vs)
        pending: list[int] = []
        last_checkpoint = time.monotonic()

        def checkpoint() -> None:
            nonlocal last_checkpoint
            index.save(index_path)
            if pending:
                self.catalog.mark_indexed(vs.id, pending)
                pending.clear()
            last_checkpoint = time.monotonic()

        total = len(source.items)
        done = 0
        for batch, new in self._batches(source.items, vs.id, report):
            if batch.images:
                if new:
                    self.catalog.add_photos(batch.photos, run_id)
                vectors = self.embedder.embed_images(batch.images)
                index.add([p.id for p in batch.photos], vectors)
                pending += [p.id for p in batch.photos]
                if new:
                    report.added += len(batch.photos)
                else:
                    report.reembedded += len(batch.photos)
            if new:
                done += batch.seen
                if progress:
                    progress(done, total)
            if time.monotonic() - last_checkpoint >= self.settings.checkpoint_s:
                checkpoint()
        checkpoint()
        report.seen = total
        if self.settings.index_type != "flat":
            report.index_kind = index.build_approximate(
                self.settings.index_type, nlist=self.settings.index_nlist, pq_m=self.settings.index_pq_m,
                nprobe=self.settings.index_nprobe, hnsw_m=self.settings.hnsw_m, ef_search=self.settings.hnsw_ef_search)
            if report.index_kind != self.settings.index_type:
                report.notices.append(f"index: too few photos ({len(index)}) to train {self.settings.index_type}; "
                                      "the exact flat index is used")
            index.save(index_path)
        report.seconds = time.perf_counter() - started
        self.catalog.finish_ingest(run_id, report.to_json())
        return report

    # ---- batching with one batch prepared ahead (reading and decoding overlap the embedding) ----
    def _batches(self, items: list[SourceItem], vs_id: int, report: IngestReport) -> Iterator[tuple["_PreparedBatch", bool]]:
        for batch in self._resume_batches(vs_id, report):
            yield batch, False
        size = self.settings.batch_size
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        seen_hashes: dict[str, str] = {}
        self._bad.clear()
        with ThreadPoolExecutor(max_workers=1) as pool:
            future = pool.submit(self._prepare, chunks[0], seen_hashes, report) if chunks else None
            for i in range(len(chunks)):
                batch = future.result()
                future = pool.submit(self._prepare, chunks[i + 1], seen_hashes, report) if i + 1 < len(chunks) else None
                yield batch, True

    def _resume_batches(self, vs_id: int, report: IngestReport) -> Iterator["_PreparedBatch"]:
        """Catalog photos without a vector in this set (an interrupted run, or a new embedder)."""
        missing = self.catalog.unindexed_ids(vs_id)
        size = self.settings.batch_size
        for i in range(0, len(missing), size):
            photos, images = [], []
            for photo in self.catalog.get_photos(missing[i:i + size]):
                try:
                    images.append(load_image(photo.path, max_pixels=self.settings.max_image_pixels))
                    photos.append(photo)
                except InputError as exc:
                    report.skipped.append((photo.path, f"{exc.message}; fix the file and ingest again"))
            yield _PreparedBatch(photos, images, 0)

    def _prepare(self, chunk: list[SourceItem], seen: dict[str, str], report: IngestReport) -> "_PreparedBatch":
        """Read, hash and decode one chunk. `seen` maps content hashes of this run to the first file's name,
        or to a reason when that content could not be used (a copy of a broken file is broken too)."""
        read: list[tuple[SourceItem, bytes, str]] = []
        for item in chunk:
            try:
                data = item.read()
            except OSError as exc:
                report.skipped.append((item.name, f"cannot be read ({exc.strerror or exc}); check the path and permissions"))
                continue
            if not data:
                report.skipped.append((item.name, "is empty (0 bytes); re-download or re-export the file"))
                continue
            read.append((item, data, content_hash(data)))
        known = self.catalog.ids_for_hashes([h for _, _, h in read])
        photos, images = [], []
        for item, data, digest in read:
            if digest in self._bad:
                report.skipped.append((item.name, self._bad[digest]))
                continue
            if digest in seen:
                report.duplicates += 1
                if report.duplicates <= 20:  # a few examples; the count says the rest
                    report.notices.append(f"{item.name}: same content as {seen[digest]}; skipped")
                continue
            if digest in known:
                report.already += 1
                continue
            try:
                image = decode_image(data, name=item.name, max_pixels=self.settings.max_image_pixels)
            except InputError as exc:
                reason = f"{exc.message}; {exc.hint}" if exc.hint else exc.message
                self._bad[digest] = reason.replace(item.name, "the file")
                report.skipped.append((item.name, reason))
                continue
            seen[digest] = item.name
            photo = item.photo
            photo.sha256, photo.bytes, (photo.width, photo.height) = digest, len(data), image.size
            if item.save_to is not None:
                item.save_to.parent.mkdir(parents=True, exist_ok=True)
                if not item.save_to.exists():
                    item.save_to.write_bytes(data)
            photo.path = keep_local(photo, data, digest, self.settings.path("media"))  # remote photos: local copy
            photos.append(photo)
            images.append(image)
        return _PreparedBatch(photos, images, len(chunk))


@dataclass
class _PreparedBatch:
    photos: list[Photo]
    images: list[Image.Image]
    seen: int
