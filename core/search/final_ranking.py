"""The ranking a search returns, after its stages: with Pareto coverage, the photos that cover most of the
question's parts first (core.methods.coverage)."""
from __future__ import annotations

from typing import Any, Callable

Ranked = list[tuple[int, float]]


def final_ranking(ranked: Ranked, coverage: dict[str, Any] | None,
                  score_of: Callable[[list[int]], dict[int, float]] | None = None
                  ) -> tuple[Ranked, dict[int, list[str]]]:
    """The ranking a search returns. Without coverage: `ranked` as it is. With coverage: the Pareto photos
    first (most parts covered, then dense score, then id), then the rest in `ranked` order. Returns the
    ranking and, per covering photo, the texts of the parts it covers. Cover photos outside `ranked` get
    their score from `score_of` (ids -> score) when given, else their dense score."""
    if not coverage or not coverage.get("photos"):
        return list(ranked), {}
    texts = [q.get("text", str(q)) if isinstance(q, dict) else str(q) for q in coverage.get("subqueries") or []]
    cover = sorted(coverage["photos"], key=lambda p: (-len(p["satisfies"]), -float(p["dense"]), int(p["id"])))
    known = dict(ranked)
    missing = [int(p["id"]) for p in cover if int(p["id"]) not in known]
    extra = score_of(missing) if (score_of and missing) else {}
    head = [(int(p["id"]), known.get(int(p["id"]), extra.get(int(p["id"]), float(p["dense"])))) for p in cover]
    covers = {int(p["id"]): [texts[j] if j < len(texts) else str(j) for j in p["satisfies"]] for p in cover}
    first = set(covers)
    return head + [(i, s) for i, s in ranked if i not in first], covers
