"""FAISS's OpenMP threads: how many a call from this thread may use."""
from __future__ import annotations

import faiss


def set_threads(n: int) -> None:
    """Cap FAISS's OpenMP threads (0 leaves the library's default)."""
    if n > 0:
        faiss.omp_set_num_threads(n)


def threads() -> int:
    """FAISS's OpenMP threads for calls from this thread (set_threads applies to the thread that calls it)."""
    return int(faiss.omp_get_max_threads())
