"""Paired significance tests between two methods' per-query values (same queries, same metric)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from core.contracts.errors import InputError


def _paired(a: Mapping[str, float] | Sequence[float], b: Mapping[str, float] | Sequence[float]
            ) -> tuple[list[float], list[float]]:
    """Align two methods' values: dicts by qid (the shared qids), sequences by position."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        common = [q for q in a if q in b]
        if len(common) != len(a) or len(common) != len(b):
            raise InputError(f"the two methods scored different queries ({len(a)} vs {len(b)}, {len(common)} shared)",
                             "paired tests need the same queries for both methods")
        return [float(a[q]) for q in common], [float(b[q]) for q in common]
    xs, ys = [float(v) for v in a], [float(v) for v in b]
    if len(xs) != len(ys):
        raise InputError(f"paired values differ in length ({len(xs)} vs {len(ys)})", "use the same queries")
    return xs, ys


def randomization_test(a, b, n_permutations: int = 10_000, seed: int = 0) -> float:
    """Two-sided paired randomisation test of mean(a - b) = 0; returns the p-value.

    Each permutation flips the sign of every per-query difference with probability 1/2 (swapping the two
    methods' values for that query); p = (1 + #{|mean perm diff| >= |observed|}) / (1 + n_permutations).
    Seeded, so the same inputs give the same p. Identical values give p = 1.
    """
    xs, ys = _paired(a, b)
    diffs = [x - y for x, y in zip(xs, ys)]
    if not diffs or all(d == 0 for d in diffs):
        return 1.0
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    observed = abs(d.sum()) - 1e-12  # tolerance so float noise in equal sums still counts as ">="
    rng = np.random.default_rng(seed)
    hits, done, chunk = 0, 0, max(1, 200_000 // len(d))
    while done < n_permutations:
        m = min(chunk, n_permutations - done)
        signs = rng.integers(0, 2, size=(m, len(d))) * 2 - 1
        hits += int((np.abs(signs @ d) >= observed).sum())
        done += m
    return (hits + 1) / (n_permutations + 1)


def paired_t_test(a, b) -> float:
    """Two-sided paired t-test (scipy.stats.ttest_rel); returns the p-value. Constant differences (no
    variance) give p = 1 when they are all zero and p = 0 otherwise; fewer than 2 queries give p = 1."""
    xs, ys = _paired(a, b)
    diffs = [x - y for x, y in zip(xs, ys)]
    if len(diffs) < 2 or all(d == 0 for d in diffs):
        return 1.0
    if max(diffs) == min(diffs):
        return 0.0
    from scipy.stats import ttest_rel

    p = float(ttest_rel(xs, ys).pvalue)
    return 1.0 if math.isnan(p) else p


def compare(a, b, test: str = "randomization", n_permutations: int = 10_000, seed: int = 0) -> dict:
    """{'p': p, 'delta': mean(a) - mean(b), 'test': name} for the named test ('randomization' or 't')."""
    xs, ys = _paired(a, b)
    if test == "randomization":
        p = randomization_test(xs, ys, n_permutations, seed)
    elif test in ("t", "t-test", "ttest"):
        p = paired_t_test(xs, ys)
    else:
        raise InputError(f"unknown significance test {test!r}", "use 'randomization' or 't'")
    delta = (sum(xs) - sum(ys)) / len(xs) if xs else 0.0
    return {"p": p, "delta": delta, "test": test}


def mark(p: float, delta: float, alpha: float = 0.05, strong: float = 0.01) -> str:
    """Table mark: '▲▲'/'▲' significantly better at p < strong / p < alpha, '▼▼'/'▼' worse, '' otherwise."""
    if p >= alpha or delta == 0:
        return ""
    sym = "▲" if delta > 0 else "▼"
    return sym * 2 if p < strong else sym
