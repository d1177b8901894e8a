"""Ingest of a camera card with its MegaDetector results (frames and detection crops embedded) against the bare
decode + crop + forward pass of the same frames and boxes, measured in the same run (issue 34: camera traps).

    nice -n 10 python bench/crops_ingest.py [--photos 120] [--side 1600] [--batch 32] [--threads 2]
                                            [--arch ViT-B-32] [--repeat 3]
    python bench/crops_ingest.py --smoke   # a tiny run for the test suite (8 frames, 640 px, ViT-S-32)

Frames: camera-like JPEGs (bench/ingest.py's generator: smooth light, texture, edges, noise) --side pixels wide;
70% carry one or two boxes (MegaDetector format, confidence 0.9), 30% none: about one crop a frame. Model: a
randomly initialised open_clip model (no weights can be downloaded here; the forward cost is the real one).
- ingest: `Ingestor.run(folder, detections=results.json)` end to end: read, hash, decode, embed the frames,
  SQLite, FAISS; the results file applied; every crop cut from its frame and embedded; the crop index written.
- bare: each frame decoded once at full size (PIL, the same threads), its boxes cut (with the same margin), then
  the frames and the crops preprocessed and run through the model in batches of the same size. Goal >= 0.9.
- EXIF and events: every frame carries EXIF (Make, Model, DateTimeOriginal, OffsetTimeOriginal; bursts of 1-5
  frames 2 s apart, 10 min between bursts); the camera-card steps the ingest adds for it are timed on the same
  frames: core.camtrap.exif.read_exif of each frame's bytes (already read for hashing, so not timed) and
  core.camtrap.capture_time.resolve, then core.camtrap.events.group of the frames' times (gap 60 s, the default).
  Their share of the bare decode+crop+forward pass is printed (goal < 5%); the store writes are not in it."""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image

from bench.ingest import _camera_like

_BURST: list[int] = []  # frames left in the current burst, and the burst's clock (make_card is called once)
_CLOCK = [1_750_000_000.0]


def _exif(i: int, rng: np.random.Generator) -> Image.Exif:
    """A trail camera's EXIF for frame `i`: bursts of 1-5 frames 2 s apart, 10 minutes between bursts."""
    from datetime import datetime, timezone

    if not _BURST or _BURST[0] == 0:
        _BURST[:] = [int(rng.integers(1, 6))]
        _CLOCK[0] += 600
    else:
        _CLOCK[0] += 2
    _BURST[0] -= 1
    exif = Image.Exif()
    exif[0x010F], exif[0x0110] = "Bench", "TrailCam 1"
    sub = exif.get_ifd(0x8769)
    sub[0x9003] = datetime.fromtimestamp(_CLOCK[0], timezone.utc).strftime("%Y:%m:%d %H:%M:%S")
    sub[0x9011] = "+00:00"
    return exif


def card_steps_seconds(frames: list[Path], gap_s: float = 60.0) -> tuple[float, int]:
    """(seconds, events) of the EXIF read and the event grouping of `frames`, as the card ingest does them."""
    from core.camtrap.capture_time import resolve
    from core.camtrap.events import Frame, group
    from core.camtrap.exif import read_exif

    data = [p.read_bytes() for p in frames]  # the ingest has the bytes already (read for hashing)
    t = time.perf_counter()
    times = [resolve(read_exif(b, p.name)) for b, p in zip(data, frames)]
    events = group("bench", [Frame(i, c.utc_epoch, c.captured_at) for i, c in enumerate(times, 1)], gap_s)
    seconds = time.perf_counter() - t
    assert all(c.utc_epoch is not None for c in times), "a generated frame's EXIF time was not read"
    return seconds, len(events)


def make_card(root: Path, n: int, side: int) -> tuple[list[Path], Path, int]:
    """(frames, results file, boxes) of a generated card."""
    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    frames, images, boxes = [], [], 0
    for i in range(n):
        arr = _camera_like(rng)
        im = Image.fromarray(arr)
        im = im.resize((side, int(side * im.size[1] / im.size[0])))
        p = root / f"IMG_{i:05d}.JPG"
        im.save(p, quality=90, exif=_exif(i, rng))
        frames.append(p)
        dets = []
        if rng.random() < 0.7:
            for _ in range(int(rng.integers(1, 3))):
                w, h = rng.uniform(0.05, 0.4), rng.uniform(0.05, 0.4)
                dets.append({"category": "1", "conf": 0.9, "bbox": [round(float(rng.uniform(0, 1 - w)), 4),
                                                                    round(float(rng.uniform(0, 1 - h)), 4),
                                                                    round(float(w), 4), round(float(h), 4)]})
        boxes += len(dets)
        images.append({"file": p.name, "detections": dets})
    results = root / "md_results.json"
    results.write_text(json.dumps({"info": {"format_version": "1.4", "detector": "bench"},
                                   "detection_categories": {"1": "animal"}, "images": images}))
    return frames, results, boxes


def ingest_rate(tmp: Path, name: str, frames: list[Path], results: Path, args) -> tuple[float, object]:
    from app import build_services
    from core.config import load_settings

    settings = load_settings(environ={}, data_dir=str(tmp / f"data-{name}"), embedder=f"open_clip:{args.arch}",
                             batch_size=args.batch, threads=args.threads, device="cpu", max_image_pixels=80_000_000)
    services = build_services(settings)
    services.backends.embedder.embed_images([Image.new("RGB", (224, 224))])  # the model is loaded before timing
    t0 = time.perf_counter()
    report = services.ingestor().run(frames[0].parent, detections=results)
    seconds = time.perf_counter() - t0
    assert report.added == len(frames), report.to_json()
    return seconds, (services, report)


def bare_seconds(frames: list[Path], results: Path, embedder, args, workers: int) -> tuple[float, float, float]:
    """(decode and crop s, forward s, total s) of the bare pass."""
    from core.camtrap.boxes import crop

    boxes = {e["file"]: [d["bbox"] for d in e["detections"]] for e in json.loads(results.read_text())["images"]}

    def cut(p: Path):
        with Image.open(p) as im:
            frame = im.convert("RGB")
        return frame, [crop(frame, tuple(b), 0.1) for b in boxes[p.name]]

    t1 = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        done = list(pool.map(cut, frames))
    decode_s = time.perf_counter() - t1
    images = [f for f, _ in done] + [c for _, cs in done for c in cs]
    del done
    t2 = time.perf_counter()
    for i in range(0, len(images), args.batch):
        embedder.encode_preprocessed(embedder.preprocess_images(images[i:i + args.batch]))
    forward_s = time.perf_counter() - t2
    return decode_s, forward_s, decode_s + forward_s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--photos", type=int, default=120)
    ap.add_argument("--side", type=int, default=1600, help="frame width in pixels")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--arch", default="ViT-B-32")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds; medians are reported")
    ap.add_argument("--smoke", action="store_true", help="a tiny run (8 frames, 640 px, batch 4, ViT-S-32)")
    args = ap.parse_args()
    if args.smoke:
        args.photos, args.side, args.batch, args.repeat, args.arch = 8, 640, 4, 1, "ViT-S-32"

    import torch

    torch.set_num_threads(args.threads)
    from core.ingest.decode import decode_workers

    workers = decode_workers(0)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        t = time.perf_counter()
        frames, results, n_boxes = make_card(tmp / "card", args.photos, args.side)
        print(f"{args.photos} frames {args.side} px wide with {n_boxes} boxes made in {time.perf_counter() - t:.0f} s; "
              f"model open_clip {args.arch} (random weights), batch {args.batch}, torch threads {args.threads}, "
              f"{workers} decoding threads", flush=True)
        ratios, shares = [], []
        for rep in range(args.repeat):  # interleaved rounds: a busy shared machine drifts between measurements
            ingest_s, (services, report) = ingest_rate(tmp, f"r{rep}", frames, results, args)
            assert report.crops == n_boxes, report.to_json()
            decode_s, forward_s, bare_s = bare_seconds(frames, results, services.backends.embedder, args, workers)
            ratios.append(bare_s / ingest_s)
            card_s, n_events = card_steps_seconds(frames)
            shares.append(card_s / bare_s)
            print(f"round {rep + 1}: ingest with crops {ingest_s:.1f} s ({report.crops} crops) | bare decode and crop "
                  f"{decode_s:.1f} s + preprocess and forward {forward_s:.1f} s = {bare_s:.1f} s | EXIF read and "
                  f"event grouping {card_s * 1000:.1f} ms ({n_events} events)", flush=True)
        print(f"ratio ingest with crops / bare decode+crop+forward (throughput): median {np.median(ratios):.2f} "
              f"(rounds: {', '.join(f'{v:.2f}' for v in ratios)})  (goal >= 0.9)")
        print(f"share EXIF read + event grouping / bare decode+crop+forward: median {100 * np.median(shares):.2f}% "
              f"(rounds: {', '.join(f'{100 * v:.2f}%' for v in shares)})  (goal < 5%)", flush=True)


if __name__ == "__main__":
    main()
