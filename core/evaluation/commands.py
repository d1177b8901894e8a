"""What `app.py eval` and `app.py eval-run` do, minus printing: argument definitions and execution.

cli/eval_args.py declares the arguments; cli/evaluate.py and cli/eval_run.py call run_eval_run /
run_benchmark and print what they return; the engine's search pipeline enters as a dict of method callables
(see runner.py).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from core.contracts.errors import InputError
from core.evaluation.benchmarks import PreparedItems, default_metrics, load_benchmark, prepare_items
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
    try:
        return load_benchmark(args.benchmark, args.data, args.limit)
    except UnicodeDecodeError as exc:  # a binary file, or text in another encoding
        raise InputError(f"--data {args.data} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                         f"{exc.start} cannot be read as UTF-8): not a "
                         f"{args.benchmark} benchmark file", "point --data at the benchmark's own file (JSON "
                         "lines, CSV or parquet as its release has it)") from None


NO_IMAGES_HINT = ("point --images at the folder the benchmark's image paths are relative to (for VisRet's release: "
                  "data/images/ with one folder per species, the iNaturalist 2021 photos), then run eval again")


def prepare_or_fail(items: Sequence[EvalItem], images_root, in_catalog: set[str] | None = None) -> PreparedItems:
    """prepare_items, or InputError listing every failed item when none is left to evaluate (the CLI exits 2)."""
    prepared = prepare_items(list(items), images_root, in_catalog)
    if not prepared.items:
        raise InputError(prepared.nothing_to_evaluate(), NO_IMAGES_HINT)
    return prepared


def run_benchmark(args, methods: Mapping[str, Method], items: Sequence[EvalItem] | None = None,
                  models: Mapping[str, str] | Callable[[], Mapping[str, str]] | None = None,
                  dialogue: DialogueResult | None = None,
                  progress: Callable[[str, int, int], None] | None = None, prepared: PreparedItems | None = None,
                  notes: Mapping | None = None, answers: Callable | None = None,
                  caveats: Callable[[Mapping[str, str]], Sequence] | None = None) -> dict:
    """Load (unless `items` or `prepared` given), check images, run `methods`, write the report under args.out.
    Items left without images are failed items: listed, excluded from every mean, counted; with none left,
    InputError. `methods` may be empty when only a dialogue system is evaluated. `notes` adds data notes (the
    evaluation catalog); `answers(result)` returns the answer-accuracy block (eval --answers); `caveats(models)`
    returns what each stand-in or tiny model's numbers can mean (core.evaluation.caveats), the report's opening.
    Returns {"report", "metrics": {method: {metric: mean}}, "images", "failures", "failed_items", ...}."""
    if prepared is None:
        items = list(items) if items is not None else load_items(args)
        prepared = prepare_or_fail(items, args.images)
    metrics = args.metrics or ",".join(default_metrics(args.benchmark))
    result = evaluate(prepared.items, methods, metrics, progress=progress) if methods else None
    answer_block = answers(result) if (answers is not None and result is not None) else None
    if callable(models):  # described after the run, so every backend the run built is listed
        models = models()
    notes_on_models = caveats(models or {}) if caveats is not None else None
    data_notes = {**prepared.to_json(), **dict(notes or {})}
    paths = write_report(args.out, result, benchmark=args.benchmark, baseline=args.baseline, models=models,
                         data_notes=data_notes, dialogue=dialogue, test=args.test, n_permutations=args.permutations,
                         seed=args.seed, items=prepared.items, limited=bool(getattr(args, "limit", None)),
                         answers=answer_block, caveats=notes_on_models)
    saved = json.loads(Path(paths["metrics"]).read_text(encoding="utf-8"))
    out = {"report": str(paths["report"]), "metrics": saved.get("summary", {}).get("overall", {}),
           "images": prepared.to_json()["images"], "failures": result.failures if result else {},
           "items_evaluated": len(prepared.items), "failed_items": prepared.failed}
    if dialogue is not None:
        out["dialogue"] = saved.get("dialogue", {})
    if answer_block is not None:
        out["answer_accuracy"] = {m: v["accuracy"] for m, v in answer_block["methods"].items()}
        out["answer_judge"] = {"valid": answer_block.get("judge_valid", True),
                               "caveat": answer_block.get("judge_caveat", "")}
    return out


def parse_methods(text: str, known: Sequence[str]) -> list[str]:
    """--methods 'a,b' -> ['a', 'b'], each checked against the engine's known method names."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in known]
    if unknown or not names:
        raise InputError(f"unknown method(s): {', '.join(unknown) or '(none given)'}",
                         f"choose from {', '.join(known)}")
    return names
