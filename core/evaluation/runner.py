"""The engine-independent evaluation loop: run each method on each item, time it, score it.

A method is any callable item -> MethodOutput (or a (ranking, cost) tuple, or a bare ranking). The app
plugs the real search pipeline in; tests plug in Fake methods. A method that raises EcoLensError on an item
is recorded as a failure for that item (empty ranking, so it scores 0 there) and the run goes on.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.contracts.errors import EcoLensError, InputError
from core.evaluation.dialogue import dialogue_summary
from core.evaluation.items import EvalItem
from core.evaluation.metrics import parse_metrics, score_rankings

COST_KEYS = ("llm_calls", "judge_calls", "generator_calls", "cache_hits")


@dataclass
class MethodOutput:
    """What a method returns for one item: pool keys best first, its costs (COST_KEYS and any other
    counters), optional notes (e.g. "fell back to the rewrite baseline"), optional scores (key -> the score
    the ranking was sorted by; tied scores are then scored as INQUIRE's scorer does, see metrics.py) and the
    photo ids behind the keys (for the answer stage). `order_unchanged`: a rerank that moved no photo of its
    first stage (every judge score tied, or all in the first stage's order); its scores are then the first
    stage's (engine_methods), so it scores exactly as its first stage under the same tie rule, and the report
    says so."""

    ranking: list[str]
    cost: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    scores: dict[str, float] | None = None
    ids: list[int] = field(default_factory=list)
    order_unchanged: bool = False


Method = Callable[[EvalItem], Any]


def _as_output(value: Any) -> MethodOutput:
    if isinstance(value, MethodOutput):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        return MethodOutput(ranking=list(value[0]), cost=dict(value[1] or {}))
    return MethodOutput(ranking=list(value))


def expand_metrics(metrics: Sequence[str] | str, ks: Sequence[int] = ()) -> list[str]:
    """Metric names; a base without a cut-off ('ndcg', 'hit', ...) is expanded with every k of `ks`."""
    items = metrics.split(",") if isinstance(metrics, str) else list(metrics)
    out: list[str] = []
    for m in (x.strip().lower() for x in items if x.strip()):
        if "@" not in m and m != "mrr":
            if not ks:
                raise InputError(f"metric {m!r} has no cut-off and no ks were given", "write e.g. ndcg@10")
            out.extend(f"{m}@{k}" for k in ks)
        else:
            out.append(m)
    return parse_metrics(out)


@dataclass
class EvalResult:
    """Per-method, per-query results of one evaluation run."""

    metrics: list[str]
    items: list[EvalItem]
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # method -> qid -> metric
    rankings: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # method -> qid -> top keys
    photo_ids: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # method -> qid -> top photo ids
    item_costs: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # method -> qid -> cost
    notes: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # method -> qid -> notes
    failures: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # method -> [{qid, error}]
    outside_pool: dict[str, int] = field(default_factory=dict)  # method -> keys dropped for leaving the pool
    unchanged: dict[str, list[str]] = field(default_factory=dict)  # method -> qids whose rerank moved no photo

    @property
    def methods(self) -> list[str]:
        return list(self.per_query)

    def kinds(self) -> dict[str, str]:
        return {it.qid: it.kind for it in self.items}

    def cost_totals(self, method: str) -> dict[str, float]:
        """Summed costs of a method over its items (wall_s included)."""
        tot: dict[str, float] = {k: 0.0 for k in (*COST_KEYS, "wall_s")}
        for c in self.item_costs.get(method, {}).values():
            for k, v in c.items():
                tot[k] = tot.get(k, 0.0) + float(v)
        return tot


def evaluate(items: Sequence[EvalItem], methods: Mapping[str, Method], metrics: Sequence[str] | str,
             ks: Sequence[int] = (), keep_top: int = 100,
             progress: Callable[[str, int, int], None] | None = None) -> EvalResult:
    """Run every method on every item and score the rankings with `metrics` (see expand_metrics).

    Rankings are cut to the item's pool when it has one (keys outside it are dropped and counted);
    costs per item get `wall_s`. `progress(method, done, total)` is called after each item.
    """
    if not items:
        raise InputError("no evaluation items", "the benchmark file produced no queries")
    if not methods:
        raise InputError("no method to evaluate", "name at least one method, e.g. --methods baseline")
    names = expand_metrics(metrics, ks)
    res = EvalResult(metrics=names, items=list(items))
    qrels = {it.qid: it.relevant for it in items}
    n_pos = {it.qid: it.n_pos for it in items}
    for mname, fn in methods.items():
        rankings: dict[str, list[str]] = {}
        scores: dict[str, dict[str, float]] = {}
        ids: dict[str, list[int]] = {}
        costs, notes, fails, dropped, unchanged = {}, {}, [], 0, []
        for i, it in enumerate(items, start=1):
            t0 = time.perf_counter()
            try:
                out = _as_output(fn(it))
            except EcoLensError as e:
                out = MethodOutput(ranking=[])
                fails.append({"qid": it.qid, "error": str(e)})
            cost = {k: float(v) for k, v in out.cost.items()}
            cost["wall_s"] = cost.get("wall_s", time.perf_counter() - t0)
            ranking = [str(k) for k in out.ranking]
            if it.pool:
                pool = set(it.pool)
                kept = [k for k in ranking if k in pool]
                dropped += len(ranking) - len(kept)
                ranking = kept
            rankings[it.qid], costs[it.qid] = ranking, cost
            if out.scores is not None:
                scores[it.qid] = {str(k): float(v) for k, v in out.scores.items()}
            ids[it.qid] = list(out.ids)[:keep_top]
            if out.order_unchanged:
                unchanged.append(it.qid)
            if out.notes:
                notes[it.qid] = list(out.notes)
            if progress:
                progress(mname, i, len(items))
        res.per_query[mname] = score_rankings(rankings, qrels, names, n_pos=n_pos, scores=scores or None)
        res.rankings[mname] = {q: r[:keep_top] for q, r in rankings.items()}
        res.photo_ids[mname] = ids
        res.item_costs[mname], res.notes[mname], res.failures[mname] = costs, notes, fails
        res.outside_pool[mname] = dropped
        res.unchanged[mname] = unchanged
    return res


@dataclass
class DialogueResult:
    """Per-method target ranks per round and their summaries (Hits@K/Recall@K per round, BRI)."""

    ranks: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    summaries: dict[str, dict] = field(default_factory=dict)
    item_costs: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    failures: dict[str, list[dict[str, str]]] = field(default_factory=dict)


def evaluate_dialogue(items: Sequence[EvalItem], systems: Mapping[str, Callable[[EvalItem, int], Any]],
                      rounds: int, ks: Sequence[int] = (1, 5, 10)) -> DialogueResult:
    """Run each dialogue system: system(item, rounds) -> 1-based target ranks for rounds 0..rounds (or a
    (ranks, cost) tuple). A failing item is recorded and left out of that system's summary."""
    if rounds < 0:
        raise InputError(f"rounds = {rounds}", "use 0 or more rounds after the first description")
    res = DialogueResult()
    for name, fn in systems.items():
        ranks, costs, fails = {}, {}, []
        for it in items:
            t0 = time.perf_counter()
            try:
                out = fn(it, rounds)
            except EcoLensError as e:
                fails.append({"qid": it.qid, "error": str(e)})
                continue
            r, cost = (out if isinstance(out, tuple) and len(out) == 2 else (out, {}))
            ranks[it.qid] = [int(x) for x in r]
            costs[it.qid] = {**{k: float(v) for k, v in dict(cost or {}).items()},
                             "wall_s": time.perf_counter() - t0}
        res.ranks[name], res.item_costs[name], res.failures[name] = ranks, costs, fails
        res.summaries[name] = dialogue_summary(ranks, ks) if ranks else {}
    return res
