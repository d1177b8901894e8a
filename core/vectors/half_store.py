"""The re-scoring store of a compressed index: every photo's full vector in float16, in a file that is
memory-mapped rather than read into memory (2 bytes x dimension per photo on disk; the pages a search
touches sit in the operating system's file cache, shared and reclaimable, not in the process's own
memory). An IVF-PQ search's short list is re-scored from it, and small filtered pools are scored exactly
from it.

Two append-only files: `<index>.f16` (row i: the vector, dimension x float16) and `<index>.f16.ids` (row i:
its photo id, int64). Rows are appended as the index grows; a checkpoint flushes them before the index file
is written, so after a crash the store holds at least the index's vectors and the writer cuts it back to
the index's length when it opens it (a reader only reads that many rows)."""
from __future__ import annotations

import logging
import mmap
import os
from pathlib import Path
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)

# Read-ahead. A page fault in the plain map makes the kernel read megabytes around the page: measured on this
# project's machine, 2,000 rows of a five-million-row store not in the file cache took 3.4-7.8 s that way (4.5 GB
# read around them), and 150 ms through a map with read-ahead off (one page a row). Read-ahead is still what
# fills the file cache when nothing else does, so the map without it is used only while `scattered_reads()`
# says so (core.vectors.warm_up: while the store is being read into the cache, or always when it is too large
# for that), and only for requests of fewer than 1/SCATTERED_SHARE of the rows (denser ones gain from it).
SCATTERED_SHARE = 50


def _never() -> bool:
    return False


class HalfStore:
    def __init__(self, path: Path, dim: int, rows: int | None = None, *, writer: bool = False):
        """Open (or create, for a writer) the store at `path`; `rows`: how many rows belong to the index
        (a writer cuts the files back to it; a reader reads no further)."""
        self.path, self.ids_path, self.dim = Path(path), Path(str(path) + ".ids"), dim
        if writer:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            for p in (self.path, self.ids_path):
                if not p.exists():
                    p.touch()
        on_disk = min(self._file_rows(), self.ids_path.stat().st_size // 8 if self.ids_path.exists() else 0)
        self.rows = on_disk if rows is None else min(rows, on_disk)
        if rows is not None and rows > on_disk:
            log.warning("float16 store %s holds %d rows, the index %d: the rest are not re-scored", path, on_disk, rows)
        if writer and on_disk > self.rows:
            self.truncate(self.rows)
        self.scattered_reads = _never  # whether few scattered rows are read with read-ahead off (see above)
        self._forget()

    def _forget(self) -> None:
        """Drop what was derived from the files (their maps, and how an id finds its row): they changed."""
        self._maps: tuple[int, np.ndarray, np.ndarray] | None = None
        self._scattered: tuple[int, np.ndarray] | None = None  # the vectors mapped with read-ahead off
        self._order: np.ndarray | None = None  # argsort of the ids when they were not appended in order
        self._first: int | None = None  # the first id when the ids run from it without a gap

    def _file_rows(self) -> int:
        return self.path.stat().st_size // (2 * self.dim) if self.path.exists() else 0

    def __len__(self) -> int:
        return self.rows

    def truncate(self, rows: int) -> None:
        with open(self.path, "r+b") as f:
            f.truncate(rows * 2 * self.dim)
        with open(self.ids_path, "r+b") as f:
            f.truncate(rows * 8)
        self.rows = rows
        self._forget()

    def append(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return
        with open(self.path, "ab") as f:
            f.write(np.ascontiguousarray(vectors, dtype=np.float16).tobytes())
        with open(self.ids_path, "ab") as f:
            f.write(ids.tobytes())
        self.rows += len(ids)
        self._forget()

    def flush(self) -> None:
        """Make the appended rows durable (before the index that counts them is written)."""
        for p in (self.path, self.ids_path):
            if p.exists():
                fd = os.open(p, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)

    def _mapped(self) -> tuple[np.ndarray, np.ndarray]:
        if self._maps is None or self._maps[0] != self.rows:
            if self.rows == 0:
                mat, ids = np.zeros((0, self.dim), np.float16), np.zeros(0, np.int64)
            else:
                mat = np.memmap(self.path, dtype=np.float16, mode="r", shape=(self.rows, self.dim))
                ids = np.memmap(self.ids_path, dtype=np.int64, mode="r", shape=(self.rows,))
            self._maps = (self.rows, mat, ids)
        return self._maps[1], self._maps[2]

    def ids(self) -> np.ndarray:
        return np.asarray(self._mapped()[1])

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """Row of each id, -1 where absent. Ids appended in ascending order (the usual case: new catalog ids)
        are searched in the mapped file itself, or, when they run without a gap (no photo ever removed), found
        by subtraction; otherwise an argsort is kept (8 bytes a photo of memory)."""
        ids = np.asarray(ids, dtype=np.int64)
        stored = self._mapped()[1]
        if not len(stored):
            return np.full(len(ids), -1, np.int64)
        if self._order is None:
            ascending = bool(np.all(stored[1:] > stored[:-1])) if len(stored) > 1 else True
            self._order = np.zeros(0, np.int64) if ascending else np.argsort(stored, kind="stable")
            # why: a binary search in the mapped ids touches ~20 of their pages per id (0.7 ms for a short
            # list of 640 at a million photos); without gaps the row is the id's distance from the first
            self._first = int(stored[0]) if ascending and int(stored[-1]) - int(stored[0]) == len(stored) - 1 \
                else None
        if self._first is not None:
            rows = ids - self._first
            return np.where((rows >= 0) & (rows < len(stored)), rows, -1)
        if len(self._order):
            sorted_ids = stored[self._order]
            pos = np.minimum(np.searchsorted(sorted_ids, ids), len(stored) - 1)
            return np.where(sorted_ids[pos] == ids, self._order[pos], -1)
        pos = np.minimum(np.searchsorted(stored, ids), len(stored) - 1)
        return np.where(stored[pos] == ids, pos, -1)

    def vectors(self, ids: Sequence[int]) -> np.ndarray:
        """float32 vectors of `ids` in that order; KeyError for an id not stored."""
        ids = np.asarray(ids, dtype=np.int64)
        rows = self.rows_of(ids)
        if (rows < 0).any():
            raise KeyError(f"photo id(s) not in the index: {ids[rows < 0][:5].tolist()}")
        return self.rows_matrix(rows)

    def rows_matrix(self, rows: np.ndarray) -> np.ndarray:
        """float32 copies of the given rows (read in file order, which keeps the disk reads forward); a few rows
        (a short list to re-score, a small pool) with read-ahead off while `scattered_reads()` (see above)."""
        if not len(rows):
            return np.zeros((0, self.dim), np.float32)
        order = np.argsort(rows, kind="stable")
        out = np.empty((len(rows), self.dim), np.float32)
        few = len(rows) * SCATTERED_SHARE < self.rows
        mat = self._scattered_map() if few and self.scattered_reads() else self._mapped()[0]
        out[order] = mat[rows[order]]
        return out

    def _scattered_map(self) -> np.ndarray:
        """The vectors through a map of their own whose page faults read no further than the page (MADV_RANDOM):
        where the OS has no such advice, the plain map."""
        if not hasattr(mmap, "MADV_RANDOM") or self.rows == 0:
            return self._mapped()[0]
        if self._scattered is None or self._scattered[0] != self.rows:
            with open(self.path, "rb") as f:
                view = mmap.mmap(f.fileno(), self.rows * self.dim * 2, access=mmap.ACCESS_READ)
            view.madvise(mmap.MADV_RANDOM)
            self._scattered = (self.rows, np.ndarray((self.rows, self.dim), np.float16, buffer=view))
        return self._scattered[1]

    def nbytes(self) -> int:
        return self.rows * (2 * self.dim + 8)
