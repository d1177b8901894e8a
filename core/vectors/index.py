"""The vector index of one vector set: FAISS inner product over L2-normalised rows; the FAISS id is the
catalog photo id.

Two parts. The exact flat copy (full precision, written atomically) is the reference: exact filtered
search, exact re-scoring, the source a damaged approximate index is rebuilt from. The approximate twin
(IVF-PQ or HNSW) serves whole-corpus searches of large corpora; it is trained once, on a sample, and every
later vector is added to it incrementally. Its IVF lists can live in a memory-mapped file (corpora larger
than RAM), and the flat copy can be dropped once the twin is trained (settings index_on_disk,
index_flat_copy). Building the twin is core.vectors.twin's (ApproximateTwin, which VectorIndex extends)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import faiss
import numpy as np

from core.contracts.errors import ConfigError
from core.vectors.faiss_files import atomic_write_index
from core.vectors.gpu import FaissGpu
from core.vectors.half_store import HalfStore
from core.vectors.ivf import REFINE_MIN, refine_factor_for, short_list
from core.vectors.selection import RowLookup, id_selector
from core.vectors.twin import ApproximateTwin, approx_kind_of, new_flat

SMALL_POOL = 4_096  # pools up to this size (or up to 1/SMALL_POOL_SHARE of the corpus) are scored exactly
SMALL_POOL_SHARE = 20  # from gathered rows; larger ones by FAISS with an id selector (it scans every row)
GPU_MAX_K = 2048


class VectorIndex(ApproximateTwin):
    """Exact inner-product index with photo ids, plus an optional approximate twin."""

    def __init__(self, dim: int, flat: faiss.Index | None = None, approx: faiss.Index | None = None,
                 store: HalfStore | None = None):
        self.dim = dim
        self.flat = flat if (flat is not None or approx is not None) else new_flat(dim)
        self.approx = approx
        self.approx_kind = approx_kind_of(approx) if approx is not None else "flat"
        self.store = store  # float16 vectors on disk for re-scoring, when there is no flat copy
        self.refine_factor = 0  # setting index_refine_factor; 0: from the code size (core.vectors.ivf)
        self.gpu: FaissGpu | None = None  # core.vectors.gpu: where training, list assignment and searches may run
        self._gpu_copy: faiss.Index | None = None  # the approximate index on the GPU, made at the first search
        self._lookup: RowLookup | None = None  # id <-> row of the flat copy, built when first needed
        # the selector of the last read-only pool (a remembered filter's, core.search.pool_memo): the next search
        # under the same filter gets the same array object, and a read-only one cannot have changed since
        self._selected: tuple[np.ndarray, faiss.IDSelector, object] | None = None

    def attach_store(self, path: Path, *, writer: bool = False) -> None:
        """Use the float16 store at `path` (core.vectors.half_store) if it exists: a writer cuts it back to
        the index's length (rows appended after the last checkpoint), a reader reads no further."""
        if self.flat is None and self.approx is not None and Path(path).exists():
            self.store = HalfStore(path, self.dim, int(self.approx.ntotal), writer=writer)

    # ---- persistence ------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: Path, dim: int, *, with_approx: bool = True) -> "VectorIndex":
        """Open the flat index at `path` and its twin at `path`.approx (either may be absent; both absent
        gives an empty index). FAISS's own errors pass through: core.vectors.integrity checks files first."""
        path, approx_path = Path(path), Path(str(path) + ".approx")
        flat = faiss.read_index(str(path)) if path.exists() else None
        approx = None
        if with_approx and approx_path.exists():
            approx = faiss.read_index(str(approx_path), faiss.IO_FLAG_ONDISK_SAME_DIR)
        for part in (flat, approx):
            if part is not None and part.d != dim:
                raise ConfigError(f"Index {path} has dimension {part.d}, the embedder gives {dim}",
                                  "run `python app.py repair` to rebuild it, or re-run ingest to re-embed")
        if flat is not None and approx is not None and approx.ntotal != flat.ntotal:
            approx = None  # behind the flat copy (a crash between two writes): rebuilt by the next ingest
        index = cls(dim, flat, approx)
        index.attach_store(Path(str(path) + ".f16"))
        return index

    def parts(self, path: Path) -> list[tuple[faiss.Index | None, Path]]:
        """(FAISS index or None, its file) for the flat copy and the approximate twin."""
        return [(self.flat, Path(path)), (self.approx, Path(str(path) + ".approx"))]

    def save(self, path: Path, write=None) -> None:
        """Write atomically (a temporary file in the same folder, renamed over the old one; `write(index,
        path)` replaces that, e.g. to add a checksum); a part that no longer exists is deleted."""
        if self.store is not None:  # its rows are durable before the index that counts them is written
            self.store.flush()
        for part, target in self.parts(path):
            if part is not None:
                (write or atomic_write_index)(part, target)
            elif target.exists():
                target.unlink()

    # ---- content ----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int((self.flat if self.flat is not None else self.approx).ntotal)

    @property
    def has_flat(self) -> bool:
        return self.flat is not None

    def ids(self) -> np.ndarray:
        if self.flat is not None:
            return faiss.vector_to_array(self.flat.id_map).astype(np.int64)
        if isinstance(self.approx, faiss.IndexIDMap2):
            return faiss.vector_to_array(self.approx.id_map).astype(np.int64)
        ivf = faiss.extract_index_ivf(self.approx)
        lists = ivf.invlists
        parts = [faiss.rev_swig_ptr(lists.get_ids(i), lists.list_size(i)).copy()
                 for i in range(ivf.nlist) if lists.list_size(i)]
        return np.sort(np.concatenate(parts)).astype(np.int64) if parts else np.zeros(0, np.int64)

    def matrix(self) -> np.ndarray:
        """All stored vectors, row i belonging to ids()[i] (a view on FAISS memory when the flat copy is
        kept; reconstructed, and for IVF-PQ approximate, when it is not)."""
        if self.flat is None:
            return self.vectors(self.ids())
        inner = faiss.downcast_index(self.flat.index)
        n = int(inner.ntotal)
        if n == 0:
            return np.zeros((0, self.dim), np.float32)
        return faiss.rev_swig_ptr(inner.get_xb(), n * self.dim).reshape(n, self.dim)

    def _rows(self) -> RowLookup:
        if self._lookup is None or len(self._lookup.ids) != len(self):
            self._lookup = RowLookup(self.ids())
        return self._lookup

    def _rows_of(self, ids: np.ndarray) -> np.ndarray:
        """Row of each id in the flat copy, -1 where absent (vectorised)."""
        return self._rows().rows_of(np.asarray(ids, dtype=np.int64))

    def add(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ConfigError(f"Vectors of dimension {vectors.shape[-1]} do not fit an index of {self.dim}",
                              "the embedder changed: re-run ingest")
        ids = np.asarray(ids, dtype=np.int64)
        if self.flat is not None:
            self.flat.add_with_ids(vectors, ids)
        if self.approx is not None:  # why: trained once; later vectors join it without retraining
            self._add_to_approx(vectors, ids)
        if self.store is not None:
            self.store.append(ids, vectors)
        self._lookup = None

    def remove(self, ids: Sequence[int]) -> int:
        if not len(ids):
            return 0
        sel = faiss.IDSelectorBatch(np.asarray(ids, dtype=np.int64))
        self._gpu_copy = None
        removed = int(self.flat.remove_ids(sel)) if self.flat is not None else 0
        if self.approx is not None:
            try:
                removed = max(removed, int(self.approx.remove_ids(sel)))
            except RuntimeError:  # HNSW and on-disk lists cannot remove: rebuilt from the flat copy
                if self.flat is None:
                    raise
                self.approx, self.approx_kind = None, "flat"
        self._lookup = None
        return removed

    def vectors(self, ids: Sequence[int]) -> np.ndarray:
        """The stored vectors of `ids` in that order; KeyError for an id not in the index."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return np.zeros((0, self.dim), np.float32)
        if self.flat is None and self.store is not None:
            return self.store.vectors(ids)
        if self.flat is None:
            try:
                return self.approx.reconstruct_batch(ids)
            except RuntimeError:
                raise KeyError(f"photo id(s) not in the index: {ids[:5].tolist()}") from None
        rows = self._rows_of(ids)
        if (rows < 0).any():
            raise KeyError(f"photo id(s) not in the index: {ids[rows < 0][:5].tolist()}")
        return self.matrix()[rows]

    def holds(self, ids: Sequence[int]) -> np.ndarray:
        """Which of `ids` have a vector here (a boolean mask, vectorised): a photo kept without its file (a
        Camtrap DP medium on a host not reached) is in the catalog but not here."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return np.zeros(0, bool)
        if self.flat is None and self.store is not None:
            return self.store.rows_of(ids) >= 0
        if self.flat is not None:
            return self._rows_of(ids) >= 0
        return np.isin(ids, self.ids())

    def contains(self, photo_id: int) -> bool:
        return bool(self.holds([photo_id])[0])

    # ---- search -----------------------------------------------------------------------------------
    def search(self, queries: np.ndarray, k: int, pool: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, ids) per query row; ids of -1 pad short results. `pool` restricts the candidates:
        small pools are scored exactly, large ones through a FAISS id selector (bitmap or hash set)."""
        q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        if pool is None:
            return self._search_all(q, k)
        pool = np.asarray(pool, dtype=np.int64)
        if len(pool) <= SMALL_POOL or len(pool) * SMALL_POOL_SHARE <= len(self):
            return self._search_small_pool(q, k, pool)
        if self.flat is not None:
            return self._search_flat_rows(q, k, pool)
        sel, _keep = self._selector(pool)
        if self.approx_kind == "hnsw":
            params = faiss.SearchParametersHNSW(sel=sel, efSearch=max(k, self._ef_search()))
        else:  # a sparse pool needs more lists probed to fill k
            ivf = faiss.extract_index_ivf(self.approx)
            share = len(pool) / max(1, len(self))
            params = faiss.SearchParametersIVF(sel=sel, nprobe=min(ivf.nlist, int(np.ceil(ivf.nprobe / share))))
            if self.store is not None:  # the filter is applied inside the IVF scan; the short list re-scored
                _, short = self.approx.search(q, self.short_list(k, len(pool)), params=params)
                return self._rescore(q, k, short)
        return self.approx.search(q, k, params=params)

    def short_list(self, k: int, candidates: int) -> int:
        """How many IVF-PQ candidates are re-scored for k results among `candidates` photos (core.vectors.ivf)."""
        return short_list(k, candidates, self.refine())

    def refine(self) -> int:
        """The refine factor in use: the setting's, or the default for this index's code size."""
        if self.refine_factor:
            return int(self.refine_factor)
        ivf = faiss.try_extract_index_ivf(self.approx) if self.approx is not None else None
        return refine_factor_for(ivf.code_size) if ivf is not None else REFINE_MIN

    def _selector(self, pool: np.ndarray) -> tuple[faiss.IDSelector, object]:
        last = self._selected
        if last is not None and last[0] is pool:
            return last[1], last[2]
        sel, keep = id_selector(pool)
        if not pool.flags.writeable:
            self._selected = (pool, sel, keep)
        return sel, keep

    def _search_flat_rows(self, q: np.ndarray, k: int, pool: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A large pool on the flat copy: FAISS scans the inner flat index with a bitmap of the pool's rows,
        and the rows found are turned back into ids here. Why not the id map's own search with an id
        selector: that wraps the selector in a translation (row -> id -> bit) that FAISS runs for every one of
        the corpus's rows; at a million rows it cost about a third of the search (bench/scale.py)."""
        lookup = self._rows()
        rows = lookup.rows_of(pool)
        sel, _keep = id_selector(rows[rows >= 0])
        inner = faiss.downcast_index(self.flat.index)
        scores, found = inner.search(q, k, params=faiss.SearchParameters(sel=sel))
        return scores, np.where(found >= 0, lookup.ids[np.maximum(found, 0)], -1)

    def _ef_search(self) -> int:
        return int(faiss.downcast_index(self.approx.index).hnsw.efSearch)

    def _search_all(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.approx is None:
            return self.flat.search(q, k)
        searched = self._searched_whole()
        if self.approx_kind != "ivfpq" or (self.flat is None and self.store is None):
            return searched.search(q, k)
        # why refine: PQ codes reorder close neighbours; re-scoring a short list exactly restores them
        short_k = self.short_list(k, len(self))
        if searched is not self.approx:  # FAISS's GPU IVF searches return at most GPU_MAX_K per query
            short_k = min(short_k, GPU_MAX_K)
        _, short = searched.search(q, short_k)
        return self._rescore(q, k, short)

    def _searched_whole(self) -> faiss.Index:
        """The index an unfiltered search asks: the GPU copy of an IVF index when a GPU is in use."""
        if self.gpu is None or self.approx_kind != "ivfpq" or self.on_disk:
            return self.approx
        if faiss.downcast_index(faiss.extract_index_ivf(self.approx)).pq.nbits != 8:
            return self.approx  # FAISS's GPU IVF-PQ takes 8-bit codes only: searched here
        if self._gpu_copy is None:
            self._gpu_copy = self.gpu.copy(self.approx)
        return self._gpu_copy

    def _rescore(self, q: np.ndarray, k: int, short: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The best k of each query's short list by the stored full vectors (float32 flat copy or float16)."""
        scores = np.full((len(q), k), -np.inf, np.float32)
        ids = np.full((len(q), k), -1, np.int64)
        for r in range(len(q)):
            cand = short[r][short[r] >= 0]
            if not len(cand):
                continue
            sims = self.vectors(cand) @ q[r]
            order = np.lexsort((cand, -sims))[:k]
            scores[r, :len(order)], ids[r, :len(order)] = sims[order], cand[order]
        return scores, ids

    def _search_small_pool(self, q: np.ndarray, k: int, pool: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.flat is not None:
            rows = self._rows_of(pool)
            present, rows = pool[rows >= 0], rows[rows >= 0]
            mat = self.matrix()[rows] if len(rows) else None
        elif self.store is not None:
            rows = self.store.rows_of(pool)
            present, rows = pool[rows >= 0], rows[rows >= 0]
            mat = self.store.rows_matrix(rows) if len(rows) else None
        else:
            present = pool[np.isin(pool, self.ids())]
            mat = self.vectors(present) if len(present) else None
        scores = np.full((len(q), k), -np.inf, np.float32)
        ids = np.full((len(q), k), -1, np.int64)
        if mat is None:
            return scores, ids
        take = min(k, len(present))
        for r in range(len(q)):
            sims = mat @ q[r]  # why per row: a matrix-vector product; a 1-row GEMM wakes every BLAS thread
            top = np.argpartition(-sims, take - 1)[:take] if take < len(present) else np.arange(len(present))
            # stable sort on (-score, id) so equal scores come out in a fixed order
            order = top[np.lexsort((present[top], -sims[top]))]
            scores[r, :take], ids[r, :take] = sims[order], present[order]
        return scores, ids
