"""Aggregation of an EvalResult: means overall and per kind, and paired tests against the baseline."""
from __future__ import annotations

from core.evaluation.metrics import parse_metric
from core.evaluation.runner import EvalResult
from core.evaluation.significance import compare, mark


def _means(rows: dict[str, dict[str, float]], qids: list[str], metrics: list[str]) -> dict[str, float]:
    return {m: (sum(rows[q][m] for q in qids) / len(qids) if qids else 0.0) for m in metrics}


def _tests(result: EvalResult, baseline: str, qids: list[str], test: str, n_permutations: int, seed: int,
           alpha: float) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    base = result.per_query[baseline]
    for method, rows in result.per_query.items():
        if method == baseline:
            continue
        out[method] = {}
        same = order_unchanged(result, method, qids) and all(rows[q] == base[q] for q in qids)
        for m in result.metrics:
            if same:  # a rerank that moved no photo of the baseline: no delta to test or show
                out[method][m] = {"p": 1.0, "delta": None, "test": test, "mark": "", "order_unchanged": True}
                continue
            c = compare([rows[q][m] for q in qids], [base[q][m] for q in qids], test, n_permutations, seed)
            c["mark"] = mark(c["p"], c["delta"], alpha)
            out[method][m] = c
    return out


def order_unchanged(result: EvalResult, method: str, qids: list[str] | None = None) -> bool:
    """Whether the method's rerank moved no photo on any of the queries (all of them by default)."""
    qids = [it.qid for it in result.items] if qids is None else qids
    moved = set(qids) - set(result.unchanged.get(method, []))
    return bool(qids) and not moved


def summarize(result: EvalResult, baseline: str | None = None, test: str = "randomization",
              n_permutations: int = 10_000, seed: int = 0, alpha: float = 0.05) -> dict:
    """{"n_queries", "baseline", "test", "alpha", "overall": {method: {metric: mean}},
    "by_kind": {kind: {"n": n, "methods": {method: {metric: mean}}}},
    "significance": {method: {metric: {p, delta, mark}}} (vs the baseline),
    "significance_by_kind": {kind: {method: {metric: {...}}}}}. Baseline defaults to the first method."""
    methods = result.methods
    baseline = baseline if baseline in methods else (methods[0] if methods else None)
    qids = [it.qid for it in result.items]
    kinds: dict[str, list[str]] = {}
    for it in result.items:
        kinds.setdefault(it.kind or "(none)", []).append(it.qid)
    out: dict = {"n_queries": len(qids), "baseline": baseline, "test": test, "alpha": alpha,
                 "overall": {m: _means(result.per_query[m], qids, result.metrics) for m in methods},
                 "by_kind": {k: {"n": len(q), "methods": {m: _means(result.per_query[m], q, result.metrics)
                                                          for m in methods}} for k, q in sorted(kinds.items())},
                 "significance": {}, "significance_by_kind": {}}
    if baseline is not None and len(methods) > 1:
        out["significance"] = _tests(result, baseline, qids, test, n_permutations, seed, alpha)
        if len(kinds) > 1:
            out["significance_by_kind"] = {k: _tests(result, baseline, q, test, n_permutations, seed, alpha)
                                           for k, q in sorted(kinds.items())}
    return out


def fmt(metric: str, value: float) -> str:
    """ap@k prints x 100 with one decimal (as INQUIRE's tables); everything else with three decimals."""
    return f"{100 * value:.1f}" if parse_metric(metric)[0] == "ap" else f"{value:.3f}"


def header(metric: str) -> str:
    base, k = parse_metric(metric)
    return f"AP@{k} (x100)" if base == "ap" else metric
