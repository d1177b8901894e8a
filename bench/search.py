"""Search latency through EcoLens against a bare FAISS search on the same index, and the approximate
index's recall and speed-up, measured in one run.

    python bench/search.py [--sizes 100000,1000000] [--queries 200] [--dim 512]

The vectors are random but clustered (a mixture of Gaussian clusters on the unit sphere), because
uniformly random 512-d vectors have no neighbourhood structure for any approximate index to exploit; real
CLIP embeddings are clustered too. "EcoLens" is SearchService.rank_vector + hits: the FAISS search through
VectorIndex plus fetching the k photos' metadata from a real SQLite catalog."""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402


def clustered(n: int, dim: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, dim), np.float32)
    for i in range(0, n, 100_000):
        m = min(100_000, n - i)
        x = centres[rng.integers(0, len(centres), m)] + rng.standard_normal((m, dim), dtype=np.float32) * 0.03
        out[i:i + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def percentiles(times: list[float]) -> tuple[float, float]:
    arr = np.array(times) * 1000
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def fill_catalog(engine, n: int) -> None:
    from sqlalchemy import insert

    from storage.models import PhotoRow

    with engine.begin() as conn:
        for i in range(0, n, 50_000):
            conn.execute(insert(PhotoRow), [{"id": j + 1, "path": f"/photos/{j}.jpg", "sha256": f"{j:064x}",
                                             "scientific_name": f"Species {j % 1000}", "extra": {}}
                                            for j in range(i, min(n, i + 50_000))])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--approx", default="ivfpq", help="approximate indexes to try at 1M: ivfpq,hnsw")
    ap.add_argument("--nprobe", type=int, default=32, help="IVF lists probed (the index_nprobe setting)")
    args = ap.parse_args()

    from core.backends.registry import Backends
    from core.index import VectorIndex
    from core.index_store import IndexStore
    from core.search import SearchService
    from core.settings import load_settings
    from storage.catalog import SqlCatalog
    from storage.db import open_engine

    rng = np.random.default_rng(0)
    centres = rng.standard_normal((4000, args.dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    queries = clustered(args.queries, args.dim, rng, centres)
    for n in (int(s) for s in args.sizes.split(",")):
        x = clustered(n, args.dim, rng, centres)
        index = VectorIndex(args.dim)
        index.add(np.arange(1, n + 1), x)
        del x
        with tempfile.TemporaryDirectory() as tmp:
            settings = load_settings(environ={}, data_dir=tmp, embedder="hash")
            db = open_engine(Path(tmp) / "bench.sqlite")
            fill_catalog(db, n)
            catalog = SqlCatalog(db)
            service = SearchService(catalog, IndexStore(Path(tmp)), Backends(settings), settings)
            service._index = index  # the bench built the index itself

            bare, ours = [], []
            for q in queries:  # interleaved so that both see the same machine state
                t = time.perf_counter()
                index.flat.search(q[None, :], args.k)
                bare.append(time.perf_counter() - t)
                t = time.perf_counter()
                service.hits(service.rank_vector(q, args.k, None))
                ours.append(time.perf_counter() - t)
            b50, b95 = percentiles(bare)
            o50, o95 = percentiles(ours)
            print(f"N={n:>9,} flat  bare faiss p50 {b50:7.2f} ms p95 {b95:7.2f} ms | EcoLens p50 {o50:7.2f} ms "
                  f"p95 {o95:7.2f} ms | ratio p50 {o50 / b50:.2f} p95 {o95 / b95:.2f} (goal <= 2)")

        if n >= 1_000_000:
            _, exact = index.flat.search(queries, args.k)
            for kind in args.approx.split(","):
                t = time.perf_counter()
                used = index.build_approximate(kind, nprobe=args.nprobe, pq_m=64)
                build_s = time.perf_counter() - t
                approx_times = []
                found = []
                for q in queries:
                    t = time.perf_counter()
                    found.append(index.search(q[None, :], args.k)[1][0])
                    approx_times.append(time.perf_counter() - t)
                recall = np.mean([len(set(f) & set(e)) / args.k for f, e in zip(found, exact)])
                a50, _ = percentiles(approx_times)
                print(f"N={n:>9,} {used:6s} recall@{args.k} vs exact {recall:.3f} (goal >= 0.95) | p50 {a50:.2f} ms "
                      f"vs flat {b50:.2f} ms: speed-up {b50 / a50:.1f}x (goal >= 10x) | built in {build_s:.0f} s")


if __name__ == "__main__":
    main()
