"""FAISS on a GPU (issue 22 item 4), checked on this CPU-only machine with a fake GPU: the FAISS GPU functions
are replaced by stand-ins that record each call and hand back CPU indexes, so the GPU path runs for real
(training's clustering index, list assignment, the search copy) and must give the CPU path's results."""
from __future__ import annotations

import faiss
import numpy as np
import pytest

from core.vectors import gpu as gpu_mod
from core.vectors.index import VectorIndex


class FakeGpuFaiss:
    """Stand-ins for faiss-gpu's functions: every "GPU" index is the CPU index itself; calls are recorded."""

    def __init__(self, monkeypatch, gpus: int = 1):
        self.copied: list[str] = []
        monkeypatch.setattr(faiss, "StandardGpuResources", lambda: object(), raising=False)
        monkeypatch.setattr(faiss, "GpuClonerOptions", lambda: type("Options", (), {})(), raising=False)
        monkeypatch.setattr(faiss, "get_num_gpus", lambda: gpus)
        monkeypatch.setattr(faiss, "index_cpu_to_gpu", self.cpu_to_gpu, raising=False)

    def cpu_to_gpu(self, resources, device, index, options=None):
        assert device == 0
        self.copied.append(type(faiss.downcast_index(index)).__name__)
        return index


def _data(n: int = 6000, dim: int = 32, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim)).astype(np.float32)
    x = centres[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x, np.arange(1, n + 1)


def _compressed(tmp_path, gpu, name: str) -> VectorIndex:
    x, ids = _data()
    index = VectorIndex(x.shape[1])
    index.gpu = gpu
    assert index.start_compressed(x[:3000], len(x), tmp_path / f"{name}.f16", nlist=32, pq_m=8, nprobe=8)
    for i in range(0, len(x), 1000):
        index.add(ids[i:i + 1000], x[i:i + 1000])
    return index


def test_with_a_gpu_the_index_trains_assigns_and_searches_there_and_finds_what_the_cpu_finds(tmp_path, monkeypatch):
    fake = FakeGpuFaiss(monkeypatch)
    gpu, notice = gpu_mod.choose("cuda")
    assert gpu is not None and notice is None
    on_gpu = _compressed(tmp_path, gpu, "gpu")
    # training clusters on a GPU flat index; the added batches are assigned to lists by a GPU copy of the
    # centroids (made once)
    assert fake.copied == ["IndexFlatIP"] * 2
    queries, _ = _data(20, seed=5)
    got = on_gpu.search(queries, 10)
    assert fake.copied[-1] == "IndexIVFPQ"  # the unfiltered search asked the GPU copy of the whole index
    on_gpu.search(queries, 10)
    assert fake.copied.count("IndexIVFPQ") == 1  # the copy is kept between searches ...
    on_gpu.add([10_001], queries[:1])
    on_gpu.search(queries, 10)
    assert fake.copied.count("IndexIVFPQ") == 2  # ... and made again once the index changed
    monkeypatch.undo()
    on_cpu = _compressed(tmp_path, None, "cpu")
    want = on_cpu.search(queries, 10)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)


def test_filtered_searches_stay_on_the_cpu_index(tmp_path, monkeypatch):
    fake = FakeGpuFaiss(monkeypatch)
    index = _compressed(tmp_path, gpu_mod.choose("cuda")[0], "gpu")
    before = list(fake.copied)
    pool = np.arange(1, 6001, 2)
    scores, found = index.search(_data(3, seed=9)[0], 10, pool)
    assert fake.copied == before  # no GPU copy: FAISS's id selector works on the CPU index
    assert set(found.ravel().tolist()) <= set(pool.tolist())


@pytest.mark.parametrize("gpus", [0, None])
def test_asking_for_cuda_without_a_gpu_says_so_and_uses_the_cpu(monkeypatch, caplog, gpus):
    if gpus is None:  # faiss-cpu: no GPU classes at all
        monkeypatch.delattr(faiss, "StandardGpuResources", raising=False)
    else:  # a GPU build on a machine without a CUDA device
        FakeGpuFaiss(monkeypatch, gpus=0)
    gpu, notice = gpu_mod.choose("cuda")
    assert gpu is None
    assert "FAISS sees no GPU" in notice and "built and searched on the CPU" in notice
    if gpus is None:
        assert "the CPU build (faiss-cpu)" in notice and "scripts/setup.sh --gpu" in notice
    else:
        assert "no CUDA device" in notice and "nvidia-smi" in notice
    assert any("FAISS sees no GPU" in r.getMessage() for r in caplog.records)
    assert gpu_mod.choose("auto") == (None, None)  # auto: the CPU without a word
    assert gpu_mod.choose("cpu") == (None, None)


def test_the_corpus_tells_the_user_when_cuda_finds_no_faiss_gpu(tmp_path):
    from core.contracts.catalog import VectorSet
    from core.config import load_settings
    from core.search.corpus import Corpus
    from core.vectors.index_store import IndexStore
    from tests.fakes import FakeEmbedder

    class FakeEmptyCatalog:
        def vector_set(self, model_id, dim):
            return VectorSet(1, model_id, dim)

        def indexed_id_array(self, vector_set_id):
            return np.zeros(0, np.int64)

        def count(self):
            return 0

    settings = load_settings(environ={}, data_dir=str(tmp_path), device="cuda")
    corpus = Corpus(FakeEmptyCatalog(), IndexStore(tmp_path), FakeEmbedder(), settings)
    assert corpus.index is not None
    assert any("FAISS sees no GPU" in n for n in corpus.startup_notices)
