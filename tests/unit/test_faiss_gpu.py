"""FAISS on a GPU (issue 22 item 4), checked on this CPU-only machine with a fake GPU. The FAISS GPU functions
are replaced by stand-ins that behave like a device: what is moved to the "GPU" is a copy (a clone: later
changes to the CPU index do not reach it), the search copy counts the searches asked of it, and every move is
recorded with its resources, device and options. So each test fails if the code under test stops going through
the GPU (trains, assigns or searches on the CPU instead), keeps a stale copy, ignores what the GPU answered, or
falls back wrongly."""
from __future__ import annotations

import faiss
import numpy as np
import pytest

from core.vectors import gpu as gpu_mod
from core.vectors.index import GPU_MAX_K, VectorIndex
from core.vectors.ivf import trained_ivfpq

NLIST = 32


class SearchCopy:
    """The GPU copy of a whole index for searching: a clone of it, with its searches counted."""

    def __init__(self, index: faiss.Index):
        self.index = faiss.clone_index(index)
        self.searches: list[int] = []  # k of each search

    def search(self, x, k):
        self.searches.append(k)
        return self.index.search(x, k)


class FakeGpuFaiss:
    """Stand-ins for faiss-gpu's functions; `flats` are the flat indexes moved (clustering, list assignment),
    `copies` the search copies, `moves` (resources, device, options) of every move."""

    def __init__(self, monkeypatch, gpus: int = 1):
        self.resources = object()
        self.flats: list[faiss.Index] = []
        self.copies: list[SearchCopy] = []
        self.moves: list[tuple[object, int, object]] = []
        monkeypatch.setattr(faiss, "StandardGpuResources", lambda: self.resources, raising=False)
        monkeypatch.setattr(faiss, "GpuClonerOptions", lambda: type("Options", (), {})(), raising=False)
        monkeypatch.setattr(faiss, "get_num_gpus", lambda: gpus)
        monkeypatch.setattr(faiss, "index_cpu_to_gpu", self.cpu_to_gpu, raising=False)

    def cpu_to_gpu(self, resources, device, index, options=None):
        self.moves.append((resources, device, options))
        if isinstance(faiss.downcast_index(index), faiss.IndexFlat):  # handed to FAISS's C++: a real index
            self.flats.append(faiss.clone_index(index))
            return self.flats[-1]
        self.copies.append(SearchCopy(index))
        return self.copies[-1]


def _data(n: int = 6000, dim: int = 32, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim)).astype(np.float32)
    x = centres[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x, np.arange(1, n + 1)


def _compressed(tmp_path, gpu, name: str, pq_bits: int = 8) -> VectorIndex:
    x, ids = _data()
    index = VectorIndex(x.shape[1])
    index.gpu = gpu
    assert index.start_compressed(x[:3000], len(x), tmp_path / f"{name}.f16", nlist=NLIST, pq_m=8, nprobe=8,
                                  pq_bits=pq_bits)
    for i in range(0, len(x), 1000):
        index.add(ids[i:i + 1000], x[i:i + 1000])
    return index


def _list_of_each_id(index: VectorIndex) -> dict[int, int]:
    ivf = faiss.extract_index_ivf(index.approx)
    out = {}
    for lst in range(ivf.nlist):
        size = ivf.invlists.list_size(lst)
        if size:
            for photo_id in faiss.rev_swig_ptr(ivf.invlists.get_ids(lst), size).tolist():
                out[photo_id] = lst
    return out


def test_training_clusters_on_the_gpu_index_and_gives_the_cpu_centroids(monkeypatch):
    fake = FakeGpuFaiss(monkeypatch)
    gpu, notice = gpu_mod.choose("cuda")
    assert isinstance(gpu, gpu_mod.FaissGpu) and notice is None
    sample = _data(3000)[0]
    on_gpu = trained_ivfpq(sample, NLIST, 8, 8, 0, gpu)
    assert len(fake.flats) == 1 and fake.flats[0].ntotal == NLIST  # FAISS's k-means put its centroids there
    assert fake.moves == [(fake.resources, 0, None)]
    monkeypatch.undo()
    on_cpu = trained_ivfpq(sample, NLIST, 8, 8, 0, None)
    np.testing.assert_allclose(on_gpu.quantizer.reconstruct_n(0, NLIST), on_cpu.quantizer.reconstruct_n(0, NLIST),
                               rtol=1e-5, atol=1e-6)
    assert on_gpu.nprobe == 8


def test_added_vectors_go_to_the_lists_the_gpu_assigns(tmp_path, monkeypatch):
    fake = FakeGpuFaiss(monkeypatch)
    gpu = gpu_mod.choose("cuda")[0]
    index = _compressed(tmp_path, gpu, "gpu")
    ivf = faiss.extract_index_ivf(index.approx)
    # the centroids were copied to the GPU once for the six batches added, and are the quantizer's
    assert len(fake.flats) == 2
    np.testing.assert_array_equal(fake.flats[1].reconstruct_n(0, NLIST), ivf.quantizer.reconstruct_n(0, NLIST))
    x, ids = _data()
    _, want = ivf.quantizer.search(x, 1)
    lists = _list_of_each_id(index)
    assert [lists[i] for i in ids.tolist()] == want.ravel().tolist()
    # what the GPU answers is what is stored: a GPU answering another list puts the vectors there
    real = gpu.assign
    monkeypatch.setattr(gpu, "assign", lambda quantizer, v: (real(quantizer, v) + 1) % NLIST)
    new, new_ids = _data(200, seed=3)[0], np.arange(20_001, 20_201)
    index.add(new_ids, new)
    _, nearest = ivf.quantizer.search(new, 1)
    lists = _list_of_each_id(index)
    assert [lists[i] for i in new_ids.tolist()] == ((nearest.ravel() + 1) % NLIST).tolist()
    assert len(fake.flats) == 2  # the same quantizer: its GPU copy is kept


def test_unfiltered_searches_ask_a_fresh_gpu_copy_and_find_what_the_cpu_finds(tmp_path, monkeypatch):
    fake = FakeGpuFaiss(monkeypatch)
    on_gpu = _compressed(tmp_path, gpu_mod.choose("cuda")[0], "gpu")
    assert fake.copies == []  # made at the first search, not before
    queries, _ = _data(20, seed=5)
    got = on_gpu.search(queries, 10)
    assert len(fake.copies) == 1 and len(fake.copies[0].searches) == 1  # the search went to the GPU copy
    assert 10 <= fake.copies[0].searches[0] <= GPU_MAX_K  # a short list to re-score, within FAISS's GPU limit
    resources, device, options = fake.moves[-1]
    assert resources is fake.resources and device == 0 and options.useFloat16LookupTables is True
    on_gpu.search(queries, 10)
    assert len(fake.copies) == 1 and len(fake.copies[0].searches) == 2  # the copy is kept between searches ...
    on_gpu.add([10_001], queries[:1])
    found = on_gpu.search(queries[:1], 1)[1]
    assert len(fake.copies) == 2 and found[0, 0] == 10_001  # ... made again once the index changed (a stale copy
    # would not hold the photo just added)
    monkeypatch.undo()
    on_cpu = _compressed(tmp_path, None, "cpu")
    want = on_cpu.search(queries, 10)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)


def test_filtered_searches_stay_on_the_cpu_index(tmp_path, monkeypatch):
    fake = FakeGpuFaiss(monkeypatch)
    index = _compressed(tmp_path, gpu_mod.choose("cuda")[0], "gpu")
    index.search(_data(2, seed=8)[0], 10)  # a GPU copy exists ...
    pool = np.arange(1, 6001, 2)
    scores, found = index.search(_data(3, seed=9)[0], 10, pool)
    assert len(fake.copies) == 1 and len(fake.copies[0].searches) == 1  # ... and a filtered search does not ask it
    assert set(found.ravel().tolist()) <= set(pool.tolist())


def test_codes_of_other_than_8_bits_are_searched_on_the_cpu(tmp_path, monkeypatch):
    """FAISS's GPU IVF-PQ takes 8-bit codes only."""
    fake = FakeGpuFaiss(monkeypatch)
    index = _compressed(tmp_path, gpu_mod.choose("cuda")[0], "gpu4", pq_bits=4)
    scores, found = index.search(_data(3, seed=9)[0], 10)
    assert fake.copies == [] and (found > 0).all()
    assert len(fake.flats) == 2  # training and list assignment still ran on the GPU


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


def test_a_gpu_whose_driver_or_resources_fail_falls_back_to_the_cpu(monkeypatch, caplog):
    fake = FakeGpuFaiss(monkeypatch)

    def no_memory():
        raise RuntimeError("cudaMalloc: out of memory")

    monkeypatch.setattr(faiss, "StandardGpuResources", no_memory)
    gpu, notice = gpu_mod.choose("cuda")
    assert gpu is None and "its resources could not be made: cudaMalloc: out of memory" in notice
    assert "nvidia-smi" in notice and fake.moves == []
    assert gpu_mod.choose("auto") == (None, None)

    def broken_driver():
        raise RuntimeError("CUDA driver version is insufficient")

    monkeypatch.setattr(faiss, "get_num_gpus", broken_driver)
    assert gpu_mod.gpu_count() == 0
    assert "no CUDA device" in gpu_mod.choose("cuda")[1]
    assert any("get_num_gpus() failed" in r.getMessage() for r in caplog.records)


def test_auto_uses_a_gpu_when_there_is_one(monkeypatch):
    FakeGpuFaiss(monkeypatch, gpus=2)
    gpu, notice = gpu_mod.choose("auto")
    assert isinstance(gpu, gpu_mod.FaissGpu) and gpu.device == 0 and notice is None


def test_the_corpus_tells_the_user_when_cuda_finds_no_faiss_gpu(tmp_path):
    from core.config import load_settings
    from core.contracts.catalog import VectorSet
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
