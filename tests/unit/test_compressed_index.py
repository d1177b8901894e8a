"""The compressed index of a large corpus: IVF-PQ trained before anything is added, every vector in its lists
and in the float16 store on disk (no flat copy); its searches re-score from the store, filtered pools stay
exact (inside the search), and a crash between the store's append and the index's checkpoint is cut back."""
from __future__ import annotations

import faiss
import numpy as np
import pytest

from core.vectors import ivf as ivf_module
from core.vectors.half_store import HalfStore
from core.vectors.index import VectorIndex


def _data(n: int, dim: int = 32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, dim)).astype(np.float32)
    x = centres[rng.integers(0, 60, n)] + 0.4 * rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _compressed(tmp_path, n: int = 8000) -> tuple[VectorIndex, np.ndarray]:
    x = _data(n)
    index = VectorIndex(32)
    assert index.start_compressed(x[::2], n, tmp_path / "v.faiss.f16", nlist=40, pq_m=8, nprobe=16)
    for i in range(0, n, 1000):
        index.add(np.arange(i + 1, i + 1001), x[i:i + 1000])
    return index, x


def test_searches_rescore_from_the_float16_store_and_find_the_true_neighbours(tmp_path):
    index, x = _compressed(tmp_path)
    assert index.flat is None and len(index.store) == len(x) == len(index)
    q = _data(30, seed=3)
    exact = np.argsort(-(q @ x.T), axis=1)[:, :10] + 1
    scores, ids = index.search(q, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids.tolist(), exact.tolist())])
    assert recall >= 0.9
    # the scores are the stored (float16) vectors' cosines, not the PQ codes' estimates
    np.testing.assert_allclose(scores[:, 0], (q * x[ids[:, 0] - 1]).sum(1), atol=2e-3)
    np.testing.assert_allclose(index.vectors([5, 1]), x[[4, 0]], atol=1e-3)


def test_filtered_pools_return_only_their_photos_small_exactly_large_through_the_scan(tmp_path):
    index, x = _compressed(tmp_path)
    q = _data(5, seed=4)
    small = np.arange(1, 8001, 97)  # scored exactly from the store
    _, ids = index.search(q, 10, small)
    exact = small[np.argsort(-(q @ x[small - 1].T), axis=1)[:, :10]]
    np.testing.assert_array_equal(ids, exact)
    large = np.arange(2, 8001, 2)  # half the corpus: the pool is a selector inside the IVF scan
    _, ids = index.search(q, 10, large)
    assert (ids >= 0).all() and set(ids.ravel().tolist()) <= set(large.tolist())


def test_a_reopened_index_cuts_the_store_back_to_the_last_checkpoint(tmp_path):
    index, x = _compressed(tmp_path, 4000)
    path = tmp_path / "v.faiss"
    index.save(path)
    index.store.append(np.arange(5001, 5101), x[:100])  # rows appended after the checkpoint, then a crash
    assert HalfStore(tmp_path / "v.faiss.f16", 32).rows == 4100
    reader = VectorIndex.load(path, 32)  # a reader (the web app) reads only what the index counts ...
    assert len(reader.store) == 4000 and HalfStore(tmp_path / "v.faiss.f16", 32).rows == 4100
    writer = VectorIndex.load(path, 32)
    writer.attach_store(tmp_path / "v.faiss.f16", writer=True)  # ... the next ingest cuts the rest off
    assert len(writer.store) == 4000 and HalfStore(tmp_path / "v.faiss.f16", 32).rows == 4000
    assert not writer.contains(5001) and writer.contains(4000)


def test_the_store_finds_rows_whatever_order_the_ids_came_in(tmp_path):
    store = HalfStore(tmp_path / "s.f16", 4, 0, writer=True)
    vecs = np.eye(4, dtype=np.float32)
    store.append([10, 30], vecs[:2])
    store.append([20, 5], vecs[2:])  # a resumed ingest re-adds older ids after newer ones
    np.testing.assert_array_equal(store.rows_of(np.array([5, 10, 20, 30, 7])), [3, 0, 2, 1, -1])
    np.testing.assert_array_equal(store.vectors([20, 10]), vecs[[2, 0]])


def test_scattered_rows_and_dense_ones_read_the_same_vectors_through_either_map(tmp_path, monkeypatch):
    """A few rows are read through the map with read-ahead off, many through the plain one (SCATTERED_SHARE);
    both give the stored float16 values, in the order asked, also after rows were appended."""
    from core.vectors import half_store

    x = _data(3000)
    store = HalfStore(tmp_path / "s.f16", 32, 0, writer=True)
    store.append(np.arange(1, 2001), x[:2000])
    few = np.array([1999, 3, 1500, 3])  # 4 of 2,000 rows: scattered
    many = np.arange(0, 2000, 7)[::-1]  # 286 rows: dense enough for read-ahead
    stored = x.astype(np.float16).astype(np.float32)
    maps = []
    real = HalfStore._scattered_map
    monkeypatch.setattr(HalfStore, "_scattered_map", lambda self: maps.append("scattered") or real(self))
    np.testing.assert_array_equal(store.rows_matrix(few), stored[few])  # read-ahead on (the default)
    assert maps == []
    store.scattered_reads = lambda: True  # e.g. while the store is read into the file cache
    np.testing.assert_array_equal(store.rows_matrix(few), stored[few])
    np.testing.assert_array_equal(store.rows_matrix(many), stored[many])
    assert maps == ["scattered"] and len(many) * half_store.SCATTERED_SHARE >= 2000 > len(few) * 50
    store.append(np.arange(2001, 3001), x[2000:])  # the maps are made anew for the longer file
    np.testing.assert_array_equal(store.rows_matrix(np.array([2999, 0])), stored[[2999, 0]])


@pytest.mark.parametrize("ids, asked, rows", [
    ([7, 8, 9, 10], [6, 7, 10, 11, 9], [-1, 0, 3, -1, 2]),   # no gap: found by subtraction
    ([7, 8, 10, 11], [6, 7, 9, 10, 11, 12], [-1, 0, -1, 2, 3, -1]),  # a removed photo's gap: searched
    ([1], [0, 1, 2], [-1, 0, -1]),
])
def test_the_store_finds_rows_with_and_without_gaps_in_the_ids(tmp_path, ids, asked, rows):
    store = HalfStore(tmp_path / "s.f16", 4, 0, writer=True)
    vecs = np.arange(4 * len(ids), dtype=np.float32).reshape(len(ids), 4)
    store.append(ids, vecs)
    np.testing.assert_array_equal(store.rows_of(np.array(asked)), rows)
    store.append([ids[-1] + 5], vecs[:1])  # appended later with a gap: the rows are searched from then on
    np.testing.assert_array_equal(store.rows_of(np.array(asked + [ids[-1] + 5, ids[-1] + 1])),
                                  rows + [len(ids), -1])


def test_a_sample_too_small_to_train_leaves_the_index_as_it_was(tmp_path):
    index = VectorIndex(32)
    assert not index.start_compressed(_data(100), 100_000, tmp_path / "v.f16", nlist=40, pq_m=8)
    assert index.approx is None and index.flat is not None and index.store is None


def test_an_index_that_drops_its_flat_copy_keeps_the_vectors_in_float16_for_rescoring(tmp_path):
    x = _data(4000)
    index = VectorIndex(32)
    index.add(np.arange(1, 4001), x)
    kind = index.ensure_approximate("ivfpq", nlist=40, pq_m=8, nprobe=16, keep_flat=False,
                                    store_path=tmp_path / "v.faiss.f16")
    assert kind == "ivfpq" and index.flat is None and len(index.store) == 4000
    np.testing.assert_allclose(index.vectors([7]), x[[6]], atol=1e-3)
    q = _data(5, seed=8)
    scores, ids = index.search(q, 5)
    np.testing.assert_allclose(scores[:, 0], (q * x[ids[:, 0] - 1]).sum(1), atol=2e-3)  # re-scored


def test_the_refine_factor_follows_the_code_size_unless_set(tmp_path):
    """Fewer bytes of code a photo, a longer short list: 8-byte codes re-score 128 x k, 16-byte ones 64 x k,
    64-byte ones (and exact or HNSW indexes) 16 x k; index_refine_factor, when set, is used as given."""
    index, _ = _compressed(tmp_path)  # dimension 32, pq_m 8: 8 bytes a photo
    assert faiss.extract_index_ivf(index.approx).code_size == 8
    assert index.refine() == 128 and index.short_list(10, 1000) == 1280
    index.refine_factor = 20
    assert index.refine() == 20 and index.short_list(10, 1000) == 200
    assert VectorIndex(32).refine() == 16
    wide = VectorIndex(64)
    assert wide.start_compressed(_data(4000, dim=64), 4000, tmp_path / "w.f16", nlist=20, pq_m=16, nprobe=4)
    assert wide.refine() == 64
    assert [ivf_module.refine_factor_for(b) for b in (4, 8, 16, 32, 64, 128)] == [256, 128, 64, 32, 16, 16]


def test_the_short_list_grows_with_the_candidates_beyond_refine_at(tmp_path, monkeypatch):
    index, x = _compressed(tmp_path)
    index.refine_factor = 4
    assert index.short_list(10, 2_000_000) == 40  # up to REFINE_AT: k x refine_factor
    assert index.short_list(10, 2_000_001) == 80 and index.short_list(10, 5_000_000) == 160
    assert index.short_list(10, 200_000_000) == 320  # at most 8x: more bytes of code beyond that
    monkeypatch.setattr(ivf_module, "REFINE_AT", 1000)  # 8,000 photos: 8x the short list, and still right
    assert index.short_list(10, len(index)) == 320 and index.short_list(10, 64_000) == 320
    q = _data(10, seed=5)
    exact = np.argsort(-(q @ x.T), axis=1)[:, :10] + 1
    _, ids = index.search(q, 10)
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids.tolist(), exact.tolist())]) >= 0.9
    large = np.arange(2, 8001, 2)  # a filter's pool of 4,000: the short list is sized by the pool
    assert index.short_list(10, len(large)) == 160
    _, ids = index.search(q, 10, large)
    assert set(ids.ravel().tolist()) <= set(large.tolist())


def test_one_add_is_encoded_in_calls_whose_tables_stay_under_the_budget(tmp_path, monkeypatch):
    """FAISS encodes a call's vectors with a distance table each (pq_m x 2^pq_bits floats, all at once): a large
    add is split into calls of ivf.add_rows vectors, and gives the same codes as one call."""
    x = _data(3000)
    one, split = VectorIndex(32), VectorIndex(32)
    for index, name in ((one, "one"), (split, "split")):
        assert index.start_compressed(x[::2], len(x), tmp_path / f"{name}.f16", nlist=16, pq_m=8, nprobe=16)
    assert ivf_module.add_rows(one.approx) == (256 << 20) // (8 * 256 * 4)  # PQ8x8: 8 KB of tables a vector
    one.add(np.arange(1, 3001), x)
    monkeypatch.setattr(ivf_module, "ENCODE_BUDGET", 300 * 8 * 256 * 4)  # 300 vectors' tables
    calls = []
    real = VectorIndex._add_rows_to_approx
    monkeypatch.setattr(VectorIndex, "_add_rows_to_approx", lambda self, v, i: (calls.append(len(i)), real(self, v, i)))
    split.add(np.arange(1, 3001), x)
    assert calls == [300] * 10
    q = _data(20, seed=5)
    for a, b in zip(one.search(q, 10), split.search(q, 10)):
        np.testing.assert_array_equal(a, b)
    assert ivf_module.add_rows(None) > 10**8 and ivf_module.add_rows(faiss.IndexFlatIP(32)) > 10**8
