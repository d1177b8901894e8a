"""Pareto coverage (methods.md 5.4-5.5): the photos whose sub-query satisfaction vector nobody dominates, and the
paper's alpha-grid formulation of the same set (equal to it while beta < beta_max, Theorem 3.2)."""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import numpy as np


def dominates(u: np.ndarray, v: np.ndarray) -> bool:
    """u >= v everywhere and u > v somewhere."""
    return bool(np.all(u >= v) and np.any(u > v))


def _representatives(sat: np.ndarray, dense: np.ndarray) -> list[int]:
    """One row per distinct satisfaction vector with at least one 1: the row with the best dense score (ties:
    lower index), in index order."""
    best_of: dict[bytes, int] = {}
    for i in np.flatnonzero(sat.any(axis=1)):
        key = sat[i].tobytes()
        j = best_of.get(key)
        if j is None or dense[i] > dense[j]:
            best_of[key] = int(i)
    return sorted(best_of.values())


def pareto_front(satisfaction: np.ndarray, dense: np.ndarray) -> list[int]:
    """Row indices of the Pareto set, best first.

    satisfaction: (N, n) 0/1 matrix (photo x sub-query); dense: (N,) dense scores. Candidates are rows with at
    least one 1. Among rows with the same vector only the best dense score is kept (ties: lower index). A row is
    kept when no other candidate's vector dominates it. Order: more sub-queries satisfied first, then dense."""
    sat = np.asarray(satisfaction, dtype=np.int8)
    dense = np.asarray(dense, dtype=np.float64)
    if sat.ndim != 2 or len(sat) == 0:
        return []
    reps = _representatives(sat, dense)
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


# ---- the paper's alpha-grid formulation (Algorithm 1, Theorem 3.2) ----------------------------------------------
def grid_steps(n: int) -> int:
    """Grid resolution H (weights are multiples of 1/H, each at least 1/H) fine enough that every
    non-dominated 0/1 vector of n sub-queries is the unique best of some grid weight: a vector with m parts
    wins when each of its parts weighs more than all n - m other parts together, which needs
    H >= m (n - m + 1) + (n - m)."""
    n = max(1, int(n))
    return max(m * (n - m + 1) + (n - m) for m in range(1, n + 1))


@lru_cache(maxsize=16)
def simplex_grid(n: int, steps: int) -> np.ndarray:
    """Every weight vector alpha with alpha_i = k_i / steps, k_i >= 1 whole, sum alpha_i = 1 (n columns)."""
    if n == 1:
        return np.ones((1, 1))
    rows = []
    for cuts in combinations(range(1, steps), n - 1):
        bounds = (0, *cuts, steps)
        rows.append([bounds[i + 1] - bounds[i] for i in range(n)])
    return np.asarray(rows, dtype=np.float64) / steps


def beta_max(n: int, dense: np.ndarray, steps: int | None = None) -> float:
    """Theorem 3.2's bound delta_min / C_max: delta_min = 1/H, the smallest grid weight; C_max = the largest
    sum over sub-queries of a photo's cosine = n x its best mean (dense) score (measured from 0, or from the
    lowest score when some are negative, so that it bounds every difference of two photos' dense terms)."""
    steps = steps or grid_steps(n)
    dense = np.asarray(dense, dtype=np.float64)
    top = float(np.max(dense) - min(0.0, float(np.min(dense)))) if len(dense) else 0.0
    return (1.0 / steps) / (n * top) if top > 0 else float("inf")


def alpha_grid_front(satisfaction: np.ndarray, dense: np.ndarray, beta: float, steps: int | None = None) -> list[int]:
    """Algorithm 1 taken literally: the union over a grid of weights alpha of argmax_I sum_i alpha_i s_i(I) +
    beta n S(Q, I), over candidates (rows with at least one 1). Row indices, ordered like pareto_front. Among
    rows with the same vector only the best dense score can win (ties: lower index), so the grid is scored on
    one row per distinct vector."""
    sat = np.asarray(satisfaction, dtype=np.int8)
    dense = np.asarray(dense, dtype=np.float64)
    if sat.ndim != 2 or len(sat) == 0 or sat.shape[1] == 0:
        return []
    reps = np.asarray(_representatives(sat, dense), dtype=np.int64)
    if not len(reps):
        return []
    n = sat.shape[1]
    grid = simplex_grid(n, steps or grid_steps(n))
    vectors, bonus = sat[reps].astype(np.float64), beta * n * dense[reps]
    won: set[int] = set()
    for start in range(0, len(grid), 4096):  # bounded memory for many sub-queries
        scores = grid[start:start + 4096] @ vectors.T + bonus
        won.update(int(reps[j]) for j in np.argmax(scores, axis=1))
    return sorted(won, key=lambda i: (-int(sat[i].sum()), -dense[i], i))
