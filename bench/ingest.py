"""Ingest throughput against the bare decode + encoder forward pass, and the Ray engine against the local one,
measured in the same run.

    nice -n 10 python bench/ingest.py [--photos 300] [--realistic] [--engine local|ray|both] [--workers N]
                                      [--batch 32] [--threads 2] [--arch ViT-B-32]
    python bench/ingest.py --smoke   # a tiny run for the test suite (8 photos, one round, local engine, ViT-S-32)

Photos: 224 px generated pictures, or with --realistic 2-3 MP camera-like JPEGs (quality 90, about 0.6-1.2
MB: smooth light, textured ground, edges and sensor noise). Model: a randomly initialised open_clip model
(no weights can be downloaded here; the forward cost is the real one).
- ingest: the real Ingestor end to end (read, hash, decode, preprocess, embed, SQLite, FAISS checkpoints);
- bare: the same files decoded by the same function with the same number of threads, then the model's
  preprocessing and forward pass with the same batch size and threads, one phase after the other (no
  hashing, catalog or index). Ratio goal >= 0.9.
- --engine both: the Ray engine (Ray Data actors, started and stopped inside the timing) against the local
  engine on the same photos, each into a fresh data directory. Ratio goal >= 0.8."""
from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image


def make_photos(root: Path, n: int, realistic: bool) -> list[Path]:
    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        if realistic:
            arr = _camera_like(rng)
        else:
            base = rng.integers(0, 256, 3)
            arr = np.clip(base + rng.normal(0, 40, (224, 224, 3)), 0, 255).astype(np.uint8)
        p = root / f"{i:05d}.jpg"
        Image.fromarray(arr).save(p, quality=90)
        paths.append(p)
    return paths


def _camera_like(rng: np.random.Generator) -> np.ndarray:
    """A 2-3 MP picture with what makes real photos costly to decode: gradients, texture, edges, noise."""
    w = int(rng.choice([1600, 1800, 2000]))
    h = int(w * rng.choice([0.75, 0.667]))
    coarse = rng.normal(0, 1, (h // 64 + 2, w // 64 + 2, 3))
    light = np.asarray(Image.fromarray(((coarse - coarse.min()) / np.ptp(coarse) * 255).astype(np.uint8))
                       .resize((w, h), Image.BICUBIC), dtype=np.float32)
    texture = np.asarray(Image.fromarray(rng.integers(0, 256, (h // 4, w // 4), dtype=np.uint8))
                         .resize((w, h), Image.BILINEAR), dtype=np.float32)[..., None]
    yy, xx = np.mgrid[0:h, 0:w]
    edges = ((np.sin(xx / rng.uniform(20, 80)) * np.cos(yy / rng.uniform(20, 80))) > 0.3) * 40.0
    arr = 0.6 * light + 0.3 * texture + edges[..., None] + rng.normal(0, 6, (h, w, 3))
    return np.clip(arr, 0, 255).astype(np.uint8)


def ingest_rate(tmp: Path, name: str, photos: list[Path], args, engine: str) -> tuple[float, object]:
    from app import build_services
    from core.config import load_settings

    settings = load_settings(environ={}, data_dir=str(tmp / f"data-{name}"), embedder=f"open_clip:{args.arch}",
                             batch_size=args.batch, threads=args.threads, device="cpu", ingest_engine=engine,
                             ingest_workers=args.workers, max_image_pixels=80_000_000)
    eng = build_services(settings)
    eng.backends.embedder.embed_images([Image.new("RGB", (224, 224))])  # the model is loaded before timing
    t0 = time.perf_counter()
    report = eng.ingestor().run(photos[0].parent)
    seconds = time.perf_counter() - t0
    assert report.added == len(photos), report.to_json()
    return len(photos) / seconds, eng


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--photos", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=0, help="decoding threads (local) / actors (ray); 0 = automatic")
    ap.add_argument("--arch", default="ViT-B-32")
    ap.add_argument("--realistic", action="store_true", help="2-3 MP camera-like JPEGs instead of 224 px pictures")
    ap.add_argument("--engine", choices=("local", "ray", "both"), default="local")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds; medians are reported")
    ap.add_argument("--smoke", action="store_true",
                    help="a tiny run (8 photos, batch 4, one round, local engine, ViT-S-32) that checks the bench "
                         "works")
    args = ap.parse_args()
    if args.smoke:
        args.photos, args.batch, args.repeat, args.engine, args.realistic = 8, 4, 1, "local", False
        args.arch = "ViT-S-32"  # the smallest plain ViT open_clip builds

    import torch

    torch.set_num_threads(args.threads)
    from core.ingest.decode import decode_for_embedding, decode_workers

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        t = time.perf_counter()
        photos = make_photos(tmp / "photos", args.photos, args.realistic)
        size = sum(p.stat().st_size for p in photos) / len(photos) / 1e6
        with Image.open(photos[0]) as im:
            dims = f"{im.size[0]}x{im.size[1]}"
        print(f"{args.photos} photos ({dims} first, {size:.2f} MB each on average) made in "
              f"{time.perf_counter() - t:.0f} s; model open_clip {args.arch} (random weights), batch {args.batch}, "
              f"torch threads {args.threads}", flush=True)
        engines = ["local", "ray"] if args.engine == "both" else [args.engine]
        workers = decode_workers(args.workers)
        ratios: dict[str, list[float]] = {e: [] for e in engines}
        engine_ratio: list[float] = []
        for rep in range(args.repeat):  # interleaved rounds: a busy shared machine drifts between measurements
            rates = {}
            for engine in engines:
                rates[engine], eng = ingest_rate(tmp, f"{engine}{rep}", photos, args, engine)
            embedder = eng.backends.embedder
            t1 = time.perf_counter()
            with ThreadPoolExecutor(workers) as pool:  # bare: the same decode function and threads
                images = list(pool.map(lambda p: decode_for_embedding(p.read_bytes(), name=str(p),
                                                                      max_pixels=80_000_000)[0], photos))
            decode_s = time.perf_counter() - t1
            t2 = time.perf_counter()
            for i in range(0, len(images), args.batch):  # then preprocess + forward, batch by batch
                embedder.encode_preprocessed(embedder.preprocess_images(images[i:i + args.batch]))
            forward_s = time.perf_counter() - t2
            del images
            bare = len(photos) / (decode_s + forward_s)
            line = " | ".join(f"ingest ({e}) {r:6.1f} photos/s" for e, r in rates.items())
            print(f"round {rep + 1}: {line} | bare decode ({workers} threads) {decode_s:.1f} s + preprocess and "
                  f"forward {forward_s:.1f} s = {bare:6.1f} photos/s", flush=True)
            for e, r in rates.items():
                ratios[e].append(r / bare)
            if len(rates) == 2:
                engine_ratio.append(rates["ray"] / rates["local"])
        for e, values in ratios.items():
            print(f"ratio ingest ({e}) / bare decode+forward: median {np.median(values):.2f} "
                  f"(rounds: {', '.join(f'{v:.2f}' for v in values)})  (goal >= 0.9)")
        if engine_ratio:
            print(f"ratio ray engine / local engine: median {np.median(engine_ratio):.2f} (rounds: "
                  f"{', '.join(f'{v:.2f}' for v in engine_ratio)})  (goal >= 0.8; Ray's start-up and shut-down "
                  "are inside the timing)")


if __name__ == "__main__":
    main()
