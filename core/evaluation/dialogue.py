"""Interactive-retrieval metrics (PlugIR, methods.md section 4): Hits@K and Recall@K per round, and BRI.

Input everywhere: {qid: [rank at round 0, rank at round 1, ...]} with 1-based ranks of the target image.
A dialogue that stopped before the longest one (e.g. the target was found) keeps its last rank for the
remaining rounds, so every query contributes to every round.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from core.contracts.errors import InputError


def _padded(ranks: Mapping[str, Sequence[int]]) -> dict[str, list[int]]:
    if not ranks:
        raise InputError("no dialogue ranks to score", "give at least one query with a round-0 rank")
    for q, rs in ranks.items():
        if not rs:
            raise InputError(f"query {q!r} has no rounds", "each query needs a rank for round 0 at least")
        bad = [r for r in rs if int(r) < 1]
        if bad:
            raise InputError(f"query {q!r} has rank {bad[0]}", "ranks are 1-based: the best position is 1")
    n = max(len(rs) for rs in ranks.values())
    return {q: [int(r) for r in rs] + [int(rs[-1])] * (n - len(rs)) for q, rs in ranks.items()}


def best_ranks(ranks: Sequence[int]) -> list[int]:
    """pi_t = the best (lowest) 1-based rank of the target up to and including round t."""
    out, best = [], math.inf
    for r in ranks:
        best = min(best, int(r))
        out.append(int(best))
    return out


def hits_per_round(ranks: Mapping[str, Sequence[int]], k: int) -> list[float]:
    """Hits@K per round t: share of queries whose target was in the top K in ANY round 0..t."""
    padded = _padded(ranks)
    n_rounds = len(next(iter(padded.values())))
    pis = [best_ranks(rs) for rs in padded.values()]
    return [sum(pi[t] <= k for pi in pis) / len(pis) for t in range(n_rounds)]


def recall_per_round(ranks: Mapping[str, Sequence[int]], k: int) -> list[float]:
    """Recall@K per round t: share of queries whose target is in the top K AT round t."""
    padded = _padded(ranks)
    n_rounds = len(next(iter(padded.values())))
    return [sum(rs[t] <= k for rs in padded.values()) / len(padded) for t in range(n_rounds)]


def bri_query(ranks: Sequence[int]) -> float:
    """Best log Rank Integral of one dialogue (lower is better).

    With pi_t the best rank up to round t and T the number of rounds after round 0:
    BRI = (1/(2T)) (ln pi_0 + ln pi_T) + (1/T) sum_{t=1}^{T-1} ln pi_t  (trapezoid area under ln pi_t,
    divided by T). With no round after round 0 (T = 0) it is ln pi_0.
    """
    pi = best_ranks(ranks)
    if not pi:
        raise InputError("a dialogue needs at least round 0", "give the target's rank at round 0")
    T = len(pi) - 1
    if T == 0:
        return math.log(pi[0])
    return (math.log(pi[0]) + math.log(pi[T])) / (2 * T) + sum(math.log(p) for p in pi[1:T]) / T


def bri(ranks: Mapping[str, Sequence[int]]) -> float:
    """BRI over queries: the mean of bri_query (dialogues padded to the same number of rounds)."""
    padded = _padded(ranks)
    return sum(bri_query(rs) for rs in padded.values()) / len(padded)


def bri_per_round(ranks: Mapping[str, Sequence[int]]) -> list[float]:
    """BRI with the budget cut after round t, for t = 0..T (curve for the report; t = 0 gives mean ln pi_0)."""
    padded = _padded(ranks)
    n_rounds = len(next(iter(padded.values())))
    return [sum(bri_query(rs[: t + 1]) for rs in padded.values()) / len(padded) for t in range(n_rounds)]


def dialogue_summary(ranks: Mapping[str, Sequence[int]], ks: Sequence[int] = (1, 5, 10)) -> dict:
    """{'rounds': n, 'queries': n, 'hits@K': [...per round], 'recall@K': [...], 'bri': x,
    'bri_per_round': [...], 'per_query': {qid: {'ranks': [...], 'best_ranks': [...], 'bri': x}}}."""
    padded = _padded(ranks)
    out: dict = {"queries": len(padded), "rounds": len(next(iter(padded.values())))}
    for k in ks:
        out[f"hits@{k}"] = hits_per_round(padded, k)
        out[f"recall@{k}"] = recall_per_round(padded, k)
    out["bri"] = bri(padded)
    out["bri_per_round"] = bri_per_round(padded)
    out["per_query"] = {q: {"ranks": rs, "best_ranks": best_ranks(rs), "bri": bri_query(rs)}
                        for q, rs in padded.items()}
    return out
