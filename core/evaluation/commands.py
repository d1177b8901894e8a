"""What `app.py eval` and `app.py eval-run` do, minus printing: argument definitions and execution.

cli/eval_args.py declares the arguments; cli/evaluate.py and cli/eval_run.py call run_eval_run /
run_benchmark and print what they return; the engine's search pipeline enters as a dict of method callables
(see runner.py).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from core.errors import InputError
from core.evaluation.benchmarks import DEFAULT_METRICS, load_benchmark, prepare_items
from core.evaluation.items import EvalItem
from core.evaluation.report import write_report
from core.evaluation.runner import DialogueResult, Method, evaluate
from core.evaluation.trec import score_dialogue_csv, score_trec


def _ks(text: str) -> list[int]:
    try:
        ks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"--ks {text!r} is not a list of integers", "e.g. --ks 1,5,10") from None
    if not ks or min(ks) < 1:
        raise InputError(f"--ks {text!r} needs integers >= 1", "e.g. --ks 1,5,10")
    return ks


def run_eval_run(args) -> tuple[dict, str]:
    """Score the files named in `args`; returns (result dict, text to print). The caller prints
    json.dumps(result) when args.json, else the text."""
    if args.dialogue:
        if args.qrels or args.run:
            raise InputError("--dialogue cannot be combined with --qrels/--run", "score one kind of file per call")
        res = score_dialogue_csv(args.dialogue, _ks(args.ks))
        lines = [f"{res['queries']} queries, rounds 0..{res['rounds'] - 1}", f"BRI: {res['bri']:.4f}"]
        for k in _ks(args.ks):
            lines.append(f"Hits@{k} per round:   " + " ".join(f"{v:.3f}" for v in res[f"hits@{k}"]))
            lines.append(f"Recall@{k} per round: " + " ".join(f"{v:.3f}" for v in res[f"recall@{k}"]))
        return res, "\n".join(lines)
    if not (args.qrels and args.run):
        raise InputError("eval-run needs --qrels and --run (or --dialogue)",
                         "e.g. app.py eval-run --qrels qrels.txt --run run.txt --metrics ndcg@10,ap@100")
    res = score_trec(args.qrels, args.run, args.metrics)
    width = max(len(m) for m in res["metrics"])
    lines = [f"{m:<{width}}  {v:.4f}" for m, v in res["metrics"].items()]
    lines.append(f"({res['queries']} queries in the qrels"
                 + (f"; {len(res['run_only_queries'])} run-only queries ignored)" if res["run_only_queries"] else ")"))
    return res, "\n".join(lines)


def load_items(args) -> list[EvalItem]:
    """Items of the benchmark named by `args` (for fieldguide the caller may fill args.data with the world's
    benchmark folder before calling)."""
    if not args.data:
        raise InputError(f"--benchmark {args.benchmark} needs --data", "the benchmark file or folder")
    return load_benchmark(args.benchmark, args.data, args.limit)


def run_benchmark(args, methods: Mapping[str, Method], items: Sequence[EvalItem] | None = None,
                  models: Mapping[str, str] | None = None, dialogue: DialogueResult | None = None,
                  progress: Callable[[str, int, int], None] | None = None) -> dict:
    """Load (unless `items` given), check images, run `methods`, write the report under args.out.
    Returns {"report": path, "metrics": {method: {metric: mean}}, "images": {...}, "failures": {...}}."""
    items = list(items) if items is not None else load_items(args)
    prepared = prepare_items(items, args.images)
    metrics = args.metrics or ",".join(DEFAULT_METRICS.get(args.benchmark, DEFAULT_METRICS["visual-rag"]))
    result = evaluate(prepared.items, methods, metrics, progress=progress)
    paths = write_report(args.out, result, benchmark=args.benchmark, baseline=args.baseline, models=models,
                         data_notes=prepared.to_json(), dialogue=dialogue, test=args.test,
                         n_permutations=args.permutations, seed=args.seed)
    summary = json.loads(Path(paths["metrics"]).read_text(encoding="utf-8"))["summary"]
    return {"report": str(paths["report"]), "metrics": summary["overall"],
            "images": prepared.to_json()["images"], "failures": result.failures}


def parse_methods(text: str, known: Sequence[str]) -> list[str]:
    """--methods 'a,b' -> ['a', 'b'], each checked against the engine's known method names."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in known]
    if unknown or not names:
        raise InputError(f"unknown method(s): {', '.join(unknown) or '(none given)'}",
                         f"choose from {', '.join(known)}")
    return names
