"""Retrieval metrics with the benchmarks' own definitions (methods.md section 6).

A ranking is a sequence of pool keys, best first; `relevant` maps keys to graded labels (> 0 = relevant).
Where ranx computes exactly our definition (standard nDCG, true recall, hit rate, reciprocal rank) we call
ranx; where a benchmark defines a metric differently (VisRet's nDCG, INQUIRE's AP@k) the function here says
which definition it reproduces. Metric names: hit@k, recall@k, ndcg@k, ndcg_visret@k, ap@k, mrr, mrr@k.

Ties. A method's ranking is scored in the order it returns (its own deterministic tie-breaking: FAISS order,
RRF's best single rank then id, the judge's first-stage order). When the scores are given too, tied scores
are treated as the benchmarks' scikit-learn-based scorers treat them, where those are deterministic: INQUIRE's
AP@k (average_precision_score: a run of equal scores is one threshold) and nDCG@k (ndcg_score: a run of equal
scores shares the mean gain of its members). Hit@k, MRR and which items enter a top k when a tie group
straddles position k follow the ranking's order: the authors' scorers take those from numpy's argsort, whose
order among equal scores is not specified (not deterministic), so no rule could match them.

The same rule for every method: each is scored by the scores it was sorted by. A rerank that moved no photo of
its first stage is scored by the first stage's scores (core/evaluation/engine_methods.py), so an unchanged
order scores exactly as its first stage; scored by a tie group of equal judge scores it would get the mean
gain of a shuffled order.
"""
from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence

from core.contracts.errors import InputError

BASES = ("hit", "recall", "ndcg", "ndcg_visret", "ap", "mrr")
_RANX_NAMES = {"hit": "hit_rate", "recall": "recall", "ndcg": "ndcg", "mrr": "mrr"}
_NAME = re.compile(r"^([a-z_]+)(?:@(\d+))?$")


def parse_metric(name: str) -> tuple[str, int | None]:
    """'ndcg@10' -> ('ndcg', 10); 'mrr' -> ('mrr', None). Raises InputError for unknown names."""
    m = _NAME.match(name.strip().lower())
    if not m or m.group(1) not in BASES:
        raise InputError(f"unknown metric {name!r}",
                         "use one of hit@K, recall@K, ndcg@K, ndcg_visret@K, ap@K, mrr, mrr@K")
    base, k = m.group(1), (int(m.group(2)) if m.group(2) else None)
    if base != "mrr" and k is None:
        raise InputError(f"metric {name!r} needs a cut-off", f"write it as {base}@10 (any K >= 1)")
    if k is not None and k < 1:
        raise InputError(f"metric {name!r} has cut-off {k}", "K must be at least 1")
    return base, k


def parse_metrics(names: str | Sequence[str]) -> list[str]:
    """A comma-separated string or a list -> validated, normalised metric names in the given order."""
    items = names.split(",") if isinstance(names, str) else list(names)
    out = []
    for n in (x.strip().lower() for x in items):
        if n and n not in out:
            parse_metric(n)
            out.append(n)
    if not out:
        raise InputError("no metric given", "e.g. --metrics ndcg@10,ap@100,hit@5")
    return out


def _dedupe(ranking: Sequence[str]) -> list[str]:
    """Keep each key's first (best) position; a repeated key is not a second hit."""
    seen: set[str] = set()
    return [str(d) for d in ranking if not (str(d) in seen or seen.add(str(d)))]


def _positives(relevant: Mapping[str, int]) -> dict[str, float]:
    return {str(d): float(r) for d, r in relevant.items() if r > 0}


# ---------------------------------------------------------------- ranx-backed (standard definitions)

def score_with_ranx(rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                    metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    """Standard hit@k, recall@k, ndcg@k (gain rel/log2(p+1), ideal from qrels), mrr[@k], computed by ranx.

    Every query of `qrels` gets a value. A query without positives, or with an empty ranking, scores 0
    (ranx cannot hold an empty query; 0 is what each definition gives there).
    """
    names = [m for m in metrics if parse_metric(m)[0] in _RANX_NAMES]
    out: dict[str, dict[str, float]] = {q: {m: 0.0 for m in names} for q in qrels}
    ranx_q, ranx_r = {}, {}
    for q, rel in qrels.items():
        pos = _positives(rel)
        ranked = _dedupe(rankings.get(q, ()))
        if pos and ranked:
            ranx_q[str(q)] = pos
            # strictly decreasing scores so ranx keeps exactly our order (no tie-breaking of its own)
            ranx_r[str(q)] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    if not names or not ranx_q:
        return out
    from ranx import Qrels, Run, evaluate  # heavy (numba): imported only when needed

    run = Run(ranx_r)
    translated = {}
    for m in names:
        base, k = parse_metric(m)
        translated[m] = _RANX_NAMES[base] + (f"@{k}" if k is not None else "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluate(Qrels(ranx_q), run, sorted(set(translated.values())), return_mean=False, threads=1)
    for m, rm in translated.items():
        for q, v in run.scores[rm].items():
            out[q][m] = float(v)
    return out


def hit_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """VisRet's "Recall@k": 1 if any relevant key is in the top k, else 0 (ranx hit_rate)."""
    return score_with_ranx({"q": ranking}, {"q": relevant}, [f"hit@{k}"])["q"][f"hit@{k}"]


def recall_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """True recall: |relevant in top k| / |relevant| (ranx recall)."""
    return score_with_ranx({"q": ranking}, {"q": relevant}, [f"recall@{k}"])["q"][f"recall@{k}"]


def ndcg_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Standard nDCG@k: DCG = sum_{p<=k} rel_p / log2(p+1); ideal DCG from all of `relevant` (ranx ndcg)."""
    return score_with_ranx({"q": ranking}, {"q": relevant}, [f"ndcg@{k}"])["q"][f"ndcg@{k}"]


def mrr(ranking: Sequence[str], relevant: Mapping[str, int], k: int | None = None) -> float:
    """Reciprocal rank of the first relevant key (0 if none, or none in the top k) (ranx mrr)."""
    name = "mrr" if k is None else f"mrr@{k}"
    return score_with_ranx({"q": ranking}, {"q": relevant}, [name])["q"][name]


# ---------------------------------------------------------------- own code (benchmark definitions)

def _tie_averaged_dcg(gains: Sequence[float], scores: Sequence[float]) -> float:
    """DCG of items ordered by descending score where tied items share the mean gain of their group.

    This is scikit-learn's tie-aware DCG (ndcg_score with ignore_ties=False, no k): a group of c tied
    items occupying positions a..a+c-1 contributes mean(gains of the group) * sum_{p=a}^{a+c-1} 1/log2(p+1).
    """
    groups: dict[float, list[float]] = {}
    for g, s in zip(gains, scores):
        groups.setdefault(float(s), []).append(float(g))
    dcg, pos = 0.0, 1
    for s in sorted(groups, reverse=True):
        members = groups[s]
        discount = sum(1.0 / math.log2(p + 1) for p in range(pos, pos + len(members)))
        dcg += (sum(members) / len(members)) * discount
        pos += len(members)
    return dcg


def ndcg_visret_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """nDCG@k as VisRet's public code computes it (needed to set our numbers beside its tables).

    Take the binary labels L of the retrieved top k (in retrieved order). Call scikit-learn's
    ndcg_score(y_true=[sorted(L, descending)], y_score=[L]): the retrieved labels act as scores, so the
    hits form one tie group and the misses another, and each group gets the mean of the *sorted* labels at
    its members' positions (tie-averaged DCG); the ideal DCG is that of sorted(L) itself, i.e. the ideal
    comes from the retrieved top k, not from the pool. 0 when the top k holds no hit; for k = 1 (where
    nDCG is undefined) the value is hit@1, as in the paper.
    """
    labels = [1.0 if relevant.get(d, 0) > 0 else 0.0 for d in _dedupe(ranking)[:k]]
    if not any(labels):
        return 0.0
    if k == 1 or len(labels) == 1:
        return 1.0 if labels[0] > 0 else 0.0
    ideal = sorted(labels, reverse=True)
    idcg = sum(g / math.log2(p + 1) for p, g in enumerate(ideal, start=1))
    return _tie_averaged_dcg(ideal, labels) / idcg


def tie_groups(ranking: Sequence[str], scores: Mapping[str, float] | None) -> list[tuple[int, int]]:
    """(start, end) 0-based half-open spans of runs of adjacent keys with equal scores; singletons without
    scores (a score missing for a key breaks the run)."""
    groups: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(ranking) + 1):
        same = (i < len(ranking) and scores is not None and ranking[i] in scores and ranking[start] in scores
                and float(scores[ranking[i]]) == float(scores[ranking[start]]))
        if not same:
            groups.append((start, i))
            start = i
    return groups


def ap_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int, n_pos: int | None = None,
            scores: Mapping[str, float] | None = None) -> float:
    """AP@k as INQUIRE's scorer defines it: (1 / min(N_pos, k)) * sum over relevant positions i <= k of
    precision@i. N_pos = number of positives in the candidate pool (for INQUIRE-Rerank, among the 100
    candidates); by default the positives of `relevant`. 0 when N_pos is 0. (ranx's map@k divides by
    N_pos instead, so it differs whenever N_pos > k.) With `scores`, a run of equal scores in the top k is one
    threshold, as scikit-learn's average_precision_score (INQUIRE's scorer) counts it: each positive of the
    run gets the precision at the run's end.
    """
    pos = _positives(relevant)
    n = len(pos) if n_pos is None else int(n_pos)
    if n <= 0:
        return 0.0
    top = _dedupe(ranking)[:k]
    hits, total = 0, 0.0
    for a, b in tie_groups(top, scores):
        found = sum(1 for d in top[a:b] if d in pos)
        hits += found
        total += found * hits / b
    return total / min(n, k)


def ndcg_tied_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int,
                   scores: Mapping[str, float]) -> float:
    """Standard nDCG@k where a run of equal scores shares the mean gain of its members at its positions (as
    scikit-learn's ndcg_score, INQUIRE's scorer, does); ideal DCG from all of `relevant`. Equals ndcg_at_k
    when no two adjacent scores are equal."""
    ranked = _dedupe(ranking)
    gains = [float(relevant.get(d, 0)) if relevant.get(d, 0) > 0 else 0.0 for d in ranked]
    ideal = sorted((float(r) for r in relevant.values() if r > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(p + 1) for p, g in enumerate(ideal, start=1))
    if idcg <= 0:
        return 0.0
    dcg = 0.0
    for a, b in tie_groups(ranked, scores):
        if a >= k:
            break
        mean = sum(gains[a:b]) / (b - a)
        dcg += mean * sum(1.0 / math.log2(p + 2) for p in range(a, min(b, k)))
    return dcg / idcg


_OWN = {"ndcg_visret": ndcg_visret_at_k, "ap": ap_at_k}


def _has_ties(ranking: Sequence[str], scores: Mapping[str, float] | None) -> bool:
    return scores is not None and any(b - a > 1 for a, b in tie_groups(_dedupe(ranking), scores))


def score_rankings(rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                   metrics: Sequence[str], n_pos: Mapping[str, int] | None = None,
                   scores: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, dict[str, float]]:
    """Per-query values {qid: {metric: value}} for every query of `qrels`, metrics in the given order.

    One ranx call covers the standard metrics; VisRet nDCG and INQUIRE AP use the functions above.
    `n_pos` optionally overrides N_pos per query for ap@k. `scores` (qid -> key -> score), when given, makes
    ap@k and ndcg@k treat runs of equal scores as INQUIRE's scikit-learn scorer does (see the module note).
    """
    metrics = parse_metrics(metrics)
    std = score_with_ranx(rankings, qrels, metrics)
    out: dict[str, dict[str, float]] = {}
    for q, rel in qrels.items():
        ranked = rankings.get(q, ())
        sc = scores.get(q) if scores else None
        tied = _has_ties(ranked, sc)
        row: dict[str, float] = {}
        for m in metrics:
            base, k = parse_metric(m)
            if base == "ap":
                row[m] = ap_at_k(ranked, rel, k, None if n_pos is None else n_pos.get(q), sc)
            elif base == "ndcg" and tied:
                row[m] = ndcg_tied_at_k(ranked, rel, k, sc)
            elif base in _OWN:
                row[m] = _OWN[base](ranked, rel, k)
            else:
                row[m] = std[q][m]
        out[q] = row
    return out


def mean_metrics(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Macro-average over queries: {metric: mean}. Empty input -> {}."""
    sums: dict[str, list[float]] = {}
    for row in per_query.values():
        for m, v in row.items():
            sums.setdefault(m, []).append(float(v))
    return {m: sum(v) / len(v) for m, v in sums.items()}
