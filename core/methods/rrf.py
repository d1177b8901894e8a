"""Reciprocal Rank Fusion of several ranked lists (methods.md 2.4)."""
from __future__ import annotations

from typing import Sequence


def rrf(lists: Sequence[Sequence[int]], lam: float = 1.0,
        weights: Sequence[float] | None = None) -> list[tuple[int, float]]:
    """Fuse ranked id lists (best first) into [(id, score)] best first.

    score(r) = sum over lists of w / (lam + rank), ranks 1-based, w the list's weight (1 without `weights`); an
    id missing from a list adds nothing.
    Ties (equal scores, compared after rounding away float noise) go to the better best single rank, then
    to the smaller id, so the order never depends on dict or thread order."""
    score: dict[int, float] = {}
    best: dict[int, int] = {}
    for n, ranked in enumerate(lists):
        w = 1.0 if weights is None else float(weights[n])
        seen: set[int] = set()
        for rank, pid in enumerate(ranked, start=1):
            pid = int(pid)
            if pid in seen:  # a list naming an id twice counts it at its first rank only
                continue
            seen.add(pid)
            score[pid] = score.get(pid, 0.0) + w / (lam + rank)
            best[pid] = min(best.get(pid, rank), rank)
    order = sorted(score, key=lambda i: (-round(score[i], 12), best[i], i))
    return [(i, score[i]) for i in order]
