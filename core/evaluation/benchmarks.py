"""One entry point from a benchmark name and --data to items, plus the images-on-disk accounting."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from core.contracts.errors import InputError
from core.evaluation.inquire import (
    find_fullrank_files,
    load_inquire_fullrank,
    load_inquire_rerank,
    load_inquire_rerank_hard,
)
from core.evaluation.items import EvalItem, ImageCheck, check_images
from core.evaluation.loaders import load_coco_captions, load_visual_rag, load_visual_rag_me
from core.plugins import registry as plugins

BENCHMARKS = ["visual-rag", "visual-rag-me", "inquire-rerank", "inquire-rerank-hard", "inquire-fullrank", "coco"]
# the cut-offs each benchmark's paper reports, used as defaults for --metrics
DEFAULT_METRICS = {
    "visual-rag": ["hit@1", "hit@10", "hit@30", "ndcg_visret@10", "ndcg_visret@30", "ndcg@30"],
    "visual-rag-me": ["hit@1", "hit@10", "hit@30", "ndcg_visret@10", "ndcg_visret@30", "ndcg@30"],
    "inquire-rerank": ["ap@100", "ndcg_visret@30", "ndcg@10", "hit@10", "mrr"],
    "inquire-rerank-hard": ["hit@1", "hit@10", "hit@30", "ndcg_visret@10", "ndcg_visret@30", "ap@100"],
    "inquire-fullrank": ["ap@50", "ndcg@50", "recall@50", "mrr"],
    "coco": ["hit@1", "hit@10", "hit@30", "ndcg_visret@10", "ndcg_visret@30", "mrr"],
}
# a plug-in's benchmark (a world's own) comes with its registration (core.plugins.registry), named like it


def benchmark_names() -> list[str]:
    """The names `eval --benchmark` accepts: EcoLens's own, then the registered plug-ins' benchmarks."""
    return BENCHMARKS + [name for name in plugins.benchmarks() if name not in BENCHMARKS]


def default_metrics(name: str) -> list[str]:
    """The metrics a benchmark reports unless --metrics names others (Visual-RAG's for an unknown name)."""
    plugin = plugins.benchmarks().get(name)
    if plugin is not None and plugin.benchmark_metrics:
        return list(plugin.benchmark_metrics)
    return list(DEFAULT_METRICS.get(name, DEFAULT_METRICS["visual-rag"]))


def own_catalog(name: str) -> bool:
    """Whether benchmark `name` runs on its world's own catalog (the world is its corpus) instead of a catalog
    of its images."""
    plugin = plugins.benchmarks().get(name)
    return plugin is not None and plugin.benchmark_own_catalog


def load_benchmark(name: str, data: str | Path, limit: int | None = None) -> list[EvalItem]:
    """Read `data` in the layout of benchmark `name` (one of BENCHMARKS, including those plug-ins registered)."""
    if name == "visual-rag":
        return load_visual_rag(data, limit)
    if name == "visual-rag-me":
        return load_visual_rag_me(data, limit)
    if name == "inquire-rerank":
        return load_inquire_rerank(data, limit)
    if name == "inquire-rerank-hard":
        return load_inquire_rerank_hard(data, limit)
    if name == "inquire-fullrank":
        q, a = find_fullrank_files(data)
        return load_inquire_fullrank(q, a, limit)
    if name == "coco":
        return load_coco_captions(data, limit)
    plugin = plugins.benchmarks().get(name)
    if plugin is not None:
        return plugin.benchmark(data, limit)
    raise InputError(f"unknown benchmark {name!r}", f"use one of {', '.join(benchmark_names())}")


# the VisRet release keeps each benchmark's file in data/ and asks for its images under data/images/
_RELEASE_IMAGES = ("visual-rag", "visual-rag-me", "inquire-rerank-hard")


def default_images_root(name: str, data: str | Path | None) -> Path | None:
    """Where the benchmark's images are when --images is not given: the release layout's `images/` folder next
    to the data file (or inside the data folder); None when there is none."""
    if name not in _RELEASE_IMAGES or not data:
        return None
    d = Path(data)
    for folder in ((d if d.is_dir() else d.parent) / "images", d / "data" / "images"):
        if folder.is_dir():
            return folder
    return None


@dataclass
class PreparedItems:
    """Items ready to run, and what was taken out on the way, recorded rather than hidden: images missing under
    the root (or never ingested) are removed from pools and labels; an item left with no image is a failed
    item (listed with its reason, excluded from every mean, counted in the report)."""

    items: list[EvalItem]
    check: ImageCheck | None = None
    no_positive: list[str] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)  # [{qid, query, reason}]
    total: int = 0
    not_ingested: list[str] = field(default_factory=list)  # on disk (or no root given) but not in the catalog

    def to_json(self) -> dict:
        return {"queries": len(self.items), "items_total": self.total or len(self.items),
                "images": None if self.check is None else self.check.to_json(),
                "queries_without_positive": self.no_positive, "failed_items": self.failed,
                "not_ingested": self.not_ingested}

    def nothing_to_evaluate(self) -> str:
        """Why no item can be evaluated, with every failed item listed (for the error the CLI prints)."""
        lines = [f"nothing to evaluate: all {len(self.failed)} items failed"]
        lines += [f"  - {f['qid']}: {f['reason']}" for f in self.failed]
        return "\n".join(lines)


def _without(it: EvalItem, gone: set[str], note: str) -> EvalItem:
    lost = [k for k in it.image_keys() if k in gone]
    if not lost:
        return it
    return replace(it, pool=[k for k in it.pool if k not in gone],
                   relevant={k: v for k, v in it.relevant.items() if k not in gone},
                   extra={**it.extra, note: len(lost)})


def prepare_items(items: list[EvalItem], images_root: str | Path | None,
                  in_catalog: set[str] | None = None) -> PreparedItems:
    """Check images under `images_root` (if given) and, when `in_catalog` (the keys the evaluation catalog
    holds) is given, that they were ingested; drop what is missing from each item's pool and labels (counted in
    item.extra["missing_images"] / ["not_ingested"]). An item with a pool left empty, or a whole-corpus item
    left with no labelled image, fails: it never becomes a search of the whole corpus."""
    check = check_images(items, images_root) if images_root is not None else None
    missing = set(check.missing) if check else set()
    prepared, failed, not_ingested = [], [], []
    for it in items:
        was_pool, had = bool(it.pool), len(it.pool or it.relevant)
        it = _without(it, missing, "missing_images")
        left = it.pool if was_pool else list(it.relevant)
        reason = "" if left else (f"none of its {had} images is present under {images_root}" if had
                                  else "the benchmark names no image for it")
        if not reason and in_catalog is not None:
            absent = {k for k in it.image_keys() if k not in in_catalog}
            not_ingested += sorted(absent - set(not_ingested))
            it = _without(it, absent, "not_ingested")
            if not (it.pool if was_pool else it.relevant):
                reason = "none of its images is in the evaluation catalog (not found, or unreadable at ingest)"
        if reason:
            failed.append({"qid": it.qid, "query": it.query, "reason": reason})
        else:
            prepared.append(it)
    return PreparedItems(items=prepared, check=check, no_positive=[i.qid for i in prepared if i.n_pos == 0],
                         failed=failed, total=len(items), not_ingested=not_ingested)
