import numpy as np

from core.backends.base import l2_normalise
from core.index import VectorIndex


def _data(n=200, d=16, seed=0):
    rng = np.random.default_rng(seed)
    return l2_normalise(rng.standard_normal((n, d))), np.arange(1000, 1000 + n)


def test_search_returns_photo_ids_and_exact_order():
    x, ids = _data()
    index = VectorIndex(16)
    index.add(ids, x)
    scores, found = index.search(x[:3], 5)
    assert list(found[:, 0]) == list(ids[:3])  # each vector is its own nearest neighbour
    brute = np.argsort(-(x[:1] @ x.T)[0])[:5]
    assert list(found[0]) == list(ids[brute])


def test_pool_restricts_small_and_large_paths_identically(monkeypatch):
    x, ids = _data(500)
    index = VectorIndex(16)
    index.add(ids, x)
    pool = ids[::7]
    small = index.search(x[:2], 10, pool)
    import core.index as module

    monkeypatch.setattr(module, "SMALL_POOL", 0)  # force the FAISS id-selector path
    large = index.search(x[:2], 10, pool)
    assert set(small[1].ravel()) <= set(pool)
    assert (small[1] == large[1]).all()
    np.testing.assert_allclose(small[0], large[0], rtol=1e-5)


def test_pool_smaller_than_k_pads_with_minus_one():
    x, ids = _data(20)
    index = VectorIndex(16)
    index.add(ids, x)
    _, found = index.search(x[:1], 5, np.array([ids[3], ids[4], 99999]))
    assert sorted(found[0][:2]) == sorted([ids[3], ids[4]]) and list(found[0][2:]) == [-1, -1, -1]


def test_save_load_roundtrip_and_vectors(tmp_path):
    x, ids = _data(50)
    index = VectorIndex(16)
    index.add(ids, x)
    index.remove([ids[0]])
    index.save(tmp_path / "v.faiss")
    again = VectorIndex.load(tmp_path / "v.faiss", 16)
    assert len(again) == 49 and not again.contains(ids[0])
    np.testing.assert_allclose(again.vectors([ids[5], ids[2]]), x[[5, 2]], rtol=1e-6)
    assert not list(tmp_path.glob("*.tmp"))  # atomic write leaves no temporary file


def test_hnsw_twin_finds_true_neighbours():
    x, ids = _data(2000, 32)
    index = VectorIndex(32)
    index.add(ids, x)
    assert index.build_approximate("hnsw") == "hnsw"
    _, exact = index.flat.search(x[:20], 10)
    _, approx = index.search(x[:20], 10)
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(approx, exact)])
    assert recall > 0.9


def test_ivfpq_on_too_few_vectors_stays_flat():
    x, ids = _data(100, 16)
    index = VectorIndex(16)
    index.add(ids, x)
    assert index.build_approximate("ivfpq", pq_m=4) == "flat"
