"""`python app.py eval --benchmark NAME --data PATH --methods a,b --out DIR`: run named searches of the engine
on a benchmark with its own pools and write a report (tables, significance, plots, costs)."""
from __future__ import annotations

import json

from cli.common import prepare, progress_bar
from cli.eval_args import add_eval_arguments
from core.evaluation.commands import load_items, parse_methods, run_benchmark
from core.evaluation.engine_methods import engine_methods, photo_keys
from core.evaluation.runner import evaluate_dialogue
from core.presets import METHOD_NAMES


def add_parser(sub) -> None:
    add_eval_arguments(sub.add_parser("eval", help="run retrieval methods on a benchmark and write a report"))


def run(ctx, args) -> int:
    services = ctx.services()
    notices = prepare(services)
    if args.benchmark == "fieldguide":
        world = services.settings.path("fieldguide")
        args.data = args.data or str(world)
        args.images = args.images or args.data
    items = load_items(args)
    if args.images and args.benchmark != "fieldguide":
        services.ingestor().run(args.images)  # incremental: only photos not yet in the catalog are read
        services.corpus.reload()
    key_of = photo_keys(services.catalog.all_photos(), args.images)
    id_of = {k: i for i, k in key_of.items()}
    names = parse_methods(args.methods, list(METHOD_NAMES) + ["plugir"])
    methods = engine_methods(services.engine, [n for n in names if n != "plugir"], id_of, key_of)
    dialogue = None
    if "plugir" in names or args.rounds:
        from core.evaluation.simulated_user import plugir_ranks

        rounds = args.rounds or 3
        dialogue = evaluate_dialogue(items, {"plugir": lambda item, r: plugir_ranks(services.engine, item, r, id_of)},
                                     rounds)
    update, bar = progress_bar("eval", unit="query")
    try:
        out = run_benchmark(args, methods, items=items,
                            models={r: v["model_id"] + (" (stand-in)" if v["standin"] else "")
                                    for r, v in services.engine.backends.describe().items()},
                            dialogue=dialogue, progress=lambda m, d, t: update(d, t))
    finally:
        bar.close()
    out["notices"] = notices
    print(json.dumps(out, indent=2, default=str))
    return 0
