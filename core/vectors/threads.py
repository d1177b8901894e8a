"""Threads of the numeric libraries: FAISS's OpenMP threads (how many a call from this thread may use), and the
BLAS libraries that keep a thread pool of their own (numpy's OpenBLAS), which a web process limits to one."""
from __future__ import annotations

import logging

import faiss

log = logging.getLogger(__name__)


def set_threads(n: int) -> None:
    """Cap FAISS's OpenMP threads (0 leaves the library's default)."""
    if n > 0:
        faiss.omp_set_num_threads(n)


def threads() -> int:
    """FAISS's OpenMP threads for calls from this thread (set_threads applies to the thread that calls it)."""
    return int(faiss.omp_get_max_threads())


def one_blas_thread() -> list[str]:
    """Limit to one thread each BLAS library loaded in this process that runs a thread pool of its own (numpy's
    OpenBLAS, threading layer 'pthreads'); returns their files. Why: in a web process every matrix product is
    small (a search's 80 x 80 cosines), and after each one that pool's threads spin, waiting for more work: on
    two cores that was about 44 ms of CPU a Fast search, half the server's (docs/benchmarks-log.md). Libraries
    whose threads are OpenMP's (FAISS's OpenBLAS) follow FAISS's thread setting and are left as they are."""
    from threadpoolctl import ThreadpoolController

    limited = []
    for lib in ThreadpoolController().lib_controllers:
        if lib.user_api == "blas" and getattr(lib, "threading_layer", "") == "pthreads" and lib.num_threads > 1:
            lib.set_num_threads(1)
            limited.append(lib.filepath)
    if limited:
        log.info("BLAS libraries with their own thread pool limited to one thread: %s", ", ".join(limited))
    return limited
