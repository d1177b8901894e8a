"""`python app.py eval-run`: score TREC runs or dialogue rank CSVs made elsewhere with EcoLens' metrics."""
import json

from cli.eval_args import add_eval_run_arguments
from core.evaluation.commands import run_eval_run


def add_parser(sub) -> None:
    add_eval_run_arguments(sub.add_parser(
        "eval-run", help="score TREC runs or dialogue rank CSVs with EcoLens' metric definitions"))


def run(ctx, args) -> int:
    ctx.noted = True  # it scores rankings made elsewhere: no model or photo of this installation is used
    result, text = run_eval_run(args)
    print(json.dumps(result, indent=2) if args.json else text)
    return 0
