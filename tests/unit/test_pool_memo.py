"""A remembered filter's pool (core.search.pool_memo): the same read-only array for the same filter, bounded in
count and bytes, and the vector index keeps the selector of such a pool for the next search under it."""
from __future__ import annotations

import numpy as np
import pytest

from core.contracts.records import Filters
from core.search.pool_memo import PoolMemo
from core.vectors import index as index_module
from core.vectors.index import VectorIndex
from core.vectors.selection import id_selector


def test_the_same_filter_gets_the_same_read_only_pool_made_once():
    memo, made = PoolMemo(), []

    def make():
        made.append(1)
        return np.arange(5, dtype=np.int64)

    first = memo.get(Filters(months=(5, 6)), make)
    again = memo.get(Filters(months=(5, 6)), make)
    assert again is first and len(made) == 1
    with pytest.raises(ValueError):
        first[0] = 99  # a caller cannot change what the next search gets
    assert memo.get(Filters(months=(7,)), make) is not first and len(made) == 2


def test_the_memo_is_bounded_in_pools_and_in_bytes():
    memo = PoolMemo(max_bytes=8 * 100, max_pools=3)
    for i in range(5):
        memo.get(("f", i), lambda: np.zeros(10, np.int64))
    assert len(memo) == 3  # the oldest went first
    big = memo.get(("big",), lambda: np.zeros(101, np.int64))
    assert big.flags.writeable and len(memo) == 3  # larger than the whole budget: given, not kept
    memo.get(("half", 1), lambda: np.zeros(60, np.int64))
    memo.get(("half", 2), lambda: np.zeros(60, np.int64))
    assert len(memo) == 1  # two of 480 bytes do not fit in 800


def test_the_index_keeps_the_selector_of_a_read_only_pool_only(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((12000, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = VectorIndex(16)  # compressed: a pool over 4,096 is a selector in the IVF scan
    assert index.start_compressed(vecs[::2], 12000, tmp_path / "v.faiss.f16", nlist=20, pq_m=4, nprobe=8)
    index.add(np.arange(1, 12001), vecs)
    made = []
    monkeypatch.setattr(index_module, "id_selector", lambda pool: made.append(len(pool)) or id_selector(pool))
    pool = np.arange(1, 6001, dtype=np.int64)
    pool.flags.writeable = False
    first = index.search(vecs[:1], 5, pool)
    second = index.search(vecs[1:2], 5, pool)
    assert len(made) == 1 and set(first[1][0]) <= set(pool) and set(second[1][0]) <= set(pool)
    changing = np.arange(1, 6001, dtype=np.int64)  # writable: made again every time
    index.search(vecs[:1], 5, changing)
    changing[:] = np.arange(6001, 12001)
    _, ids = index.search(vecs[:1], 5, changing)
    assert len(made) == 3 and set(ids[0]) <= set(range(6001, 12001))
