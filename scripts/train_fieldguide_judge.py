"""Train the field-guide judge network (the offline stand-in vision-language judge) and write assets/fieldguide/
judge.pt + judge.json (seed, configuration, timings, temperatures, accuracy and ECE per question type).

Usage: nice -n 10 python scripts/train_fieldguide_judge.py [--out assets/fieldguide] [--seed 4321]
       [--epochs 12] [--per-species 500] [--threads 2]
Deterministic for a seed on one machine (CPU, 2 threads). The retrieval encoder (encoder.pt) is not touched."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    from fieldguide.judge_eval import format_table
    from fieldguide.judge_training import JudgeTrainConfig, train_judge

    defaults = JudgeTrainConfig()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "assets" / "fieldguide"))
    ap.add_argument("--seed", type=int, default=defaults.seed)
    ap.add_argument("--epochs", type=int, default=defaults.epochs)
    ap.add_argument("--per-species", type=int, default=defaults.per_species)
    ap.add_argument("--threads", type=int, default=defaults.threads)
    ap.add_argument("--time-limit", type=float, default=defaults.time_limit_s,
                    help="safety stop in CPU seconds of this process (all threads)")
    args = ap.parse_args()
    cfg = JudgeTrainConfig(seed=args.seed, epochs=args.epochs, per_species=args.per_species, threads=args.threads,
                           time_limit_s=args.time_limit)
    load = os.getloadavg()
    t0 = time.time()
    info = train_judge(Path(args.out), cfg, log=lambda m: print(m, flush=True))
    print(f"trained {info['version']} in {time.time() - t0:.0f} s wall, {info['timings_s']['cpu']:.0f} s CPU "
          f"(load average at the start {load[0]:.1f}, {os.cpu_count()} cores); weights in {args.out}")
    print(format_table(info["metrics_test"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
