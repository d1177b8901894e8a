"""The vector index of one vector set: FAISS inner product over L2-normalised rows; the FAISS id is the
catalog photo id. The exact flat index is the canonical store (written atomically); an approximate index
(IVF-PQ or HNSW) can be built from it for large corpora and is used for whole-corpus searches."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence

import faiss
import numpy as np

from core.errors import ConfigError

SMALL_POOL = 50_000  # pools up to this size are scored exactly by one matrix product
REFINE_FACTOR = 32  # IVF-PQ returns k * this candidates, re-scored exactly


def set_threads(n: int) -> None:
    """Cap FAISS's OpenMP threads (0 leaves the library's default)."""
    if n > 0:
        faiss.omp_set_num_threads(n)


class VectorIndex:
    """Exact inner-product index with photo ids, plus an optional approximate twin."""

    def __init__(self, dim: int, flat: faiss.Index | None = None):
        self.dim = dim
        self.flat = flat if flat is not None else faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self.approx: faiss.Index | None = None
        self.approx_kind = "flat"
        self._row_of: dict[int, int] | None = None

    # ---- persistence ------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: Path, dim: int) -> "VectorIndex":
        """Open the flat index at `path` (and `path`.approx if present); a missing file gives an empty index."""
        if not Path(path).exists():
            return cls(dim)
        flat = faiss.read_index(str(path))
        if flat.d != dim:
            raise ConfigError(f"Index {path} has dimension {flat.d}, the embedder gives {dim}",
                              "delete the index file or re-run ingest to re-embed")
        index = cls(dim, flat)
        approx_path = Path(str(path) + ".approx")
        if approx_path.exists():
            approx = faiss.read_index(str(approx_path))
            if approx.ntotal == flat.ntotal:
                index.approx = approx
                inner_name = type(faiss.downcast_index(approx.index)).__name__
                index.approx_kind = "hnsw" if "HNSW" in inner_name else "ivfpq"
        return index

    def save(self, path: Path) -> None:
        """Write atomically: a temporary file in the same folder, then rename over the old one."""
        _atomic_write_index(self.flat, Path(path))
        if self.approx is not None:
            _atomic_write_index(self.approx, Path(str(path) + ".approx"))

    # ---- content ----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.flat.ntotal)

    def ids(self) -> np.ndarray:
        return faiss.vector_to_array(self.flat.id_map).astype(np.int64)

    def matrix(self) -> np.ndarray:
        """All stored vectors, row i belonging to ids()[i] (a view on FAISS memory, no copy)."""
        inner = faiss.downcast_index(self.flat.index)
        n = int(inner.ntotal)
        if n == 0:
            return np.zeros((0, self.dim), np.float32)
        return faiss.rev_swig_ptr(inner.get_xb(), n * self.dim).reshape(n, self.dim)

    def _rows(self) -> dict[int, int]:
        if self._row_of is None or len(self._row_of) != len(self):
            self._row_of = {int(i): r for r, i in enumerate(self.ids())}
        return self._row_of

    def add(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape[1] != self.dim:
            raise ConfigError(f"Vectors of dimension {vectors.shape[1]} do not fit an index of {self.dim}",
                              "the embedder changed: re-run ingest")
        self.flat.add_with_ids(vectors, np.asarray(ids, dtype=np.int64))
        self.approx, self._row_of = None, None  # the approximate twin is stale now

    def remove(self, ids: Sequence[int]) -> int:
        if not len(ids):
            return 0
        removed = self.flat.remove_ids(faiss.IDSelectorBatch(np.asarray(ids, dtype=np.int64)))
        self.approx, self._row_of = None, None
        return int(removed)

    def vectors(self, ids: Sequence[int]) -> np.ndarray:
        """The stored vectors of `ids` in that order; KeyError for an id not in the index."""
        rows = self._rows()
        return self.matrix()[[rows[int(i)] for i in ids]] if len(ids) else np.zeros((0, self.dim), np.float32)

    def contains(self, photo_id: int) -> bool:
        return int(photo_id) in self._rows()

    # ---- search -----------------------------------------------------------------------------------
    def search(self, queries: np.ndarray, k: int, pool: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, ids) per query row; ids of -1 pad short results. `pool` restricts the candidates:
        small pools are scored exactly, large ones through a FAISS id selector."""
        q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        if pool is None:
            index = self.approx if self.approx is not None else self.flat
            return index.search(q, k)
        pool = np.asarray(pool, dtype=np.int64)
        if len(pool) <= SMALL_POOL:
            return self._search_small_pool(q, k, pool)
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(pool))
        return self.flat.search(q, k, params=params)

    def _search_small_pool(self, q: np.ndarray, k: int, pool: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = self._rows()
        present = np.array([i for i in pool if int(i) in rows], dtype=np.int64)
        scores = np.full((len(q), k), -np.inf, np.float32)
        ids = np.full((len(q), k), -1, np.int64)
        if len(present) == 0:
            return scores, ids
        sims = q @ self.matrix()[[rows[int(i)] for i in present]].T
        take = min(k, len(present))
        for r in range(len(q)):
            # stable sort on (-score, id) so equal scores come out in a fixed order
            order = np.lexsort((present, -sims[r]))[:take]
            scores[r, :take], ids[r, :take] = sims[r, order], present[order]
        return scores, ids

    # ---- approximate twin -------------------------------------------------------------------------
    def build_approximate(self, kind: str, *, nlist: int = 0, pq_m: int = 64, nprobe: int = 32,
                          hnsw_m: int = 32, ef_search: int = 128, seed: int = 0) -> str:
        """Build an IVF-PQ or HNSW twin from the flat vectors; returns the kind in use ('flat' if the
        corpus is too small to train one)."""
        n = len(self)
        if kind == "flat" or n == 0:
            self.approx, self.approx_kind = None, "flat"
            return "flat"
        x, ids = np.ascontiguousarray(self.matrix()), self.ids()
        if kind == "hnsw":
            inner = faiss.IndexHNSWFlat(self.dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efSearch = ef_search
            approx = faiss.IndexIDMap2(inner)
        elif kind == "ivfpq":
            nlist = nlist or max(1, int(4 * np.sqrt(n)))
            if n < 39 * nlist or self.dim % pq_m:
                self.approx, self.approx_kind = None, "flat"
                return "flat"
            quantizer = faiss.IndexFlatIP(self.dim)
            ivf = faiss.IndexIVFPQ(quantizer, self.dim, nlist, pq_m, 8, faiss.METRIC_INNER_PRODUCT)
            ivf.cp.seed = seed
            rng = np.random.default_rng(seed)
            ivf.train(x[rng.choice(n, size=min(n, 64 * nlist), replace=False)])
            ivf.nprobe = nprobe
            # why refine: PQ codes alone reorder close neighbours; re-scoring a short list exactly restores them
            inner = faiss.IndexRefineFlat(ivf)
            inner.k_factor = REFINE_FACTOR
            approx = faiss.IndexIDMap2(inner)
        else:
            raise ConfigError(f"Unknown index type {kind!r}", "use flat, ivfpq or hnsw")
        approx.add_with_ids(x, ids)
        self.approx, self.approx_kind = approx, kind
        return kind


def _atomic_write_index(index: faiss.Index, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        faiss.write_index(index, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
