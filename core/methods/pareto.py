"""Pareto coverage (methods.md 5.4-5.5): the photos whose sub-query satisfaction vector nobody dominates."""
from __future__ import annotations

import numpy as np


def dominates(u: np.ndarray, v: np.ndarray) -> bool:
    """u >= v everywhere and u > v somewhere."""
    return bool(np.all(u >= v) and np.any(u > v))


def pareto_front(satisfaction: np.ndarray, dense: np.ndarray) -> list[int]:
    """Row indices of the Pareto set, best first.

    satisfaction: (N, n) 0/1 matrix (photo x sub-query); dense: (N,) dense scores. Candidates are rows with at
    least one 1. Among rows with the same vector only the best dense score is kept (ties: lower index). A row is
    kept when no other candidate's vector dominates it. Order: more sub-queries satisfied first, then dense."""
    sat = np.asarray(satisfaction, dtype=np.int8)
    dense = np.asarray(dense, dtype=np.float64)
    if sat.ndim != 2 or len(sat) == 0:
        return []
    best_of: dict[bytes, int] = {}
    for i in np.flatnonzero(sat.any(axis=1)):
        key = sat[i].tobytes()
        j = best_of.get(key)
        if j is None or dense[i] > dense[j]:
            best_of[key] = int(i)
    reps = sorted(best_of.values())
    vectors = sat[reps]
    kept = []
    for a, i in enumerate(reps):
        if not any(dominates(vectors[b], vectors[a]) for b in range(len(reps)) if b != a):
            kept.append(i)
    return sorted(kept, key=lambda i: (-int(sat[i].sum()), -dense[i], i))


def uncovered(satisfaction: np.ndarray) -> list[int]:
    """Sub-query indices that no photo satisfies."""
    sat = np.asarray(satisfaction)
    if sat.ndim != 2 or sat.shape[0] == 0:
        return list(range(sat.shape[1] if sat.ndim == 2 else 0))
    return [int(j) for j in np.flatnonzero(~sat.astype(bool).any(axis=0))]
