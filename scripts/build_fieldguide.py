"""Build the synthetic field-guide world (pictures, observations.csv, benchmark files) into a folder, and
optionally its camera-trap card (OUT_DIR/camtrap/) and the baseline nDCG@10 of the committed field-guide encoder
against a random ranking.

Usage: python scripts/build_fieldguide.py OUT_DIR [--seed 0] [--per-species 40] [--camtrap] [--eval]"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    from fieldguide.world import build_world

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-species", type=int, default=40)
    ap.add_argument("--camtrap", action="store_true", help="also draw the camera-trap card into OUT_DIR/camtrap/")
    ap.add_argument("--eval", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    csv_path = build_world(Path(args.out_dir), seed=args.seed, per_species=args.per_species)
    print(f"SYNTHETIC field-guide world written to {csv_path.parent} in {time.time() - t0:.1f} s ({csv_path.name})")
    if args.camtrap:
        from fieldguide.camtrap_card import build_camtrap_demo

        card = build_camtrap_demo(Path(args.out_dir), seed=args.seed)
        print(f"SYNTHETIC camera-trap card: {card.frames} frames in {card.folder} (detections {card.detections}, "
              f"deployments {card.deployments})")
    if args.eval:
        from fieldguide.encoder import FieldGuideEmbedder
        from fieldguide.evaluate import evaluate_baseline, format_report

        print(format_report(evaluate_baseline(Path(args.out_dir), FieldGuideEmbedder())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
