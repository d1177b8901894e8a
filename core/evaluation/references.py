"""Published reference numbers from the papers (methods.md sections 2 and 3), shown beside ours only when ours
were computed on the same set and split.

Values are on the metric's own 0-1 scale (the report prints ap@k x 100, as INQUIRE's tables do).
`method` uses our method names so a reference row sits next to the matching row of our table.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Reference:
    source: str
    benchmark: str  # our benchmark name ("inquire-rerank-hard" is VisRet's subset of INQUIRE-Rerank)
    metric: str  # our metric name (VisRet's nDCG is our ndcg_visret)
    method: str
    value: float
    setting: str = ""
    items: int = 0  # retrieval items the paper averaged over (Visual-RAG-ME: two per row)
    dataset: str = ""  # which set and split, in words
    kinds: tuple[str, ...] = ()  # the supercategories the paper's set keeps (empty: any)

    def to_json(self) -> dict:
        return asdict(self)


_VISRET = "VisRet paper (seed 000), CLIP retriever, table 2"
_RERANK = "Structured reranking paper (seed 002), 154 INQUIRE-Rerank queries"
_VR = dict(items=391, dataset="all 391 Visual-RAG queries")
_ME = dict(items=100, dataset="all 50 Visual-RAG-ME rows (100 retrieval items)")
_HARD = dict(items=59, dataset="the 59 INQUIRE-Rerank-Hard queries")
_RR = dict(items=154, dataset="the INQUIRE-Rerank test split without its 6 Species queries (154 queries)",
           kinds=("appearance", "behavior", "context"))

REFERENCES: tuple[Reference, ...] = (
    Reference(_VISRET, "visual-rag", "ndcg_visret@30", "baseline", 0.385, "original query", **_VR),
    Reference(_VISRET, "visual-rag", "ndcg_visret@30", "visret", 0.438, **_VR),
    Reference(_VISRET, "visual-rag-me", "ndcg_visret@30", "baseline", 0.435, "original query", **_ME),
    Reference(_VISRET, "visual-rag-me", "ndcg_visret@30", "visret", 0.605, **_ME),
    Reference(_VISRET, "inquire-rerank-hard", "ndcg_visret@30", "baseline", 0.412, "original query", **_HARD),
    Reference(_VISRET, "inquire-rerank-hard", "ndcg_visret@30", "visret", 0.455, **_HARD),
    Reference(_RERANK, "inquire-rerank", "ap@100", "rerank-direct", 0.640, "direct yes/no question", **_RR),
    Reference(_RERANK, "inquire-rerank", "ap@100", "rerank-subq", 0.611, "sub-questions only", **_RR),
    Reference(_RERANK, "inquire-rerank", "ap@100", "rerank-context", 0.642, "expert context only", **_RR),
    Reference(_RERANK, "inquire-rerank", "ap@100", "rerank-full", 0.669, "context + sub-questions", **_RR),
)


def why_not_comparable(ref: Reference, items: Sequence | None, limited: bool = False) -> str:
    """'' when the evaluated `items` (EvalItems) are the paper's set and split; else the reason in words."""
    if items is None:
        return "the evaluated set is not known"
    if limited:
        return "--limit evaluated only part of the set"
    kinds = {str(getattr(it, "kind", "") or "").lower() for it in items}
    if ref.kinds and not kinds <= set(ref.kinds):
        extra = ", ".join(sorted(kinds - set(ref.kinds))) or "(none)"
        return f"this run includes queries of kind {extra}, which the paper's set leaves out"
    if ref.items and len(items) != ref.items:
        return f"this run evaluated {len(items)} items, the paper {ref.items}"
    return ""


def references_for(benchmark: str, items: Sequence | None = None,
                   limited: bool = False) -> tuple[list[Reference], list[str]]:
    """(rows to show, reasons rows were withheld) for a report on `benchmark`. A published row is shown only
    beside numbers computed on the same set and split; a benchmark's rows never stand beside another's
    (INQUIRE-Rerank's report does not show INQUIRE-Rerank-Hard rows)."""
    shown, withheld = [], []
    for ref in (r for r in REFERENCES if r.benchmark == benchmark):
        reason = why_not_comparable(ref, items, limited)
        if reason:
            note = f"{ref.source} ({ref.dataset}): not shown, {reason}"
            if note not in withheld:
                withheld.append(note)
        else:
            shown.append(ref)
    return shown, withheld
