"""Arguments of `app.py eval` and `app.py eval-run`."""
from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from core.contracts import bounds, limits
from core.contracts.errors import InputError
from core.evaluation.benchmarks import benchmark_names
from core.evaluation.trec import DEFAULT_TREC_METRICS


def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of `eval` (run methods on a benchmark and write a report)."""
    p.add_argument("--benchmark", required=True, choices=benchmark_names(),
                   help="benchmark layout of --data (fieldguide: the world's benchmark folder)")
    p.add_argument("--data", help="benchmark file or folder (INQUIRE full-rank: folder or QUERIES.csv,ANNOTATIONS.csv)")
    p.add_argument("--images", help="root folder the benchmark's image paths are relative to (default: images/ "
                                    "beside --data, as VisRet's release lays it out); missing files are listed, an "
                                    "item with none of its images fails")
    p.add_argument("--methods", default="baseline", help="comma-separated method names, e.g. baseline,rewrite,visret")
    p.add_argument("--baseline", help="method the significance marks compare against (default: the first)")
    p.add_argument("--metrics", help="comma-separated metrics (default: the benchmark's paper's metrics)")
    p.add_argument("--out", required=True, help="output folder for report.md, metrics.json, per_query.jsonl, plots/")
    p.add_argument("--limit", type=int, help="evaluate only the first N queries (rows for Visual-RAG-ME)")
    p.add_argument("--test", default="randomization", choices=["randomization", "t"], help="paired significance test")
    p.add_argument("--permutations", type=int, default=10_000, help="permutations of the randomisation test")
    p.add_argument("--seed", type=int, default=0, help="seed of the randomisation test")
    p.add_argument("--rounds", type=int, default=0,
                   help="dialogue rounds for PlugIR evaluation (0 = none; --methods plugir alone uses 3)")
    p.add_argument("--answers", action="store_true",
                   help="also answer each question from the retrieved photos and score the answers against the "
                        "benchmark's with an LLM judge (Visual-RAG, Visual-RAG-ME, field guide)")
    p.add_argument("--answer-k", type=int, default=5,
                   help="photos per ranking the answer reads (Visual-RAG-ME: per organism)")
    p.add_argument("--catalog-evidence", action="store_true",
                   help="answer sub-questions about what the catalog records (species, date, place, licence) from "
                        "the catalog, as the web app does; off by default, since every benchmark's protocol ranks "
                        "pictures alone (the report says which was used)")
    p.add_argument("--hybrid", action="store_true",
                   help="search the query's words in what the catalog records too (hybrid retrieval, as the web app "
                        "does); off by default: INQUIRE's and Visual-RAG's protocols rank pictures alone, and the "
                        "catalog's names and notes would give the answer away (the report says which was used)")


def add_eval_run_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of `eval-run` (score TREC runs or dialogue ranks made elsewhere)."""
    p.add_argument("--qrels", help="TREC qrels: 'qid 0 docid rel' per line")
    p.add_argument("--run", help="TREC run: 'qid Q0 docid rank score tag' per line")
    p.add_argument("--metrics", default=",".join(DEFAULT_TREC_METRICS),
                   help="comma-separated: hit@K, recall@K, ndcg@K, ndcg_visret@K, ap@K, mrr")
    p.add_argument("--dialogue", help="CSV with header qid,round,rank (1-based target rank per round)")
    p.add_argument("--ks", default="1,5,10", help="K values for dialogue Hits@K / Recall@K")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def check_eval_arguments(args: argparse.Namespace) -> None:
    """Refuse numbers out of their range and an --out folder that cannot be written, before any work starts
    (an --out of /proc/ev was found only when the report was written, minutes later)."""
    args.rounds = bounds.whole_number("--rounds", args.rounds, 0, limits.MAX_ROUNDS,
                                      f"give --rounds from 0 to {limits.MAX_ROUNDS} (3 is PlugIR's protocol)")
    if args.limit is not None:
        args.limit = bounds.whole_number("--limit", args.limit, 1, limits.MAX_EVAL_ITEMS,
                                         f"give --limit from 1 to {limits.MAX_EVAL_ITEMS:,}, or leave it out for all")
    args.permutations = bounds.whole_number("--permutations", args.permutations, 1, limits.MAX_PERMUTATIONS)
    args.answer_k = bounds.whole_number("--answer-k", args.answer_k, 1, limits.MAX_ANSWER_K)
    if args.data:
        data_input(args.data)
    writable_folder(args.out)


def data_input(path: str) -> None:
    """--data must be a folder or a regular file within limits.MAX_EVAL_FILE_BYTES (no device or FIFO)."""
    p = Path(path)
    if p.is_dir() or not p.exists():
        return  # a folder, or missing: the benchmark's loader says which file it looked for
    if not p.is_file():
        raise InputError(f"--data {p} is not a regular file or folder (a device, FIFO or socket)",
                         "point --data at the benchmark's file or folder")
    if p.stat().st_size > limits.MAX_EVAL_FILE_BYTES:
        raise InputError(f"--data {p} is larger than {limits.MAX_EVAL_FILE_BYTES // 1_000_000} MB",
                         "check that it is the benchmark's file (or use --limit on a smaller part of it)")


def writable_folder(out: str) -> None:
    """--out can be made and written: made now, and a probe file written and removed."""
    p = Path(out).expanduser()
    real = os.path.realpath(p)
    if any(real == root or real.startswith(root + "/") for root in ("/proc", "/sys", "/dev")):
        raise InputError(f"--out {out} is in the system's own files, where no report can be written",
                         "give a folder of your own for the report, e.g. --out reports/run1")
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=p, prefix=".ecolens-probe-"):
            pass
    except OSError as exc:
        raise InputError(f"--out {out} cannot be written ({exc.strerror or type(exc).__name__})",
                         "give a folder you can write to for the report, e.g. --out reports/run1") from None
