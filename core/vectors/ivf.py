"""IVF-PQ facts of the vector index: how many lists a corpus gets, how the lists and codes are trained, and how
long the short list of candidates is that a search re-scores with the full vectors."""
from __future__ import annotations

import faiss
import numpy as np

from core.vectors.gpu import FaissGpu

TRAIN_PER_LIST = 50  # IVF training sample: this many vectors per list (trained once, on this sample)
MIN_PER_LIST = 39  # FAISS wants at least this many training vectors per list
# The short list: k x the refine factor candidates of an IVF-PQ search are re-scored exactly. Fewer bytes of code
# a photo tell close neighbours apart less well, so the factor follows the code size: REFINE_CODE_BYTES / bytes,
# never under REFINE_MIN (64-byte codes: 16, the factor that gave recall@10 0.95 at 1M photos; 16-byte codes: 64,
# which gave 0.953 at 1M and 0.961 at 2M; bench/scale.py). Setting index_refine_factor overrides it.
REFINE_CODE_BYTES = 1024
REFINE_MIN = 16
# ... for up to REFINE_AT candidates (the photos a search may return: all, or a filter's pool); the short list
# doubles for every doubling beyond, since the true neighbours crowd closer together than the PQ codes can
# tell apart: with PQ16 codes and 64 x k re-scored, recall@10 was 0.892 at 5M (128 x k: 0.938; 256 x k: 0.966,
# p95 34 ms; bench/scale.py, 2026-11-27)
REFINE_AT = 2_000_000
REFINE_MAX_GROWTH = 8  # at most 8x (16M candidates and up): each re-scored candidate is a random 1 KB read of the
# float16 store, so beyond that more bytes of code a photo (index_pq_m) keep the recall, not a longer list


# FAISS encodes the vectors of one add call with a table of distances per vector to every PQ centroid (pq_m x
# 2^pq_bits floats: 256 KB a vector for PQ16x12, 16 KB for PQ16x8), all of the call's tables at once (up to 262k
# vectors): 16,384 vectors of PQ16x12 took 4.8 GB at the 5M ingest (1.3 GB with 4,096). The rows of one call are
# bounded so that the tables stay under this many bytes.
ENCODE_BUDGET = 256 << 20
MIN_ADD_ROWS = 256


def add_rows(index: faiss.Index | None) -> int:
    """How many vectors one FAISS add call to `index` may take (all of them for an index without PQ codes)."""
    ivf = faiss.try_extract_index_ivf(index) if index is not None else None
    pq = getattr(faiss.downcast_index(ivf), "pq", None) if ivf is not None else None
    if pq is None:
        return 1 << 30
    return max(MIN_ADD_ROWS, ENCODE_BUDGET // (int(pq.M) * int(pq.ksub) * 4))


def default_nlist(n: int) -> int:
    """IVF lists for a corpus of n vectors: about 2 x sqrt(n)."""
    return max(1, int(2 * np.sqrt(n)))


def refine_factor_for(code_bytes: int) -> int:
    """The default refine factor for PQ codes of `code_bytes` bytes a photo (REFINE_CODE_BYTES)."""
    return max(REFINE_MIN, REFINE_CODE_BYTES // max(1, int(code_bytes)))


def short_list(k: int, candidates: int, refine_factor: int) -> int:
    """How many IVF-PQ candidates are re-scored for k results among `candidates` photos (REFINE_AT)."""
    grow = 1
    while candidates > REFINE_AT * grow and grow < REFINE_MAX_GROWTH:
        grow *= 2
    return k * refine_factor * grow


def trained_ivfpq(sample: np.ndarray, nlist: int, pq_m: int, nprobe: int, seed: int,
                  gpu: FaissGpu | None = None, pq_bits: int = 8) -> faiss.Index:
    """An empty inner-product IVF-PQ index (codes of pq_m x pq_bits bits) trained on `sample`; the k-means of
    its lists on a GPU when one is in use (core.vectors.gpu), else here."""
    dim = sample.shape[1]
    ivf = faiss.IndexIVFPQ(faiss.IndexFlatIP(dim), dim, nlist, pq_m, pq_bits, faiss.METRIC_INNER_PRODUCT)
    ivf.cp.seed = seed
    clustering = gpu.flat_ip(dim) if gpu is not None else None  # (kept referenced while FAISS uses it)
    if clustering is not None:
        ivf.clustering_index = clustering  # FAISS clusters with this index instead of the CPU quantizer
    ivf.train(sample)
    if gpu is not None:
        ivf.clustering_index = None
    ivf.nprobe = nprobe
    return ivf
