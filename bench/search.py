"""Search latency through EcoLens against a bare FAISS search on the same index, and the approximate index's
recall and speed-up, measured in one run on CLIP-like vectors.

    nice -n 10 python bench/search.py [--sizes 100000,1000000] [--queries 200] [--nprobe 16,32,64]
    python bench/search.py --smoke   # a tiny run for the test suite (4,000 64-d vectors); goals not judged

Vectors come from bench/clip_like.py (a mean direction, genera, species and photo noise on a power-law
spectrum), whose statistics are printed and compared with those of CLIP ViT-B image embeddings: random-pair
cosine 0.1-0.3, top-10 neighbour cosine 0.8-0.9. Queries are held-out photos of the same distribution
(search by example). "EcoLens" is Corpus.rank_vector + hits: the FAISS search through VectorIndex
plus fetching the k photos' metadata from a real SQLite catalog. The approximate index is built as ingest
builds it: VectorIndex.ensure_approximate (IVF-PQ trained once on a sample; its short list re-scored
exactly from the flat copy)."""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.clip_like import ClipLike, statistics
from bench.support.measure import pct


def fill_catalog(engine, n: int) -> None:
    from core.contracts.records import Photo
    from storage.catalog import SqlCatalog

    catalog = SqlCatalog(engine)
    for i in range(0, n, 50_000):
        catalog.add_photos([Photo(path=f"/photos/{j}.jpg", sha256=f"{j:064x}", scientific_name=f"Species {j % 1000}")
                            for j in range(i, min(n, i + 50_000))])


def overhead(index, n: int, queries: np.ndarray, k: int) -> tuple[float, float]:
    """EcoLens's path vs bare FAISS on the same flat index; prints and returns the bare p50, p95."""
    from core.backends.registry import Backends
    from core.config import load_settings
    from core.search.corpus import Corpus
    from core.vectors.index_store import IndexStore
    from storage.catalog import SqlCatalog
    from storage.db import open_engine

    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(environ={}, data_dir=tmp, embedder="hash")
        db = open_engine(Path(tmp) / "bench.sqlite")
        fill_catalog(db, n)
        service = Corpus(SqlCatalog(db), IndexStore(Path(tmp)), Backends(settings).embedder, settings)
        service._index = index  # the bench built the index itself
        bare, ours = [], []
        for q in queries:  # interleaved so that both see the same machine state
            t = time.perf_counter()
            index.flat.search(q[None, :], k)
            bare.append(time.perf_counter() - t)
            t = time.perf_counter()
            service.hits(service.rank_vector(q, k, None))
            ours.append(time.perf_counter() - t)
    b50, b95 = pct(bare)
    o50, o95 = pct(ours)
    print(f"N={n:>9,} flat   bare faiss p50 {b50:7.2f} ms p95 {b95:7.2f} ms | EcoLens p50 {o50:7.2f} ms "
          f"p95 {o95:7.2f} ms | ratio p50 {o50 / b50:.2f} p95 {o95 / b95:.2f} (goal <= 2)", flush=True)
    return b50, b95


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--nlist", type=int, default=0, help="IVF lists (0: what ingest picks, 2*sqrt(N))")
    ap.add_argument("--nprobe", default="32,64,128", help="IVF lists probed; the first that reaches the goals is "
                                                         "the recommended index_nprobe")
    ap.add_argument("--pq-m", type=int, default=64)
    ap.add_argument("--hnsw", action="store_true", help="also build HNSW (slow to build on 2 cores)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--smoke", action="store_true",
                    help="a tiny run (4,000 64-d vectors, 20 queries, 16 IVF lists) that checks the bench works")
    args = ap.parse_args()
    if args.smoke:
        args.sizes, args.queries, args.dim, args.nlist, args.pq_m, args.nprobe = "4000", 20, 64, 16, 8, "4,8"

    import faiss

    from core.vectors.index import VectorIndex
    from core.vectors.threads import set_threads

    set_threads(args.threads)
    gen = ClipLike(args.dim)
    queries, _ = gen.sample(args.queries)
    for n in (int(s) for s in args.sizes.split(",")):
        t = time.perf_counter()
        x, _ = gen.sample(n)
        index = VectorIndex(args.dim)
        index.add(np.arange(1, n + 1), x)
        exact_scores, exact = index.flat.search(queries, args.k)
        stats = statistics(x, queries, exact_scores, np.random.default_rng(1))
        del x
        print(f"N={n:>9,} vectors made in {time.perf_counter() - t:.0f} s; random-pair cosine "
              f"{stats['random_pair_cosine']:.2f} (CLIP: 0.1-0.3), top-1 {stats['top1_cosine']:.2f}, top-10 "
              f"{stats['top10_cosine']:.2f} (CLIP: 0.8-0.9), effective dimension {stats['effective_dim']:.0f}",
              flush=True)
        b50, _ = overhead(index, n, queries, args.k)
        if n != int(args.sizes.split(",")[-1]):
            continue
        kinds = ["ivfpq"] + (["hnsw"] if args.hnsw else [])
        for kind in kinds:
            t = time.perf_counter()
            used = index.ensure_approximate(kind, nlist=args.nlist, pq_m=args.pq_m, nprobe=16)
            build_s = time.perf_counter() - t
            settings = [int(p) for p in args.nprobe.split(",")] if kind == "ivfpq" else [128]
            for setting in settings:
                if kind == "ivfpq":
                    faiss.extract_index_ivf(index.approx).nprobe = setting
                else:
                    faiss.downcast_index(index.approx.index).hnsw.efSearch = setting
                times, flat_times, found = [], [], []
                for q in queries:  # interleaved with the exact search, so both see the same machine state
                    t = time.perf_counter()
                    found.append(index.search(q[None, :], args.k)[1][0])
                    times.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    index.flat.search(q[None, :], args.k)
                    flat_times.append(time.perf_counter() - t)
                recall = np.mean([len(set(f) & set(e)) / args.k for f, e in zip(found, exact)])
                a50, a95 = pct(times)
                b50, _ = pct(flat_times)
                knob = f"nprobe {setting}" if kind == "ivfpq" else f"efSearch {setting}"
                print(f"N={n:>9,} {used:6s} {knob}: recall@{args.k} {recall:.3f} (goal >= 0.95) | p50 {a50:.2f} ms "
                      f"p95 {a95:.2f} ms vs flat p50 {b50:.2f} ms: speed-up {b50 / a50:.1f}x (goal >= 10x) | "
                      f"built in {build_s:.0f} s", flush=True)


if __name__ == "__main__":
    main()
