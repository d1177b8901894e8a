"""Train the field-guide dual encoder (the offline stand-in for CLIP) and write assets/fieldguide/.

Usage: python scripts/train_fieldguide_encoder.py [--out assets/fieldguide] [--seed 1234] [--steps 420]
       [--per-species 200] [--time-limit 330] [--eval]
Deterministic for a seed on one machine (CPU, 2 threads); about 5 minutes on 2 cores."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    from fieldguide.training import TrainConfig, train

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "assets" / "fieldguide"))
    defaults = TrainConfig()
    ap.add_argument("--seed", type=int, default=defaults.seed)
    ap.add_argument("--steps", type=int, default=defaults.steps)
    ap.add_argument("--per-species", type=int, default=defaults.per_species)
    ap.add_argument("--time-limit", type=float, default=defaults.time_limit_s)
    ap.add_argument("--threads", type=int, default=defaults.threads)
    ap.add_argument("--eval", action="store_true", help="build the demo world in a temporary folder and print "
                                                        "baseline nDCG@10 against random")
    args = ap.parse_args()
    cfg = TrainConfig(seed=args.seed, steps=args.steps, per_species=args.per_species,
                      time_limit_s=args.time_limit, threads=args.threads)
    info = train(Path(args.out), cfg)
    print(f"trained {info['version']}: {info['steps_done']} steps on {info['pictures']} pictures in "
          f"{info['train_seconds']} s (drawing {info['draw_seconds']} s); final loss {info['final_loss']}")
    print(f"weights in {args.out}")
    if args.eval:
        from fieldguide.encoder import FieldGuideEmbedder
        from fieldguide.evaluate import evaluate_baseline, format_report
        from fieldguide.world import build_world

        with tempfile.TemporaryDirectory() as tmp:
            build_world(Path(tmp), seed=0)
            print(format_report(evaluate_baseline(Path(tmp), FieldGuideEmbedder(Path(args.out)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
