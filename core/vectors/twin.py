"""Building the approximate twin of a VectorIndex (core.vectors.index): trained once on a sample (IVF-PQ) or
made as it is (HNSW), then every vector added to it, at most ivf.add_rows a FAISS call; a compressed index
started empty with its float16 store; the flat copy dropped once the twin holds the vectors. VectorIndex
takes these methods (the searching half is core.vectors.index's)."""
from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np

from core.contracts.errors import ConfigError
from core.vectors.faiss_files import c_stdout_muted
from core.vectors.half_store import HalfStore
from core.vectors.ivf import MIN_PER_LIST, TRAIN_PER_LIST, add_rows, default_nlist, trained_ivfpq


def new_flat(dim: int) -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def approx_kind_of(index: faiss.Index) -> str:
    inner = faiss.downcast_index(index.index) if isinstance(index, faiss.IndexIDMap2) else index
    return "hnsw" if "HNSW" in type(inner).__name__ else "ivfpq"


class ApproximateTwin:
    """The building half of VectorIndex: it reads and sets the index's dim, flat, approx, approx_kind, store,
    gpu, _gpu_copy and _lookup."""

    # ---- approximate twin -------------------------------------------------------------------------
    def ensure_approximate(self, kind: str, *, nlist: int = 0, pq_m: int = 64, nprobe: int = 32,
                           hnsw_m: int = 32, ef_search: int = 128, on_disk: Path | None = None,
                           keep_flat: bool = True, seed: int = 0, store_path: Path | None = None) -> str:
        """Make the approximate twin of `kind` exist and hold every vector: an existing twin of that kind
        is kept (new vectors were added to it as they came), otherwise one is trained on a sample. Returns
        the kind in use ('flat' while the corpus is too small to train IVF-PQ). `on_disk`: file for the IVF
        lists. `keep_flat` False drops the flat copy once a twin holds the vectors; with `store_path` its vectors
        are first written there in float16 (core.vectors.half_store), for re-scoring."""
        if kind == "flat" or len(self) == 0:
            if self.flat is None and self.approx is not None:  # back to exact: rebuild the flat copy
                self.flat = new_flat(self.dim)
                self.flat.add_with_ids(self.matrix_from_approx(), self.ids())
            self.approx, self.approx_kind = None, "flat"
            return "flat"
        if kind not in ("ivfpq", "hnsw"):
            raise ConfigError(f"Unknown index type {kind!r}", "use flat, ivfpq or hnsw")
        if self.approx is None or self.approx_kind != kind:
            if self.flat is None:
                raise ConfigError(f"The {self.approx_kind} index cannot become {kind} without the flat copy",
                                  "run `python app.py repair --reembed` to embed the photos again")
            built = self._train(kind, nlist, pq_m, nprobe, hnsw_m, ef_search, on_disk, seed)
            if built is None:
                return "flat"
            self.approx, self.approx_kind = built, kind
            self._add_all_to_approx()
        if not keep_flat:
            if store_path is not None and self.flat is not None and self.store is None:
                for p in (Path(store_path), Path(str(store_path) + ".ids")):
                    if p.exists():
                        p.unlink()
                self.store = HalfStore(store_path, self.dim, 0, writer=True)
                ids, mat = self.ids(), self.matrix()
                for i in range(0, len(ids), 100_000):
                    self.store.append(ids[i:i + 100_000], mat[i:i + 100_000])
            self.flat = None
            self._lookup = None
        return kind

    def matrix_from_approx(self) -> np.ndarray:
        return self.approx.reconstruct_batch(self.ids())

    def _train(self, kind, nlist, pq_m, nprobe, hnsw_m, ef_search, on_disk, seed) -> faiss.Index | None:
        n = len(self)
        if kind == "hnsw":
            inner = faiss.IndexHNSWFlat(self.dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efSearch = ef_search
            return faiss.IndexIDMap2(inner)
        nlist = nlist or default_nlist(n)
        if n < MIN_PER_LIST * nlist or self.dim % pq_m:
            return None
        rows = np.random.default_rng(seed).choice(n, size=min(n, TRAIN_PER_LIST * nlist), replace=False)
        ivf = trained_ivfpq(np.ascontiguousarray(self.matrix()[np.sort(rows)]), nlist, pq_m, nprobe, seed, self.gpu)
        ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # reconstruct by photo id
        if on_disk is not None:
            on_disk.parent.mkdir(parents=True, exist_ok=True)
            if on_disk.exists():
                on_disk.unlink()
            lists = faiss.OnDiskInvertedLists(nlist, ivf.code_size, str(on_disk))
            ivf.replace_invlists(lists, True)
            lists.this.disown()  # the index owns and frees it
        return ivf

    def _add_all_to_approx(self, chunk: int = 100_000) -> None:
        ids, mat = self.ids(), self.matrix()
        for i in range(0, len(ids), chunk):
            self._add_to_approx(np.ascontiguousarray(mat[i:i + chunk]), ids[i:i + chunk])

    def _add_to_approx(self, vectors: np.ndarray, ids: np.ndarray) -> None:
        """Add to the approximate twin, at most ivf.add_rows vectors a FAISS call (its encoding memory is
        bounded: ivf.ENCODE_BUDGET)."""
        self._gpu_copy = None
        step = add_rows(self.approx)
        for start in range(0, len(ids), step):
            self._add_rows_to_approx(np.ascontiguousarray(vectors[start:start + step]), ids[start:start + step])

    def _add_rows_to_approx(self, vectors: np.ndarray, ids: np.ndarray) -> None:
        """With a GPU, an IVF index's list assignment (the nearest of its centroids for every vector: most of
        the work) is computed there and the codes here."""
        with c_stdout_muted(self.on_disk):
            if self.gpu is not None and self.approx_kind == "ivfpq" and not isinstance(self.approx, faiss.IndexIDMap2):
                ivf = faiss.extract_index_ivf(self.approx)
                lists = self.gpu.assign(ivf.quantizer, vectors)
                ids = np.ascontiguousarray(ids, dtype=np.int64)
                ivf.add_core(len(ids), faiss.swig_ptr(vectors), faiss.swig_ptr(ids), faiss.swig_ptr(lists))
            else:
                self.approx.add_with_ids(vectors, ids)

    @property
    def on_disk(self) -> bool:
        """True when the approximate index's inverted lists live in a memory-mapped file."""
        ivf = faiss.try_extract_index_ivf(self.approx) if self.approx is not None else None
        return ivf is not None and isinstance(ivf.invlists, faiss.OnDiskInvertedLists) or (
            ivf is not None and "OnDisk" in type(faiss.downcast_InvertedLists(ivf.invlists)).__name__)

    def start_compressed(self, sample: np.ndarray, expected: int, store_path: Path, *, nlist: int = 0, pq_m: int = 16,
                         nprobe: int = 64, seed: int = 0, pq_bits: int = 8) -> bool:
        """Begin an empty index as an IVF-PQ index trained on `sample` (vectors drawn from a source of about
        `expected` vectors) with a float16 store at `store_path` and no flat copy: every vector added later
        goes to the compressed lists and to the store, and private memory stays the coarse quantizer plus the
        codes (pq_m x pq_bits / 8 + 8 bytes a photo). False (nothing changed) when the sample is too small to train or
        pq_m does not divide the dimension. Only an empty index can start so."""
        if len(self):
            raise ConfigError("A compressed index can only be started empty", "ingest into a new data directory")
        nlist = nlist or default_nlist(expected)
        if len(sample) < max(MIN_PER_LIST * nlist, 2 ** pq_bits) or self.dim % pq_m:
            return False  # (FAISS's k-means needs at least as many points as centroids)
        self.approx = trained_ivfpq(np.ascontiguousarray(sample, dtype=np.float32), nlist, pq_m, nprobe, seed,
                                    self.gpu, pq_bits)
        self.approx_kind, self.flat, self._lookup = "ivfpq", None, None
        for p in (Path(store_path), Path(str(store_path) + ".ids")):
            if p.exists():
                p.unlink()  # left by an earlier start that never reached a checkpoint
        self.store = HalfStore(store_path, self.dim, 0, writer=True)
        return True

    # kept for callers of the earlier name: builds (or keeps) the twin
    def build_approximate(self, kind: str, **kw) -> str:
        return self.ensure_approximate(kind, **kw)
