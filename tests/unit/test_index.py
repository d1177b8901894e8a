import numpy as np

from core.backends.base import l2_normalise
from core.vectors.index import VectorIndex


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
    import core.vectors.index as module

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


def _clustered(n, d=32, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, d))
    x = centres[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, d))
    return l2_normalise(x), np.arange(1, n + 1)


def test_ivfpq_is_trained_once_and_later_vectors_are_added_incrementally():
    x, ids = _clustered(6000)
    index = VectorIndex(32)
    index.add(ids[:4000], x[:4000])
    assert index.ensure_approximate("ivfpq", nlist=16, pq_m=8, nprobe=8) == "ivfpq"
    import faiss

    centroids = faiss.extract_index_ivf(index.approx).quantizer.reconstruct_n(0, 16).copy()
    index.add(ids[4000:], x[4000:])  # a later ingest
    assert index.approx.ntotal == 6000
    assert index.ensure_approximate("ivfpq", nlist=16, pq_m=8, nprobe=8) == "ivfpq"
    np.testing.assert_array_equal(faiss.extract_index_ivf(index.approx).quantizer.reconstruct_n(0, 16), centroids)
    _, exact = index.flat.search(x[4000:4050], 10)
    _, approx = index.search(x[4000:4050], 10)
    assert np.mean([len(set(a) & set(e)) / 10 for a, e in zip(approx, exact)]) > 0.9


def test_on_disk_lists_and_no_flat_copy_roundtrip(tmp_path):
    x, ids = _clustered(5000)
    index = VectorIndex(32)
    index.add(ids, x)
    lists = tmp_path / "v.faiss.ivfdata"
    assert index.ensure_approximate("ivfpq", nlist=16, pq_m=16, nprobe=16, on_disk=lists, keep_flat=False) == "ivfpq"
    assert lists.stat().st_size > 0 and not index.has_flat
    index.save(tmp_path / "v.faiss")
    assert not (tmp_path / "v.faiss").exists() and (tmp_path / "v.faiss.approx").exists()
    again = VectorIndex.load(tmp_path / "v.faiss", 32)
    assert len(again) == 5000 and sorted(again.ids()) == list(ids)
    assert np.abs(again.vectors([7, 9]) - x[[6, 8]]).max() < 0.2  # PQ codes: close, not exact
    _, found = again.search(x[:20], 5)  # PQ scores alone (no flat copy to re-score): near, not exact, order
    exact = np.argsort(-(x[:20] @ x.T), axis=1)[:, :10] + 1
    assert np.mean([row[0] in e for row, e in zip(found, exact)]) >= 0.7
    pool = ids[::3]
    _, small = again.search(x[:3], 5, pool)
    assert set(small.ravel()) <= set(pool)


def test_bitmap_and_hash_selectors_agree(monkeypatch):
    import core.vectors.index as module
    import core.vectors.selection as selection

    x, ids = _data(3000)
    index = VectorIndex(16)
    index.add(ids, x)
    pool = ids[::2]
    monkeypatch.setattr(module, "SMALL_POOL", 0)
    bitmap = index.search(x[:3], 10, pool)
    monkeypatch.setattr(selection, "BITMAP_MAX_ID", 0)  # force the hash-set selector
    hashed = index.search(x[:3], 10, pool)
    assert (bitmap[1] == hashed[1]).all() and set(bitmap[1].ravel()) <= set(pool)


def test_id_selector_admits_exactly_the_pool():
    """FAISS reads the bitmap up to the length it is given (in bytes); ids past the pool's largest must be
    refused, not looked up in memory past the bitmap."""
    from core.vectors.selection import id_selector

    pool = np.arange(5, 8000, 3)
    sel, _keep = id_selector(pool)
    members = [i for i in range(80_000) if sel.is_member(i)]
    assert members == pool.tolist()


def _brute(x, ids, q, k, pool):
    keep = np.isin(ids, pool)
    sims = x[keep] @ q
    order = np.lexsort((ids[keep], -sims))[:k]
    return ids[keep][order]


def test_large_pool_through_the_flat_rows_matches_brute_force(monkeypatch):
    """The FAISS path for large pools (a bitmap over the flat copy's rows, rows turned back into ids), for
    dense ids with gaps (an id -> row table) and for sparse ids (a sorted search): pools holding ids the
    index lacks, ending well before the index's largest id, or holding every id."""
    import core.vectors.index as module

    monkeypatch.setattr(module, "SMALL_POOL", 0)
    x, _ = _data(3000)
    for ids in (np.arange(1, 3001), np.arange(3000) * 1000 + 7):
        index = VectorIndex(16)
        index.add(ids, x)
        index.remove(ids[10:400:3])  # removed rows: the rows move up, the ids stay
        kept = ~np.isin(ids, ids[10:400:3])
        xs, ks = x[kept], ids[kept]
        for pool in (ids[::2], ids[:1500], np.concatenate([ids[5:2000], [ids[-1] + 5, -3]]), ids):
            scores, found = index.search(x[:4], 10, pool)
            for r in range(4):
                assert found[r].tolist() == _brute(xs, ks, x[r], 10, pool).tolist()
                np.testing.assert_allclose(scores[r], np.sort(xs[np.isin(ks, found[r])] @ x[r])[::-1], rtol=1e-5)
        assert index._rows().table is None if ids[-1] > 10_000 else index._rows().table is not None
