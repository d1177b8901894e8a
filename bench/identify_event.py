"""Identifying a camera-trap event by its key on a catalog with many events: the time one identification takes
(core.camtrap.identifications.identify through the SQLite store: the event found by its key, the observation
written), against reading every event to find the one named (what identify did before the store had a lookup by
key), measured in one run.

    nice -n 10 python bench/identify_event.py [--events 100000] [--identifications 200]
    python bench/identify_event.py --smoke   # a tiny run for the test suite (2,000 events); goals not judged

The catalog: a fresh SQLite file made by the app's migrations, 20 deployments, --events events of 1-5 frames
(no photos: an identification of an event names the event only). The identifications name random events and
alternate between two annotators, so half of them replace an earlier one (the same key). Goal: one
identification stays under 20 ms at p95 at 100k events (a person clicks; the page answers at once)."""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.support.measure import pct


def build(path: Path, n: int, rng: np.random.Generator):
    from core.contracts.camtrap import Deployment, Event
    from storage.camtrap_store import SqlCamtrapStore
    from storage.db import open_engine

    store = SqlCamtrapStore(open_engine(path))
    store.upsert_deployments([Deployment(key=f"site{d:02d}") for d in range(20)])
    frames = rng.integers(1, 6, size=n)
    for start in range(0, n, 20_000):
        store.upsert_events([Event(key=f"site{i % 20:02d}#{i // 20 + 1}", deployment_key=f"site{i % 20:02d}",
                                   start="2024-06-01T03:12:00", end="2024-06-01T03:12:40", frames=int(frames[i]))
                             for i in range(start, min(n, start + 20_000))])
    return store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--identifications", type=int, default=200)
    ap.add_argument("--scans", type=int, default=5, help="lookups by reading every event (slow: a few)")
    ap.add_argument("--smoke", action="store_true", help="a tiny run (2,000 events, 40 identifications)")
    args = ap.parse_args()
    if args.smoke:
        args.events, args.identifications, args.scans = 2_000, 40, 3
    from core.camtrap.identifications import identify

    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        store = build(Path(tmp) / "catalog.sqlite", args.events, rng)
        print(f"{args.events} events in 20 deployments written in {time.perf_counter() - t:.1f} s")
        keys = [f"site{i % 20:02d}#{i // 20 + 1}" for i in rng.integers(0, args.events, size=args.identifications)]
        took = []
        for n, key in enumerate(keys):
            t = time.perf_counter()
            identify(store, "Vulpes vulpes", ("Ann", "Bo")[n % 2], event=key, count=1 + n % 3)
            took.append(time.perf_counter() - t)
        scans = []
        for key in keys[: args.scans]:
            t = time.perf_counter()
            found = next(e for e in store.events() if e.key == key)
            scans.append(time.perf_counter() - t)
            assert found.key == key
        lookups = []
        for key in keys[: args.scans]:
            t = time.perf_counter()
            assert store.event(key).key == key
            lookups.append(time.perf_counter() - t)
    p50, p95 = pct(took)
    print(f"identify an event by key ({args.identifications} identifications): p50 {p50:.2f} ms "
          f"p95 {p95:.2f} ms (goal p95 <= 20 ms at 100k events)")
    print(f"find one event: by key {np.median(lookups) * 1000:.2f} ms, reading every event "
          f"{np.median(scans) * 1000:.1f} ms (median of {args.scans})")
    print(f"ratio reading every event / by key: {np.median(scans) / np.median(lookups):.0f}x")


if __name__ == "__main__":
    main()
