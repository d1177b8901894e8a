"""The field-guide world's benchmark as `eval --benchmark fieldguide` reads it: the files the world writes (in the
layouts of the real benchmarks) turned into evaluation items. Registered by fieldguide.plugin."""
from __future__ import annotations

from pathlib import Path

from core.contracts.errors import NotFoundError
from core.evaluation.inquire import load_inquire_rerank
from core.evaluation.items import EvalItem
from core.evaluation.loaders import load_visual_rag, load_visual_rag_me

METRICS = ["hit@1", "hit@10", "ndcg_visret@10", "ndcg@10", "ap@100", "mrr"]
# the world's benchmark folder: file -> (query kind, reader)
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
        what = "is a file, not the folder of" if d.is_file() else "holds no"
        raise NotFoundError(f"--data {d} {what} field-guide benchmark files",
                            f"point --data at the folder holding some of {', '.join(n for n, _ in FIELDGUIDE_FILES)}, "
                            "or leave --data out for the demo world's own (built by "
                            "`python scripts/build_fieldguide.py DIR`)")
    return items
