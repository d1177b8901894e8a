"""One entry point from a benchmark name and --data to items, plus the images-on-disk accounting."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from core.errors import InputError, NotFoundError
from core.evaluation.inquire import find_fullrank_files, load_inquire_fullrank, load_inquire_rerank
from core.evaluation.items import EvalItem, ImageCheck, check_images
from core.evaluation.loaders import load_coco_captions, load_visual_rag, load_visual_rag_me

BENCHMARKS = ("visual-rag", "visual-rag-me", "inquire-rerank", "inquire-fullrank", "coco", "fieldguide")
# the cut-offs each benchmark's paper reports, used as defaults for --metrics
DEFAULT_METRICS = {
    "visual-rag": ["hit@1", "hit@10", "hit@30", "ndcg_visret@10", "ndcg_visret@30", "ndcg@30"],
    "visual-rag-me": ["hit@1", "hit@10", "hit@30", "ndcg_visret@10", "ndcg_visret@30", "ndcg@30"],
    "inquire-rerank": ["ap@100", "ndcg_visret@30", "ndcg@10", "hit@10", "mrr"],
    "inquire-fullrank": ["ap@50", "ndcg@50", "recall@50", "mrr"],
    "coco": ["hit@1", "hit@10", "hit@30", "ndcg_visret@10", "ndcg_visret@30", "mrr"],
    "fieldguide": ["hit@1", "hit@10", "ndcg_visret@10", "ndcg@10", "ap@100", "mrr"],
}
# the field-guide world's benchmark folder: file -> (query kind, reader)
FIELDGUIDE_FILES = (("visual_rag.jsonl", "feature"), ("visual_rag_me.jsonl", "comparison"),
                    ("inquire_rerank.parquet", "behaviour"), ("many_part.jsonl", "many_part"))


def load_fieldguide(folder: str | Path, limit: int | None = None) -> list[EvalItem]:
    """The field-guide world's benchmark (<world>/benchmark/, or the world folder itself): every file that
    exists, each in its real benchmark's layout; kind = the query kind (feature, comparison, behaviour,
    many_part), the file's own kind kept in extra["subset_kind"]. `limit` applies per file."""
    d = Path(folder)
    if (d / "benchmark").is_dir():
        d = d / "benchmark"
    readers = {"feature": load_visual_rag, "comparison": load_visual_rag_me,
               "behaviour": load_inquire_rerank, "many_part": load_visual_rag}
    items: list[EvalItem] = []
    for name, kind in FIELDGUIDE_FILES:
        if (d / name).is_file():
            for it in readers[kind](d / name, limit):
                it.extra["subset_kind"], it.kind = it.kind, kind
                items.append(it)
    if not items:
        raise NotFoundError(f"no field-guide benchmark files in {d}",
                            f"expected some of {', '.join(n for n, _ in FIELDGUIDE_FILES)}; build the world first")
    return items


def load_benchmark(name: str, data: str | Path, limit: int | None = None) -> list[EvalItem]:
    """Read `data` in the layout of benchmark `name` (one of BENCHMARKS); fieldguide reads the folder the
    field-guide world writes its benchmark files to."""
    if name == "visual-rag":
        return load_visual_rag(data, limit)
    if name == "visual-rag-me":
        return load_visual_rag_me(data, limit)
    if name == "inquire-rerank":
        return load_inquire_rerank(data, limit)
    if name == "inquire-fullrank":
        q, a = find_fullrank_files(data)
        return load_inquire_fullrank(q, a, limit)
    if name == "coco":
        return load_coco_captions(data, limit)
    if name == "fieldguide":
        return load_fieldguide(data, limit)
    raise InputError(f"unknown benchmark {name!r}", f"use one of {', '.join(BENCHMARKS)}")


@dataclass
class PreparedItems:
    """Items ready to run: images missing under the root are taken out of pools and labels, and that is
    recorded (count, paths, affected queries, queries left with no positive) rather than hidden."""

    items: list[EvalItem]
    check: ImageCheck | None = None
    no_positive: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"queries": len(self.items), "images": None if self.check is None else self.check.to_json(),
                "queries_without_positive": self.no_positive}


def prepare_items(items: list[EvalItem], images_root: str | Path | None) -> PreparedItems:
    """Check images under `images_root` (if given); drop missing keys from each item's pool and labels,
    noting in item.extra["missing_images"] how many were removed. Without a root nothing is checked."""
    if images_root is None:
        return PreparedItems(items=list(items), no_positive=[i.qid for i in items if i.n_pos == 0])
    check = check_images(items, images_root)
    missing = set(check.missing)
    out = []
    for it in items:
        gone = [k for k in it.image_keys() if k in missing]
        if gone:
            it = replace(it, pool=[k for k in it.pool if k not in missing],
                         relevant={k: v for k, v in it.relevant.items() if k not in missing},
                         extra={**it.extra, "missing_images": len(gone)})
        out.append(it)
    return PreparedItems(items=out, check=check, no_positive=[i.qid for i in out if i.n_pos == 0])
