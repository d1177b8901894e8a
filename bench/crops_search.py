"""Searching frames and detection crops together against bare FAISS over the same vectors, and the memory and
bytes a frame costs, measured in one run on CLIP-like vectors (issue 34: camera traps).

    nice -n 10 python bench/crops_search.py [--size 1000000] [--queries 200] [--dim 512] [--k 100]
    python bench/crops_search.py --smoke   # a tiny run for the test suite (3,000 64-d frames); goals not judged

Frames: --size vectors from bench/clip_like.py; 30% of the frames carry one or two detection crops (half each),
whose vectors are drawn from the same distribution. "EcoLens" is Corpus.rank_vector: the frame index
(core.vectors.index.VectorIndex, flat) and the crop index (core.camtrap.crop_index.CropIndex, read from its
files) searched, each photo's score the better of its frame and its best crop (merge). "Bare" is one FAISS
IndexFlatIP holding the frame and crop vectors together, asked for the same k. "EcoLens, events collapsed" adds
the by-event step (core.camtrap.hit_facts.by_event, the code the search engine runs): the frames fall into events
of 1-5 consecutive frames, and the merged ranking keeps each event's best frame; the event of a frame is read
from an in-memory array here (the app reads it from the catalog, one query for the ranked ids, not timed).
Memory: the resident memory the two indexes add (anonymous) and their files on disk, per frame, with what 200M
frames would need."""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.clip_like import ClipLike
from bench.support.measure import memory_now, pct


def crops_of(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(detection ids, photo ids) for 30% of `n` frames carrying one or two crops (half each)."""
    carrying = rng.choice(np.arange(1, n + 1), size=int(0.3 * n), replace=False)
    twice = carrying[: len(carrying) // 2]
    photos = np.sort(np.concatenate([carrying, twice]))
    return np.arange(1, len(photos) + 1, dtype=np.int64), photos.astype(np.int64)


def build(tmp: Path, n: int, dim: int, gen: ClipLike, rng: np.random.Generator, chunk: int = 100_000):
    from core.camtrap.crop_index import CropIndex
    from core.vectors.index import VectorIndex

    frames = VectorIndex(dim)
    for i in range(0, n, chunk):
        x, _ = gen.sample(min(chunk, n - i))
        frames.add(np.arange(i + 1, i + 1 + len(x)), x)
    det_ids, photo_ids = crops_of(n, rng)
    crops = CropIndex(tmp, 1, dim)
    boxes = np.tile([0.1, 0.1, 0.3, 0.3], (len(det_ids), 1))
    for i in range(0, len(det_ids), chunk):
        x, _ = gen.sample(min(chunk, len(det_ids) - i))
        crops.add(det_ids[i:i + chunk], photo_ids[i:i + chunk], boxes[i:i + chunk], x,
                  rng.uniform(0.2, 1.0, len(x)))  # every crop at or above the default threshold
    return frames, crops


def events_of(n: int, rng: np.random.Generator) -> np.ndarray:
    """Event id of each of `n` frames (index 0 = photo id 1): bursts of 1-5 consecutive frames."""
    sizes = rng.integers(1, 6, size=n)
    return np.repeat(np.arange(1, n + 1, dtype=np.int64), sizes)[:n]


class EventStore:
    """The one camera-trap store call by_event makes (captures -> .event_id), answered from an array."""

    def __init__(self, events: np.ndarray):
        self.events = events

    def captures(self, photo_ids):
        from types import SimpleNamespace

        return {int(i): SimpleNamespace(event_id=int(self.events[int(i) - 1])) for i in photo_ids}


def corpus_over(tmp: Path, frames, dim: int):
    """Corpus (core.search.corpus) over the bench's own frame index and the crop index files in `tmp`."""
    from core.config import load_settings
    from core.contracts.catalog import VectorSet
    from core.search.corpus import Corpus
    from core.vectors.index_store import IndexStore

    corpus = Corpus.__new__(Corpus)  # no catalog: rank_vector needs only the two indexes (and the threshold)
    corpus._index, corpus._vs, corpus._crops = frames, VectorSet(1, "bench", dim), None
    corpus.settings = load_settings(environ={}, data_dir=str(tmp), embedder="hash")
    corpus.store, corpus.camtrap = IndexStore(tmp), object()
    corpus.store.root = tmp
    return corpus


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1_000_000, help="frames")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--k", type=int, default=100, help="results asked (the first stage's depth is 100)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--smoke", action="store_true", help="a tiny run (3,000 64-d frames, 20 queries)")
    args = ap.parse_args()
    if args.smoke:
        args.size, args.queries, args.dim = 3000, 20, 64

    import faiss

    from core.vectors.integrity import write_checked
    from core.vectors.threads import set_threads

    set_threads(args.threads)
    gen = ClipLike(args.dim)
    rng = np.random.default_rng(0)
    queries, _ = gen.sample(args.queries)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        before = memory_now()["anon"]
        t = time.perf_counter()
        frames, crops = build(tmp, args.size, args.dim, gen, rng)
        added = memory_now()["anon"] - before
        crops.save()
        write_checked(frames.flat, tmp / "vectors-1.faiss")
        disk = sum(p.stat().st_size for p in tmp.iterdir())
        crop_disk = sum(p.stat().st_size for p in tmp.iterdir() if p.name.startswith("crops-"))
        n_crops = len(crops)
        print(f"{args.size:,} frames, {n_crops:,} crops ({n_crops / args.size:.2f} a frame; 30% of frames carry "
              f"one or two), {args.dim}-d, built in {time.perf_counter() - t:.0f} s", flush=True)
        corpus = corpus_over(tmp, frames, args.dim)
        assert corpus.crops is not None and len(corpus.crops) == n_crops
        bare = faiss.IndexFlatIP(args.dim)  # the same vectors in one plain FAISS index
        bare.add(frames.matrix())
        bare.add(corpus.crops.index.matrix())
        from core.camtrap.filters import camtrap_filters
        from core.camtrap.hit_facts import by_event
        from core.contracts.records import Filters

        events = events_of(args.size, rng)
        by_events = Filters(camtrap=camtrap_filters(by_event=True))
        theirs, ours, collapsed, kept = [], [], [], []
        for q in queries:  # interleaved so that both see the same machine state
            t = time.perf_counter()
            bare.search(q[None, :], args.k)
            theirs.append(time.perf_counter() - t)
            t = time.perf_counter()
            corpus.rank_vector(q, args.k, None, {})
            ours.append(time.perf_counter() - t)
            corpus.camtrap = EventStore(events)
            t = time.perf_counter()
            ranked = by_event(corpus, by_events, corpus.rank_vector(q, args.k, None, {}))[:args.k]
            collapsed.append(time.perf_counter() - t)
            corpus.camtrap = object()
            kept.append(len(ranked))
        b50, b95 = pct(theirs)
        o50, o95 = pct(ours)
        c50, c95 = pct(collapsed)
        per_frame, crop_share = disk / args.size, crop_disk / args.size
        print(f"memory: the two indexes add {added / 2**20:,.0f} MB resident ({added / args.size:,.0f} bytes a "
              f"frame); on disk {disk / 2**20:,.0f} MB ({per_frame:,.0f} bytes a frame, of which the crop index "
              f"{crop_share:,.0f}); 200M frames: {per_frame * 200e6 / 2**30:,.0f} GiB as flat float32, of which "
              f"crops {crop_share * 200e6 / 2**30:,.0f} GiB (the frame index can be compressed with index_type "
              "ivfpq; the crop index is flat)", flush=True)
        print(f"k={args.k}: bare faiss (frames + crops in one flat index) p50 {b50:.2f} ms p95 {b95:.2f} ms | "
              f"EcoLens frames and crops p50 {o50:.2f} ms p95 {o95:.2f} ms | ratio p50 {o50 / b50:.2f} "
              f"p95 {o95 / b95:.2f} (goal <= 2)", flush=True)
        print(f"events collapsed ({len(np.unique(events)):,} events of 1-5 frames; {np.mean(kept):.0f} of {args.k} "
              f"results left a query): EcoLens frames + crops + by_event p50 {c50:.2f} ms p95 {c95:.2f} ms | "
              f"ratio to bare p50 {c50 / b50:.2f} p95 {c95 / b95:.2f} (goal <= 2)", flush=True)


if __name__ == "__main__":
    main()
