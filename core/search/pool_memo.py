"""The pools of a few recent filters, remembered for as long as the catalog stays as it was.

An ecologist runs many searches under the same filter (two months, a region, a genus); at millions of photos
naming its pool from the filter columns takes 5-8 ms at 5M photos (a pass over every photo's column) and the
FAISS selector made from it 1-1.5 ms, against 9-10 ms for the search it narrows (bench/scale.py). The memo
belongs to one view of the columns: a catalog that changed gets a new view, so a remembered pool is never
stale. Remembered pools are read-only arrays (a caller cannot change what the next search gets), which also
tells the vector index that a selector made from one may be kept (core.vectors.index)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Hashable

import numpy as np

MAX_BYTES = 64 * 2 ** 20  # at most this much of pools (8 bytes a photo: two 4M-photo pools); a larger one is not kept
MAX_POOLS = 8


class PoolMemo:
    def __init__(self, max_bytes: int = MAX_BYTES, max_pools: int = MAX_POOLS):
        self.max_bytes, self.max_pools = max_bytes, max_pools
        self._pools: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], np.ndarray]) -> np.ndarray:
        """The pool of `key`, made by `make()` the first time (outside the lock: two searches may both make it)."""
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                self._pools.move_to_end(key)
                return pool
        pool = make()
        if pool.nbytes > self.max_bytes:
            return pool
        pool.flags.writeable = False
        with self._lock:
            self._pools[key] = pool
            self._pools.move_to_end(key)
            while len(self._pools) > self.max_pools or sum(p.nbytes for p in self._pools.values()) > self.max_bytes:
                self._pools.popitem(last=False)
        return pool

    def __len__(self) -> int:
        return len(self._pools)
