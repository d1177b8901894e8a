"""Ingest throughput against the bare encoder forward pass, measured in the same run.

    python bench/ingest.py [--photos 500] [--batch 32] [--threads 2] [--arch ViT-B-32]

Generates 224 px photos, ingests them through the real Ingestor (decode, hash, preprocess, embed, SQLite,
FAISS) with a randomly initialised open_clip model, then times that model's bare forward pass on the
same photos already preprocessed, with the same batch size and threads. Prints photos/s of both and the
ratio (goal >= 0.9)."""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402


def make_photos(root: Path, n: int) -> list[Path]:
    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        base = rng.integers(0, 256, 3)
        arr = np.clip(base + rng.normal(0, 40, (224, 224, 3)), 0, 255).astype(np.uint8)
        p = root / f"{i:05d}.jpg"
        Image.fromarray(arr).save(p, quality=90)
        paths.append(p)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--photos", type=int, default=500)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--arch", default="ViT-B-32")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from app import build_engine
    from core.backends.openclip_embedder import OpenClipEmbedder
    from core.settings import load_settings

    with tempfile.TemporaryDirectory() as tmp:
        photos = make_photos(Path(tmp) / "photos", args.photos)
        settings = load_settings(environ={}, data_dir=str(Path(tmp) / "data"), embedder=f"open_clip:{args.arch}",
                                 batch_size=args.batch, threads=args.threads, device="cpu")
        engine = build_engine(settings)
        embedder = engine.backends.embedder
        assert isinstance(embedder, OpenClipEmbedder)
        embedder.embed_images([Image.open(photos[0]).convert("RGB")])  # warm-up

        t0 = time.perf_counter()
        report = engine.ingestor().run(Path(tmp) / "photos")
        ingest_s = time.perf_counter() - t0
        assert report.added == args.photos, report.to_json()

        batches = [embedder.preprocess_images([Image.open(p).convert("RGB") for p in photos[i:i + args.batch]])
                   for i in range(0, len(photos), args.batch)]
        t1 = time.perf_counter()
        for batch in batches:
            embedder.encode_preprocessed(batch)
        bare_s = time.perf_counter() - t1

    ingest_rate, bare_rate = args.photos / ingest_s, args.photos / bare_s
    print(f"model: open_clip {args.arch} (random weights), batch {args.batch}, threads {args.threads}, "
          f"{args.photos} photos of 224x224")
    print(f"ingest:       {ingest_rate:8.1f} photos/s  ({ingest_s:.1f} s, everything: decode, hash, preprocess, "
          "embed, SQLite, FAISS)")
    print(f"bare forward: {bare_rate:8.1f} photos/s  ({bare_s:.1f} s, preprocessed tensors in, vectors out)")
    print(f"ratio ingest / bare forward: {ingest_rate / bare_rate:.2f}  (goal >= 0.9)")


if __name__ == "__main__":
    main()
