"""`python app.py eval --benchmark NAME --data PATH --methods a,b --out DIR`: run retrieval methods on a
benchmark with its own pools and write a report (tables, significance, plots, costs)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from cli.common import progress_bar
from core.errors import InputError
from cli.eval_args import add_eval_arguments
from core.evaluation.commands import load_items, parse_methods, run_benchmark
from core.evaluation.runner import MethodOutput, evaluate_dialogue
from core.methods.pipeline import Pipeline, SearchRequest
from core.records import Filters

# method name -> SearchRequest fields
SPECS: dict[str, dict] = {
    "baseline": {}, "rewrite": {"method": "rewrite"}, "visret": {"method": "visret"},
    **{f"rerank-{m}": {"rerank": m} for m in ("direct", "subq", "context", "full")},
    "visret+rerank-full": {"method": "visret", "rerank": "full"},
    "coverage": {"coverage": True},
}


def add_parser(sub) -> None:
    add_eval_arguments(sub.add_parser("eval", help="run retrieval methods on a benchmark and write a report"))


def _photo_keys(engine, images_root: str | None) -> dict[int, str]:
    """Catalog photo id -> the benchmark's key for it: the INQUIRE file name, else the path relative to the
    images root."""
    root = Path(images_root).resolve() if images_root else None
    keys: dict[int, str] = {}
    for photo in engine.catalog.all_photos():
        key = photo.extra.get("inat24_file_name") if isinstance(photo.extra, dict) else None
        if not key:
            key = photo.path
            if root is not None and Path(photo.path).is_absolute():
                try:
                    key = os.path.relpath(photo.path, root)
                except ValueError:
                    pass
        keys[photo.id] = str(key)
    return keys


def _ranking(result, spec: dict, key_of: dict[int, str]) -> list[str]:
    ids = [h.photo_id for h in result.hits]
    if spec.get("coverage") and result.stages.get("coverage"):
        # coverage is a set, not a ranking: its photos first (most parts covered, then dense score), then the rest
        cover = sorted(result.stages["coverage"]["photos"], key=lambda p: (-len(p["satisfies"]), -p["dense"]))
        first = [p["id"] for p in cover]
        ids = first + [i for i in ids if i not in set(first)]
    return [key_of[i] for i in ids if i in key_of]


def organism_of(item) -> int | None:
    """Visual-RAG-ME items (kind "entity_1"/"entity_2", qid ending "-e1"/"-e2") look for one organism of a
    comparison: 0 or 1. Every other item: None."""
    kind = str(getattr(item, "kind", "") or "")
    if kind in ("entity_1", "entity_2"):
        return int(kind[-1]) - 1
    qid = str(item.qid)
    if qid.endswith(("-e1", "-e2")):
        return int(qid[-1]) - 1
    return None


def request_for(item, spec: dict, id_of: dict[str, int]) -> SearchRequest:
    """The pipeline request that runs one benchmark item with one method: the item's own pool, and for
    Visual-RAG-ME the organism it is scored on (each organism is retrieved on its own)."""
    ids = tuple(id_of[k] for k in item.pool if k in id_of)
    if item.pool and not ids:
        raise InputError(f"none of query {item.qid}'s images is in the catalog",
                         "ingest the benchmark's images (--images ROOT) first")
    return SearchRequest(item.query, k=max(len(ids), 100), filters=Filters(ids=ids) if ids else None,
                         organism=organism_of(item), **spec)


def run(ctx, args) -> int:
    engine = ctx.engine()
    notices = engine.ensure_corpus()
    if args.benchmark == "fieldguide":
        world = engine.settings.path("fieldguide")
        args.data = args.data or str(world)
        args.images = args.images or args.data
    items = load_items(args)
    if args.images and args.benchmark != "fieldguide":
        engine.ingestor().run(args.images)  # incremental: only photos not yet in the catalog are read
        engine.search.reload()
    key_of = _photo_keys(engine, args.images)
    id_of = {k: i for i, k in key_of.items()}
    pipeline = Pipeline(engine.search)

    def make(spec: dict):
        def method(item):
            result = pipeline.run(request_for(item, spec, id_of))
            cache = result.stages.get("cache", {})
            calls = cache.get("calls", {})
            cost = {"llm_calls": calls.get("llm", 0), "judge_calls": calls.get("judge", 0),
                    "generator_calls": calls.get("generator", 0), "cache_hits": cache.get("cache_hits_total", 0),
                    "ms": result.timings_ms.get("total", 0.0)}
            return MethodOutput(_ranking(result, spec, key_of), cost, result.notices)
        return method

    names = parse_methods(args.methods, list(SPECS) + ["plugir"])
    methods = {n: make(SPECS[n]) for n in names if n != "plugir"}
    dialogue = None
    if "plugir" in names or args.rounds:
        from core.evaluation.simulated_user import plugir_ranks

        rounds = args.rounds or 3
        dialogue = evaluate_dialogue(items, {"plugir": lambda item, r: plugir_ranks(engine.search, item, r, id_of)},
                                     rounds)
    update, bar = progress_bar("eval", unit="query")
    try:
        out = run_benchmark(args, methods, items=items,
                            models={r: v["model_id"] + (" (stand-in)" if v["standin"] else "")
                                    for r, v in engine.backends.describe().items()},
                            dialogue=dialogue, progress=lambda m, d, t: update(d, t))
    finally:
        bar.close()
    out["notices"] = notices
    print(json.dumps(out, indent=2, default=str))
    return 0
