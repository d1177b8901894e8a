"""`python app.py eval --benchmark NAME --data PATH --methods a,b --out DIR`: run named searches of the engine
on a benchmark with its own pools and write a report (tables, significance, plots, costs, failed items,
deviations from the papers, and with --answers the answer accuracy).

Real benchmarks are evaluated in a catalog of their own, data_dir/eval/<benchmark>-<hash of the image
source>, that holds only the benchmark's images (never the synthetic world); a world plug-in's own benchmark
(fieldguide) runs on the world's own catalog. Items left with no image fail; when none is left the command exits
with 2."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from cli.common import prepare, progress_bar
from cli.eval_args import add_eval_arguments, check_eval_arguments
from core.contracts.errors import InputError, NotFoundError
from core.evaluation.benchmarks import default_images_root, own_catalog
from core.evaluation.caveats import model_caveats
from core.evaluation.commands import load_items, parse_methods, prepare_or_fail, run_benchmark
from core.evaluation.engine_methods import engine_methods, photo_keys
from core.evaluation.runner import evaluate_dialogue
from core.plugins.registry import demo_world, get_world
from core.search.presets import METHOD_NAMES


def add_parser(sub) -> None:
    add_eval_arguments(sub.add_parser("eval", help="run retrieval methods on a benchmark and write a report"))


def image_source(args) -> tuple[str, str | None]:
    """(what to ingest, the root the benchmark's image paths are relative to). INQUIRE-Rerank's parquet holds
    its pictures, so without --images it is ingested itself and its keys are the iNat24 file names."""
    if args.benchmark == "inquire-rerank" and not args.images:
        return str(args.data), None
    root = args.images or default_images_root(args.benchmark, args.data)
    if not root:
        raise InputError(f"--benchmark {args.benchmark} needs its images: --images ROOT",
                         "the folder the benchmark's image paths are relative to (for VisRet's release: "
                         "data/images/, one folder per species)")
    if not Path(root).is_dir():
        raise NotFoundError(f"--images {root} is not a folder", "point --images at the benchmark's image folder")
    args.images = str(root)
    return str(root), str(root)


def eval_services(ctx, benchmark: str, source: str, catalog_evidence: bool = False):
    """Services on data_dir/eval/<benchmark>-<hash>: a catalog holding only this benchmark's images."""
    tag = hashlib.sha1(str(Path(source).resolve()).encode("utf-8")).hexdigest()[:10]
    settings = ctx.settings.replace(data_dir=str(ctx.settings.path("eval", f"{benchmark}-{tag}")),
                                    catalog_evidence=catalog_evidence, group_words=False,
                                    near_copies=False)
    return dataclasses.replace(ctx, settings=settings, _services=None).services()


def evidence_note(on: bool) -> str:
    """What the report says about catalog facts as evidence (settings.catalog_evidence)."""
    if on:
        return ("on (--catalog-evidence): sub-questions about what the catalog records were answered from it where a "
                "photo records the field; the benchmark's own protocol ranks pictures alone")
    return ("off: every sub-question was answered from the picture, as the benchmark's protocol ranks pictures alone "
            "(--catalog-evidence turns it on)")


# a benchmark ranks pictures alone: a group word's photos are never put first by the catalog's taxonomy
GROUP_WORDS_NOTE = ("off (the benchmark ranks pictures alone, so the catalog's taxonomy does not put a group's "
                    "photos first)")


def run(ctx, args) -> int:
    check_eval_arguments(args)  # before any work: numbers in range, --data a file or folder, --out writable
    names = parse_methods(args.methods, list(METHOD_NAMES) + ["plugir"])
    on = bool(args.catalog_evidence)
    if own_catalog(args.benchmark):
        services = dataclasses.replace(ctx, settings=ctx.settings.replace(catalog_evidence=on, group_words=False,
                                                                          near_copies=False),
                                       _services=None).services()
        notices = prepare(services)
        # a world's own benchmark is read in its terms, wherever its photos lie
        if get_world(args.benchmark) is not None:
            services.read_as(args.benchmark)
        world = demo_world()
        args.data = args.data or str(services.settings.path(world.demo_folder if world else args.benchmark))
        args.images = args.images or args.data
        items = load_items(args)
        prepare_or_fail(items, args.images)  # exit 2 before any work when no image is there
        root = args.images
        catalog = (f"the {args.benchmark} world's own catalog in {services.settings.path()} (the world is this "
                   "benchmark's corpus)")
    else:
        items = load_items(args)
        source, root = image_source(args)
        if root is not None:
            prepare_or_fail(items, root)  # exit 2 before ingesting when no image is there
        services = eval_services(ctx, args.benchmark, source, on)
        notices = []
        update, bar = progress_bar("ingest")
        try:
            report = services.ingestor().run(source, update)
        finally:
            bar.close()
        services.corpus.reload()
        notices += [f"ingest skipped {len(report.skipped)} unreadable image(s)"] if report.skipped else []
        catalog = (f"{services.settings.path()} (holds only the {services.catalog.count()} photos ingested from "
                   f"{source}; the synthetic world is never part of it)")
    key_of = photo_keys(services.catalog.all_photos(), root)
    id_of = {k: i for i, k in key_of.items()}
    prepared = prepare_or_fail(items, root, in_catalog=set(id_of))
    methods = engine_methods(services.engine, [n for n in names if n != "plugir"], id_of, key_of)
    dialogue = None
    if "plugir" in names or args.rounds:
        from core.evaluation.simulated_user import plugir_ranks

        dialogue = evaluate_dialogue(prepared.items, {
            "plugir": lambda item, r: plugir_ranks(services.engine, item, r, id_of)}, args.rounds or 3)
    answers = None
    if args.answers:
        from core.evaluation.answers import answer_evaluator

        answers = answer_evaluator(services.engine, args.answer_k)
    update, bar = progress_bar("eval", unit="query")
    try:
        out = run_benchmark(args, methods, models=lambda: {
                                r: v["model_id"] + (" (stand-in)" if v["standin"] else "")
                                for r, v in services.engine.backends.describe().items()},
                            dialogue=dialogue, progress=lambda m, d, t: update(d, t), prepared=prepared,
                            notes={"catalog": catalog, "catalog_evidence": evidence_note(on),
                                   "group_words": GROUP_WORDS_NOTE}, answers=answers,
                            caveats=lambda models: model_caveats(services.engine.backends, models))
    finally:
        bar.close()
    note = services.banner()  # prepare() put it first on the world's own catalog
    out["notices"] = notices if note in notices else ([note] if note else []) + notices
    ctx.noted = True
    print(json.dumps(out, indent=2, default=str))
    return 0
