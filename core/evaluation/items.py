"""The evaluation item (one query with its pool and labels) and the check of its images on disk."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class EvalItem:
    """One retrieval query of a benchmark.

    `pool` lists the image keys the query may return (Visual-RAG: the species' images; INQUIRE-Rerank: the
    100 candidates, in first-stage order); an empty pool means the whole corpus (INQUIRE full-rank, COCO).
    `relevant` maps image keys to labels (0 = judged not relevant); keys are paths relative to the images
    root where the benchmark has files. `kind` is the supercategory or query kind used to split tables.
    """

    qid: str
    query: str
    kind: str = ""
    pool: list[str] = field(default_factory=list)
    relevant: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def whole_corpus(self) -> bool:
        return not self.pool

    @property
    def n_pos(self) -> int:
        """Positives among the candidates (INQUIRE AP@k's N_pos)."""
        return sum(1 for r in self.relevant.values() if r > 0)

    def image_keys(self) -> list[str]:
        """Every image this item names (pool first, then labelled images outside the pool)."""
        seen = dict.fromkeys(self.pool)
        seen.update(dict.fromkeys(self.relevant))
        return list(seen)

    def to_json(self) -> dict[str, Any]:
        return {"qid": self.qid, "query": self.query, "kind": self.kind, "pool_size": len(self.pool),
                "n_pos": self.n_pos, "extra": self.extra}


@dataclass
class ImageCheck:
    """Which images of a benchmark exist under an images root. Nothing is dropped silently: the report
    prints `missing_count` and the first missing paths; `items_affected` lists the qids concerned."""

    root: str
    checked: int = 0
    missing: list[str] = field(default_factory=list)
    items_affected: list[str] = field(default_factory=list)

    @property
    def missing_count(self) -> int:
        return len(self.missing)

    @property
    def ok(self) -> bool:
        return not self.missing

    def summary(self, limit: int = 10) -> str:
        if self.ok:
            return f"all {self.checked} images found under {self.root}"
        shown = ", ".join(self.missing[:limit]) + (" ..." if self.missing_count > limit else "")
        return (f"{self.missing_count} of {self.checked} images missing under {self.root} "
                f"({len(self.items_affected)} queries affected): {shown}")

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "checked": self.checked, "missing_count": self.missing_count,
                "missing": self.missing, "items_affected": self.items_affected}


def check_images(items: list[EvalItem], root: str | Path) -> ImageCheck:
    """Look up every image key of `items` under `root`; returns the counts and the missing paths."""
    base = Path(root)
    result = ImageCheck(root=str(base))
    seen: dict[str, bool] = {}
    for item in items:
        affected = False
        for key in item.image_keys():
            if key not in seen:
                seen[key] = (base / key).is_file()
                result.checked += 1
                if not seen[key]:
                    result.missing.append(key)
            affected = affected or not seen[key]
        if affected:
            result.items_affected.append(item.qid)
    return result
