"""Accuracy and expected calibration error (ECE) of the field-guide judge per question type, on pictures it
never saw (drawn from a seed the training did not use). Prints a Markdown table (the one in docs/fieldguide.md).

Usage: python scripts/evaluate_fieldguide_judge.py [--weights assets/fieldguide] [--per-species 100] [--seed 7]"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    from fieldguide.judge import FieldGuideJudge
    from fieldguide.judge_eval import evaluate_judge, format_table
    from fieldguide.judge_net import JudgeReader
    from fieldguide.judge_training import draw
    from fieldguide.render import render

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", default=str(ROOT / "assets" / "fieldguide"))
    ap.add_argument("--per-species", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7, help="drawing seed of the unseen pictures")
    args = ap.parse_args()
    reader = JudgeReader(Path(args.weights))
    items = draw(f"fieldguide-judge-report:{args.seed}", args.per_species)
    metrics = evaluate_judge(FieldGuideJudge(reader=reader), [(sp, s, render(s)) for sp, s in items], seed=args.seed)
    print(f"{reader.model_id}: {len(items)} unseen pictures (seed {args.seed}), yes/no questions asked through the "
          "judge")
    print(format_table(metrics))
    return 0


if __name__ == "__main__":
    sys.exit(main())
