"""FAISS on a GPU where there is one: with `device` cuda (or auto) and a FAISS build that sees a GPU
(faiss-gpu, installed by `scripts/setup.sh --gpu` in place of faiss-cpu: both install the module `faiss`),
the heavy parts of a large index run there: the k-means of IVF training, the assignment of every added
vector to its list, and unfiltered searches (a copy of the index on the GPU). Filtered searches stay on the
CPU index (the pool is a FAISS id selector, which the GPU index does not take). Without a GPU the same work
runs on the CPU, and asking for cuda says so once (a notice and a log line)."""
from __future__ import annotations

import logging

import faiss
import numpy as np

log = logging.getLogger(__name__)

NO_GPU = "device is cuda, but FAISS sees no GPU here ({why}); the vector index is built and searched on the CPU. {fix}"
INSTALL = "To use the GPU, install FAISS's GPU build in place of faiss-cpu: `bash scripts/setup.sh --gpu`."
DRIVER = "Check that the CUDA device and its driver are visible to this process (`nvidia-smi`)."


def gpu_build() -> bool:
    """True for a FAISS build with GPU support (faiss-cpu lacks the GPU classes)."""
    return hasattr(faiss, "StandardGpuResources")


def gpu_count() -> int:
    """GPUs this FAISS build can use (faiss-cpu answers 0)."""
    try:
        return int(faiss.get_num_gpus()) if gpu_build() else 0
    except Exception:  # a GPU build on a machine whose CUDA driver fails: no GPU
        log.exception("faiss.get_num_gpus() failed")
        return 0


class FaissGpu:
    """One GPU's FAISS resources, shared by every index of the process."""

    def __init__(self, device: int = 0):
        self.device = device
        self.resources = faiss.StandardGpuResources()
        self._centroids: tuple[tuple[int, int], faiss.Index] | None = None  # (which quantizer, its GPU copy)

    def flat_ip(self, dim: int) -> faiss.Index:
        """An empty inner-product flat index on the GPU (IVF training's clustering index, list assignment)."""
        return faiss.index_cpu_to_gpu(self.resources, self.device, faiss.IndexFlatIP(dim))

    def copy(self, index: faiss.Index) -> faiss.Index:
        """A GPU copy of a CPU index, for searching."""
        options = faiss.GpuClonerOptions()
        options.useFloat16LookupTables = True  # PQ lookup tables in half precision: fits more sub-quantizers
        return faiss.index_cpu_to_gpu(self.resources, self.device, index, options)

    def assign(self, quantizer: faiss.Index, x: np.ndarray) -> np.ndarray:
        """The IVF list of each row of `x`: the nearest centroid, searched on the GPU."""
        key = (int(quantizer.this), int(quantizer.ntotal))  # the C++ object (SWIG proxies differ per call)
        if self._centroids is None or self._centroids[0] != key:  # copied once per index
            gpu = self.flat_ip(quantizer.d)
            gpu.add(quantizer.reconstruct_n(0, quantizer.ntotal))
            self._centroids = (key, gpu)
        _, lists = self._centroids[1].search(x, 1)
        return lists.ravel().astype(np.int64)


def choose(device: str) -> tuple[FaissGpu | None, str | None]:
    """(the GPU to use or None, a notice for the user or None). `device`: the settings' torch device."""
    if device not in ("cuda", "auto"):
        return None, None
    count = gpu_count()
    if count > 0:
        try:
            return FaissGpu(0), None
        except Exception as exc:  # a GPU build whose resources cannot be made (no driver, out of memory)
            log.exception("FAISS GPU resources could not be created")
            why = f"its resources could not be made: {exc}"
    else:
        why = "no CUDA device" if gpu_build() else "the installed FAISS is the CPU build (faiss-cpu)"
    if device != "cuda":
        return None, None
    notice = NO_GPU.format(why=why, fix=DRIVER if gpu_build() else INSTALL)
    log.warning(notice)
    return None, notice
