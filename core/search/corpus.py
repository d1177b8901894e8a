"""The corpus view every search builds on: the catalog and the index of the current embedder. It answers
which photos a search may return (the pool), their stored vectors, metadata and pixels, and ranks a vector
inside a pool. Searching itself (every method) is core.search.engine.SearchEngine."""
from __future__ import annotations

import logging
import os
import threading
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np
from PIL import Image

from core.camtrap.boxes import box_json
from core.camtrap.crop_index import CropIndex, merge
from core.camtrap.pool import CamtrapPool
from core.config import Settings
from core.contracts import bounds
from core.contracts.catalog import Catalog, VectorSet
from core.contracts.errors import InputError, NotFoundError
from core.contracts.records import Filters, Hit, Photo
from core.imageio import load_image
from core.search.filter_columns import FilterColumns
from core.served import not_fetched, url_host
from core.vectors.gpu import choose as choose_gpu
from core.vectors.index import VectorIndex
from core.vectors.index_store import IndexStore
from core.vectors.integrity import checksum_path
from core.vectors.warm_up import StoreWarmUps, WarmUp

log = logging.getLogger(__name__)


class Corpus:
    def __init__(self, catalog: Catalog, index_store: IndexStore, embedder, settings: Settings, camtrap=None):
        """`embedder` (model_id, dim) decides which vector set and index are searched; `camtrap`: the camera-trap
        store (core.contracts.camtrap.CamtrapStore), whose detections' crops are searched beside the frames."""
        self.catalog, self.store, self.embedder, self.settings = catalog, index_store, embedder, settings
        self.camtrap = camtrap
        self._crops: CropIndex | None = None
        self.camtrap_pool = CamtrapPool(camtrap, settings.detection_threshold) if camtrap is not None else None
        self._index: VectorIndex | None = None
        self._vs: VectorSet | None = None
        self._generation: tuple | None = None  # what the index files on disk looked like when loaded
        self._lock = threading.Lock()
        self.startup_notices: list[str] = []
        # the float16 re-scoring store read into the file cache when the index opens (core.vectors.warm_up)
        self.warm_ups = StoreWarmUps(settings.index_warm_share)
        self.warm_up: WarmUp | None = None  # the latest pass started
        # the filters' columns beside the index (the catalog answers while they are made, or if they cannot be)
        self.filter_columns = FilterColumns(catalog, settings.path("index", "filter-columns"),
                                            enabled=settings.filter_columns)

    # ---- the index of the current embedder --------------------------------------------------------
    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            emb = self.embedder
            self._vs = self.catalog.vector_set(emb.model_id, emb.dim)
            index, rec = self.store.open(self._vs, self.catalog)
            self._generation = self._on_disk()
            index.refine_factor = self.settings.index_refine_factor
            self.warm_up = self._warm(index) or self.warm_up
            index.gpu, gpu_notice = choose_gpu(self.settings.device)
            self.startup_notices += [gpu_notice] if gpu_notice else []
            self._index = index
            self.startup_notices += rec.notices()
            if len(self._index) == 0 and self.catalog.count() > 0:
                self.startup_notices.append(
                    f"no photo is embedded with {emb.model_id} yet; run `python app.py ingest PATH` "
                    "again to embed the catalog with this model")
        return self._index

    def _warm(self, index: VectorIndex) -> WarmUp | None:
        """Read the index's float16 store into the file cache in the background, if it fits, and tell the store
        how to read scattered rows meanwhile (core.vectors.warm_up); the pass started, if any."""
        if index.store is None:
            return None
        run = self.warm_ups.warm(index.store.path)
        index.store.scattered_reads = self.warm_ups.scattered_reads(index.store.path)
        return run

    def reload(self) -> None:
        """Forget the loaded index (after an ingest in this process)."""
        self._index = None

    def _on_disk(self) -> tuple | None:
        """The index generation: (mtime, size, inode) of the index file, its approximate twin and their
        checksum records. Ingest replaces the files atomically at every checkpoint, so a changed stat means
        new content (or damage: anything else that wrote to them)."""
        if self._vs is None:
            return None
        out = []
        flat = self.store.path_for(self._vs)
        approx = Path(str(flat) + ".approx")
        for path in (flat, approx, checksum_path(flat), checksum_path(approx)):
            try:
                st = os.stat(path)
                out.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append(None)
        return tuple(out)

    def follow_catalog(self) -> list[str]:
        """Checked before every search: when the index files changed on disk since they were loaded (another
        process's ingest, or damage), open them again the way start-up does (IndexStore.open: the checksum
        records, FAISS's reading, the vectors themselves, agreement with the catalog), so new photos are
        searched without a restart. Damage is repaired as at start-up when no ingest is running; while one
        is, the index loaded before goes on being searched. Returns notices for the user (each also a log
        line)."""
        if self._index is None or self._vs is None:
            return []
        now = self._on_disk()
        if now == self._generation:
            return []
        with self._lock:
            if now == self._generation:
                return []
            before = len(self._index)
            try:
                fresh, rec = self.store.open(self._vs, self.catalog, known=self._index)
            except Exception:  # an unreadable file the checks did not catch: keep searching what was loaded
                log.exception("the index of %s changed on disk but could not be read", self._vs.model_id)
                self._generation = now
                return ["the photo index changed on disk but could not be read; the photos known before are "
                        "searched (see the log; run `python app.py repair`)"]
            notices = rec.notices()
            if rec.repair_needed:  # damaged, and an ingest is running: the index loaded before stays
                log.error("the index of %s changed on disk and is damaged; searching the %d photos loaded before",
                          self._vs.model_id, before)
                self._generation = now
                return notices + [f"the photos known before ({before}) are searched until the index is repaired"]
            fresh.refine_factor = self.settings.index_refine_factor
            self.warm_up = self._warm(fresh) or self.warm_up
            fresh.gpu = self._index.gpu
            self._index, self._generation = fresh, self._on_disk()  # a repair may have written the files again
        if rec.damage:
            log.warning("the index of %s was damaged on disk and repaired while serving: %d -> %d photos",
                        self._vs.model_id, before, len(fresh))
            return notices
        added = len(fresh) - before
        log.info("index of %s reloaded from disk: %d -> %d photos", self._vs.model_id, before, len(fresh))
        if added > 0:
            return notices + [f"{added} new photo{'s' if added != 1 else ''} joined the catalog since the last search "
                    f"(added by an ingest) and {'is' if added == 1 else 'are'} searched now"]
        if added < 0:
            return notices + [f"{-added} photo{'s' if added != -1 else ''} left the index since the last search"]
        return notices

    # ---- the corpus view --------------------------------------------------------------------------
    def pool(self, filters: Filters | None, notices: list[str] | None = None,
             hidden: list[np.ndarray] | None = None) -> np.ndarray | None:
        """Photo ids a search may return, or None for the whole indexed corpus. The camera-trap filters
        (filters.camtrap; empty frames are hidden even without them) narrow the other filters' pool; what they
        leave out is said in `notices`, when given (empty frames hidden from a search with no filter go into
        `hidden` instead, when given: core.camtrap.pool.CamtrapPool.narrow)."""
        camtrap = filters.camtrap if filters is not None else None
        pool = self._plain_pool(replace(filters, camtrap=None) if camtrap is not None else filters)
        if self.camtrap_pool is None:
            return pool
        pool, said = self.camtrap_pool.narrow(pool, camtrap, lambda: self.index.ids(), hidden)
        if notices is not None:
            notices += said
        return pool

    def _plain_pool(self, filters: Filters | None) -> np.ndarray | None:
        if filters is None or filters.is_empty():
            return None
        bounds.text("taxon", filters.taxon, 200)
        bounds.text("licence", filters.license, 200)
        known = self.filter_columns.taxon_known(filters.taxon) if filters.taxon else True
        if not (self.catalog.taxon_known(filters.taxon) if known is None else known):
            raise NotFoundError(f"No photo in the catalog has the taxon {filters.taxon!r}",
                                "check the spelling or use a higher rank (genus, family)")
        if filters.bbox:
            w, s, e, n = filters.bbox
            if not (-180 <= w <= 180 and -180 <= e <= 180 and -90 <= s <= n <= 90):
                raise InputError(f"Bounding box {filters.bbox} is not west,south,east,north in degrees",
                                 "e.g. --bbox -10.5,35,30,60 (longitudes -180..180, latitudes -90..90, south <= north)")
        if filters.date_from and filters.date_to and filters.date_from > filters.date_to:
            raise InputError("The start date is after the end date", "swap --date-from and --date-to")
        pool = self.filter_columns.pool(filters)
        for notice in self.filter_columns.notices:
            if notice not in self.startup_notices:
                self.startup_notices.append(notice)
        return np.asarray(self.catalog.filter_ids(filters), dtype=np.int64) if pool is None else pool

    def taxon_names(self, limit: int = 5000) -> list[tuple[str, str]]:
        """(name, rank) of the catalog's taxon and common names, most photographed first (the web app's taxon
        choices and suggestions); asked of the catalog again only when it has grown."""
        count = self.catalog.count()
        cached = getattr(self, "_taxa", None)
        if cached is None or cached[0] != (count, limit):
            cached = ((count, limit), [(name, rank) for name, rank, _ in self.catalog.taxon_names(limit)])
            self._taxa = cached
        return list(cached[1])

    def places(self, limit: int = 2000) -> list[tuple[float, float]]:
        """(latitude, longitude) of up to `limit` photos, spread over the catalog: the Filters map's points
        (asked on every page load; read from the catalog again only when it has grown, as taxon_names)."""
        count = self.catalog.count()
        cached = getattr(self, "_places", None)
        if cached is None or cached[0] != (count, limit):
            cached = ((count, limit), list(self.catalog.places(limit)))
            self._places = cached
        return list(cached[1])

    def photos(self, ids: Sequence[int]) -> list[Photo]:
        return self.catalog.get_photos([int(i) for i in ids])

    def untaxed(self, ids: Sequence[int]) -> set[int]:
        return self.catalog.untaxed([int(i) for i in ids])

    def vectors(self, ids: Sequence[int]) -> np.ndarray:
        return self.index.vectors(ids)

    def unembedded(self, pool: np.ndarray | None) -> int:
        """How many photos of `pool` (None: the catalog) have no vector to compare (kept without their file)."""
        if pool is None:
            return max(0, self.catalog.count() - len(self.index))
        pool = np.asarray(pool, dtype=np.int64)
        return int(len(pool) - self.index.holds(pool).sum()) if len(pool) else 0

    def embedded(self, ids: Sequence[int]) -> list[int]:
        """Those of `ids` the index has a vector of, in their order (a photo kept without its file has none)."""
        ids = [int(i) for i in ids]
        return [i for i, held in zip(ids, self.index.holds(ids)) if held]

    def near_hashes(self, ids: Sequence[int]) -> dict[int, bytes]:
        """The photos' perceptual hashes (core.vectors.near_copies); photos not hashed yet are left out."""
        return self.catalog.near_hashes([int(i) for i in ids])

    def load_image(self, photo: Photo) -> Image.Image:
        host = url_host(photo.path)
        if host is not None:  # kept by its URL, never fetched: not "moved or deleted after ingest"
            raise InputError(*not_fetched(photo.id, host))
        return load_image(photo.path, max_pixels=self.settings.max_image_pixels, max_side=bounds.WORKING_SIDE,
                          shown=f"photo {photo.id} ({Path(photo.path).name})")

    def rank_vector(self, vector: np.ndarray, k: int, pool: np.ndarray | None,
                    matched: dict[int, int] | None = None) -> list[tuple[int, float]]:
        """(photo id, cosine) best first: a photo's cosine is the better of its frame's and its best detection
        crop's; the photos a crop won for go into `matched` (photo id -> detection id)."""
        if len(self.index) == 0:
            return []
        scores, ids = self.index.search(vector[None, :], k, pool)
        frames = [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]
        crops = self.crops
        if crops is None:
            return frames
        return merge(frames, crops.best(vector, k, pool, self.settings.detection_threshold), k, matched)

    # ---- detection crops (core.camtrap.crop_index) ------------------------------------------------
    @property
    def crops(self) -> CropIndex | None:
        """The crop index of the current vector set, read again when an ingest wrote it; None when it has no
        crop (a catalog without detections searches frames alone, as before)."""
        if self.camtrap is None:
            return None
        self.index  # noqa: B018 (opens the vector set)
        crops = self._crops
        if crops is None or crops.changed_on_disk():
            crops = CropIndex(self.store.root, self._vs.id, self._vs.dim)
            if crops.stamp() is not None:
                crops.load()
            self._crops = crops
        return crops if len(crops) else None

    @property
    def searches_crops(self) -> bool:
        return self.crops is not None

    def crop_box(self, detection_id: int) -> tuple[float, float, float, float] | None:
        """The box of a detection that has a crop vector (for the judge's view of the animal)."""
        crops = self.crops
        found = crops.box(detection_id) if crops is not None else None
        return found[1] if found else None

    def matched_items(self, matched: dict[int, int]) -> dict[int, dict]:
        """photo id -> the search JSON item of the detection its match went through (core.camtrap.boxes.box_json)."""
        if not matched or self.camtrap is None:
            return {}
        stored = self.camtrap.detections(list(matched))
        out = {}
        for photo, det in matched.items():
            found = next((d for d in stored.get(photo, []) if d.id == det), None)
            if found is not None:
                out[photo] = box_json(found)
        return out

    def hits(self, ranked: Sequence[tuple[int, float]]) -> list[Hit]:
        """Ranked (id, score) pairs as Hits with their photos attached."""
        by_id = {p.id: p for p in self.photos([i for i, _ in ranked])}
        return [Hit(rank=r, photo_id=i, score=s, photo=by_id.get(i)) for r, (i, s) in enumerate(ranked, start=1)]
