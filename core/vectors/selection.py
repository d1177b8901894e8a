"""Which rows a search may see: the flat copy's way from a photo id to its row, and FAISS selectors for a pool of
ids (a filter's photos)."""
from __future__ import annotations

import faiss
import numpy as np

BITMAP_MAX_ID = 1 << 27  # pools of ids below this use a bitmap selector (16 MB at most), others a hash set
DENSE_ID_SPAN = 4  # ids up to this many times the row count: id -> row is a table (4 bytes per id), else a search


def id_selector(pool: np.ndarray) -> tuple[faiss.IDSelector, object]:
    """A FAISS selector for `pool` and the buffer it reads (keep it alive while searching)."""
    top = int(pool.max()) + 1 if len(pool) else 1
    if top <= BITMAP_MAX_ID and pool.min(initial=0) >= 0:
        bits = np.zeros(top, dtype=bool)
        bits[pool] = True
        bitmap = np.packbits(bits, bitorder="little")
        # FAISS takes the bitmap's length in bytes: ids past it are outside the pool, never read
        return faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap)), bitmap
    return faiss.IDSelectorBatch(pool), pool


class RowLookup:
    """The flat copy's ids by row, and the way back from an id to its row: a table indexed by id when the ids
    are dense enough (the usual case: catalog ids from 1, a few removed), else a sorted copy searched."""

    def __init__(self, ids: np.ndarray):
        self.ids = ids
        top = int(ids.max()) + 1 if len(ids) else 0
        self.table: np.ndarray | None = None
        if len(ids) and ids.min() >= 0 and top <= DENSE_ID_SPAN * len(ids) + 1024:
            self.table = np.full(top, -1, dtype=np.int32 if len(ids) < 2 ** 31 else np.int64)
            self.table[ids] = np.arange(len(ids))
        else:
            order = np.argsort(ids, kind="stable")
            self.sorted_ids, self.order = ids[order], order

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        if self.table is not None:
            inside = (ids >= 0) & (ids < len(self.table))
            return np.where(inside, self.table[np.where(inside, ids, 0)], -1).astype(np.int64)
        if not len(self.sorted_ids):
            return np.full(len(ids), -1, np.int64)
        pos = np.minimum(np.searchsorted(self.sorted_ids, ids), len(self.sorted_ids) - 1)
        return np.where(self.sorted_ids[pos] == ids, self.order[pos], -1)
