"""Baseline search over the catalog's index: text or example photo, inside the pool that filters allow.

The SearchService is also the corpus view every retrieval method builds on: pools, vectors, photos,
images and ranked lists."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from PIL import Image

from core.backends.registry import Backends
from core.catalog import Catalog, VectorSet
from core.errors import InputError, NotFoundError
from core.imageio import load_image
from core.index import VectorIndex
from core.index_store import IndexStore
from core.records import Filters, Hit, Photo
from core.settings import Settings

MAX_QUERY_CHARS = 2000


@dataclass
class SearchResult:
    """A ranked list plus everything needed to explain it; `stages` holds each method's artefacts."""

    query: str
    method: str
    hits: list[Hit]
    timings_ms: dict[str, float] = field(default_factory=dict)
    backends: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    stages: dict[str, Any] = field(default_factory=dict)
    filters: dict[str, Any] = field(default_factory=dict)
    pool_size: int | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"query": self.query, "method": self.method, "results": [h.to_json() for h in self.hits],
               "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()}, "backends": self.backends,
               "notices": self.notices, "pool_size": self.pool_size, "filters": self.filters}
        if self.stages:
            out["stages"] = self.stages
        return out


def clean_query(query: str) -> str:
    """The query stripped of surrounding space; InputError if it is empty or absurdly long."""
    q = " ".join((query or "").split())
    if not q:
        raise InputError("The query is empty", "type what you are looking for, e.g. 'a frog calling at night'")
    if len(q) > MAX_QUERY_CHARS:
        raise InputError(f"The query has {len(q)} characters, more than {MAX_QUERY_CHARS}",
                         "shorten it to the visual features you are looking for")
    return q


class SearchService:
    def __init__(self, catalog: Catalog, index_store: IndexStore, backends: Backends, settings: Settings):
        self.catalog, self.store, self.backends, self.settings = catalog, index_store, backends, settings
        self._index: VectorIndex | None = None
        self._vs: VectorSet | None = None
        self.startup_notices: list[str] = []

    # ---- the index of the current embedder --------------------------------------------------------
    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            emb = self.backends.embedder
            self._vs = self.catalog.vector_set(emb.model_id, emb.dim)
            self._index, rec = self.store.open(self._vs, self.catalog)
            self.startup_notices += rec.notices()
            if len(self._index) == 0 and self.catalog.count() > 0:
                self.startup_notices.append(
                    f"no photo is embedded with {emb.model_id} yet; run `python app.py ingest PATH` "
                    "again to embed the catalog with this model")
        return self._index

    def reload(self) -> None:
        """Forget the loaded index (after an ingest in this process)."""
        self._index = None

    # ---- the corpus view --------------------------------------------------------------------------
    def pool(self, filters: Filters | None) -> np.ndarray | None:
        """Photo ids a search may return, or None for the whole indexed corpus."""
        if filters is None or filters.is_empty():
            return None
        if filters.taxon and not self.catalog.taxon_known(filters.taxon):
            raise NotFoundError(f"No photo in the catalog has the taxon {filters.taxon!r}",
                                "check the spelling or use a higher rank (genus, family)")
        if filters.bbox:
            w, s, e, n = filters.bbox
            if not (-180 <= w <= 180 and -180 <= e <= 180 and -90 <= s <= n <= 90):
                raise InputError(f"Bounding box {filters.bbox} is not west,south,east,north in degrees",
                                 "e.g. --bbox -10.5,35,30,60 (longitudes -180..180, latitudes -90..90, south <= north)")
        if filters.date_from and filters.date_to and filters.date_from > filters.date_to:
            raise InputError("The start date is after the end date", "swap --date-from and --date-to")
        return np.asarray(self.catalog.filter_ids(filters), dtype=np.int64)

    def photos(self, ids: Sequence[int]) -> list[Photo]:
        return self.catalog.get_photos([int(i) for i in ids])

    def vectors(self, ids: Sequence[int]) -> np.ndarray:
        return self.index.vectors(ids)

    def load_image(self, photo: Photo) -> Image.Image:
        return load_image(photo.path, max_pixels=self.settings.max_image_pixels)

    def embed_query(self, query: str, notices: list[str] | None = None) -> np.ndarray:
        emb = self.backends.embedder
        limit = emb.max_text_tokens
        if notices is not None and limit and emb.count_tokens(query) > limit:
            notices.append(f"the query is longer than the text encoder's {limit} tokens; the rest was ignored")
        return emb.embed_texts([query])[0]

    def rank_vector(self, vector: np.ndarray, k: int, pool: np.ndarray | None) -> list[tuple[int, float]]:
        """(photo id, cosine) best first."""
        if len(self.index) == 0:
            return []
        scores, ids = self.index.search(vector[None, :], k, pool)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]

    def hits(self, ranked: Sequence[tuple[int, float]]) -> list[Hit]:
        """Ranked (id, score) pairs as Hits with their photos attached."""
        by_id = {p.id: p for p in self.photos([i for i, _ in ranked])}
        return [Hit(rank=r, photo_id=i, score=s, photo=by_id.get(i)) for r, (i, s) in enumerate(ranked, start=1)]

    # ---- baseline ---------------------------------------------------------------------------------
    def search(self, query: str = "", *, k: int | None = None, filters: Filters | None = None,
               image: Image.Image | None = None) -> SearchResult:
        """Baseline: cosine between the query (text, or an example photo) and the pool."""
        timings: dict[str, float] = {}
        notices: list[str] = []
        k = self.settings.k if k is None else k
        if k < 1:
            raise InputError(f"k={k} asks for no results", "ask for at least 1 result")
        t0 = time.perf_counter()
        if image is None:
            query = clean_query(query)
        pool = self.pool(filters)
        timings["filter"] = (time.perf_counter() - t0) * 1000
        t1 = time.perf_counter()
        vector = (self.backends.embedder.embed_images([image])[0] if image is not None
                  else self.embed_query(query, notices))
        timings["embed"] = (time.perf_counter() - t1) * 1000
        t2 = time.perf_counter()
        ranked = self.rank_vector(vector, k, pool)
        timings["search"] = (time.perf_counter() - t2) * 1000
        hits = self.hits(ranked)
        timings["total"] = (time.perf_counter() - t0) * 1000
        if pool is not None and len(pool) == 0:
            notices.append("no photo passes the filters")
        notices = self.startup_notices + notices
        return SearchResult(query=query or "(example photo)", method="baseline", hits=hits, timings_ms=timings,
                            backends=self.backends.describe(), notices=notices,
                            filters=_filters_json(filters), pool_size=None if pool is None else len(pool))


def _filters_json(filters: Filters | None) -> dict[str, Any]:
    if filters is None:
        return {}
    out: dict[str, Any] = {}
    for name in ("taxon", "license"):
        if getattr(filters, name):
            out[name] = getattr(filters, name)
    for name in ("date_from", "date_to"):
        if getattr(filters, name):
            out[name] = getattr(filters, name).isoformat()
    if filters.months:
        out["months"] = list(filters.months)
    if filters.bbox:
        out["bbox"] = list(filters.bbox)
    if filters.ids is not None:
        out["ids"] = len(filters.ids)
    return out
