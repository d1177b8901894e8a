"""Published reference numbers from the papers (methods.md sections 2 and 3), shown beside ours.

Values are on the metric's own 0-1 scale (the report prints ap@k x 100, as INQUIRE's tables do).
`method` uses our method names so a reference row sits next to the matching row of our table.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Reference:
    source: str
    benchmark: str  # our benchmark name; "inquire-rerank-hard" is VisRet's subset of INQUIRE-Rerank
    metric: str  # our metric name (VisRet's nDCG is our ndcg_visret)
    method: str
    value: float
    setting: str = ""

    def to_json(self) -> dict:
        return asdict(self)


_VISRET = "VisRet paper (seed 000), CLIP retriever, table 2"
_RERANK = "Structured reranking paper (seed 002), 154 INQUIRE-Rerank queries"

REFERENCES: tuple[Reference, ...] = (
    Reference(_VISRET, "visual-rag", "ndcg_visret@30", "baseline", 0.385, "original query"),
    Reference(_VISRET, "visual-rag", "ndcg_visret@30", "visret", 0.438),
    Reference(_VISRET, "visual-rag-me", "ndcg_visret@30", "baseline", 0.435, "original query"),
    Reference(_VISRET, "visual-rag-me", "ndcg_visret@30", "visret", 0.605),
    Reference(_VISRET, "inquire-rerank-hard", "ndcg_visret@30", "baseline", 0.412, "original query"),
    Reference(_VISRET, "inquire-rerank-hard", "ndcg_visret@30", "visret", 0.455),
    Reference(_RERANK, "inquire-rerank", "ap@100", "rerank-direct", 0.640, "direct yes/no question"),
    Reference(_RERANK, "inquire-rerank", "ap@100", "rerank-subq", 0.611, "sub-questions only"),
    Reference(_RERANK, "inquire-rerank", "ap@100", "rerank-context", 0.642, "expert context only"),
    Reference(_RERANK, "inquire-rerank", "ap@100", "rerank-full", 0.669, "context + sub-questions"),
)

# benchmarks whose published rows are relevant to one of ours
_RELATED = {"inquire-rerank": ("inquire-rerank", "inquire-rerank-hard")}


def references_for(benchmark: str) -> list[Reference]:
    """The published rows to show in a report on `benchmark` (INQUIRE-Rerank also shows the -Hard rows)."""
    wanted = _RELATED.get(benchmark, (benchmark,))
    return [r for r in REFERENCES if r.benchmark in wanted]
