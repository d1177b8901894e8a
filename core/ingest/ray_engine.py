"""The Ray ingest engine: Ray Data actors embed in parallel (one model load per actor, on CPUs or GPUs)
while this process scans, hashes and commits.

Phase 1 (here): read and hash every item in threads, deduplicate against the catalog and the run, and
hand each new photo on as a local file path (bytes without a file of their own are written first: parquet
images to their media path, downloaded URLs to a spool folder). Phase 2 (Ray): `map_batches` actors read,
decode and embed. Phase 3 (here, in Ingestor): commit, the single SQLite writer and the FAISS
checkpoints, so a killed run resumes exactly once like the local engine.

Where Ray runs (a private instance on this machine, or the cluster named by `ray_address`), the check that
its workers can start, and the translation of Ray's failures into EcoLens's errors: core/ingest/ray_session.py.
The actors register the same plug-ins as this process (core.plugins.registry.loaded_modules)."""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import numpy as np

from core.backends.base import Embedder
from core.config import Settings
from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.ingest.decode import ReadItem, decode_for_embedding, read_and_hash
from core.ingest.local_files import FileRefused, read_bounded
from core.ingest.media_store import is_remote
from core.ingest.ray_session import bounded, check_workers, ray_session
from core.ingest.sources import SourceItem
from core.ingest.state import Deduper, EmbeddedBatch, IngestReport
from core.plugins.registry import loaded_modules

log = logging.getLogger(__name__)

HASH_CHUNK = 256  # items read and hashed per step of phase 1


def _gpus(settings: Settings) -> int:
    if settings.device not in ("auto", "cuda"):
        return 0
    try:
        import torch

        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except ImportError:
        return 0


class RayEngine:
    name = "ray"

    def __init__(self, embedder: Embedder, settings: Settings, workers: int = 0):
        self.embedder, self.settings = embedder, settings
        self.cores = os.cpu_count() or 1
        self.gpus = _gpus(settings)
        self.workers = workers if workers > 0 else (self.gpus or max(1, self.cores // 2))
        self.spool = settings.path("ingest-spool")
        self.plugins = loaded_modules()  # registered in the actors too

    def batches(self, resume: list[Photo], items: list[SourceItem], dedupe: Deduper,
                report: IngestReport) -> Iterator[EmbeddedBatch]:
        shutil.rmtree(self.spool, ignore_errors=True)  # left by a killed run: its photos are re-read anyway
        # phase 1: scan and hash
        rows: list[dict] = []
        waiting: dict[int, tuple[ReadItem | None, Photo | None]] = {}
        for photo in resume:
            key = len(waiting)
            waiting[key] = (None, photo)
            rows.append({"key": key, "path": photo.path})
        dropped = 0
        with ThreadPoolExecutor(max_workers=8, thread_name_prefix="ingest-hash") as pool:
            for i in range(0, len(items), HASH_CHUNK):
                chunk = items[i:i + HASH_CHUNK]
                fresh = dedupe.new_items(list(pool.map(read_and_hash, chunk)))
                dropped += len(chunk) - len(fresh)
                for r in fresh:
                    key = len(waiting)
                    rows.append({"key": key, "path": self._local_path(r, dedupe)})
                    r.data = b""  # the actor reads the file; the driver keeps only the hash
                    waiting[key] = (r, None)
        if dropped:
            yield EmbeddedBatch([], np.zeros((0, self.embedder.dim), np.float32), True, dropped)
        if not rows:
            return
        # phase 2: embed in Ray actors; phase 3: the caller commits what comes back
        try:
            with ray_session(self.settings, self.workers, self.gpus) as (ray, fitted):
                self.workers = report.workers = fitted
                check_workers(ray, self.plugins, self.settings)  # a worker that cannot start: said at once
                outs = self._dataset(rows).iter_batches(batch_size=None, batch_format="numpy")
                for out in bounded(outs, float(self.settings.ray_start_timeout_s)):
                    yield from self._collect(out, waiting, dedupe, report)
        finally:
            shutil.rmtree(self.spool, ignore_errors=True)

    def _local_path(self, r: ReadItem, dedupe: Deduper) -> str:
        """A file the actors can read: the item's own, its kept bytes (Deduper.keep_bytes), or a spooled copy."""
        kept = dedupe.keep_bytes(r)
        if kept:
            return kept
        path = r.item.photo.path
        if path and not is_remote(path) and Path(path).is_file():
            return path
        self.spool.mkdir(parents=True, exist_ok=True)
        spooled = self.spool / r.digest
        spooled.write_bytes(r.data)
        return str(spooled)

    def _dataset(self, rows: list[dict]):
        import ray.data

        bs = self.settings.batch_size
        threads = max(1, self.cores // self.workers)
        ds = ray.data.from_items(rows, override_num_blocks=max(1, min(len(rows) // bs, 4 * self.workers * 8)))
        # why a bound subclass instead of constructor arguments: Ray keeps those in the object store and
        # warns on every actor start
        bound = type("EmbedActor", (EmbedActor,), {"bound": (self.settings, threads, "cuda" if self.gpus else "cpu",
                                                             self.plugins)})
        with warnings.catch_warnings():  # ray_remote_args_fn is deprecated after 2.60 (pinned); still honoured
            warnings.simplefilter("ignore", DeprecationWarning)
            return ds.map_batches(bound, batch_size=bs, batch_format="numpy",
                                  compute=ray.data.ActorPoolStrategy(size=self.workers), num_cpus=1,
                                  num_gpus=(self.gpus / self.workers) if self.gpus else 0,
                                  ray_remote_args_fn=_no_restarts)

    def _collect(self, out: dict, waiting: dict, dedupe: Deduper, report: IngestReport) -> Iterator[EmbeddedBatch]:
        fresh_p, fresh_v, old_p, old_v = [], [], [], []
        resumed = 0  # rows of catalog photos being re-embedded: not source items, so not progress
        for j, key in enumerate(out["key"].tolist()):
            r, photo = waiting.pop(key)
            resumed += r is None
            error = str(out["error"][j])
            if r is not None and not error and str(out["digest"][j]) != r.digest:
                error = "changed while it was being ingested; ingest again"
            if error:
                if r is None:
                    report.skipped.append((photo.path, f"{error}; fix the file and ingest again"))
                else:
                    dedupe.failed(r, error)
                continue
            if r is None:
                old_p.append(photo)
                old_v.append(out["vector"][j])
            else:
                fresh_p.append(dedupe.photo_for(r, (int(out["width"][j]), int(out["height"][j]))))
                fresh_v.append(out["vector"][j])
        dim = self.embedder.dim
        if old_p:
            yield EmbeddedBatch(old_p, np.asarray(old_v, np.float32).reshape(-1, dim), False, 0)
        yield EmbeddedBatch(fresh_p, np.asarray(fresh_v, np.float32).reshape(-1, dim), True, len(out["key"]) - resumed)


def _no_restarts() -> dict:
    """A failed actor is not restarted: its error reaches the ingest (and Ray stays quiet about restarts)."""
    return {"max_restarts": 0}


class EmbedActor:
    """One Ray Data actor: loads the embedder once, then reads, decodes (threads) and embeds batches."""

    bound: tuple[Settings, int, str, tuple[str, ...]]  # (settings, torch threads, device, plug-ins): _dataset

    def __init__(self):
        settings, threads, device, plugins = self.bound

        from core.backends.registry import create_embedder
        from core.plugins.registry import load_modules

        load_modules(plugins)  # the same plug-ins as the main process (the demo world's embedder)

        try:
            import torch

            torch.set_num_threads(threads)
        except ImportError:
            pass
        self.settings = settings.replace(device=device if settings.device == "auto" else settings.device)
        self.embedder = create_embedder(self.settings)
        self.pool = ThreadPoolExecutor(max_workers=max(2, threads), thread_name_prefix="actor-decode")

    def _decode(self, path: str):
        try:
            data = read_bounded(path)
            image, size = decode_for_embedding(data, name=path, max_pixels=self.settings.max_image_pixels)
            return image, size, hashlib.sha256(data).hexdigest(), ""
        except InputError as exc:
            return None, (0, 0), "", f"{exc.message}; {exc.hint}" if exc.hint else exc.message
        except FileRefused as exc:
            return None, (0, 0), "", str(exc)
        except OSError as exc:
            return None, (0, 0), "", f"cannot be read ({exc.strerror or exc}); check the path and permissions"

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        decoded = list(self.pool.map(self._decode, [str(p) for p in batch["path"]]))
        ok = [i for i, d in enumerate(decoded) if d[0] is not None]
        vectors = np.zeros((len(decoded), self.embedder.dim), np.float32)
        if ok:
            vectors[ok] = self.embedder.embed_images([decoded[i][0] for i in ok])
        return {"key": batch["key"], "vector": vectors,
                "width": np.array([d[1][0] for d in decoded], np.int64),
                "height": np.array([d[1][1] for d in decoded], np.int64),
                "digest": np.array([d[2] for d in decoded], dtype=object),
                "error": np.array([d[3] for d in decoded], dtype=object)}
