"""A million-photo catalog: filtered search through EcoLens against a bare FAISS search on the same pool, and
the latency of the app's own search path, measured in one run.

    nice -n 10 python bench/scale.py [--photos 1000000] [--queries 40] [--approx]
    python bench/scale.py --smoke   # a tiny run for the test suite (3,000 photos, 5 queries); goals not judged

Builds a real SQLite catalog (migrations, indexes) of N photos whose taxa, dates and places are drawn per
species (skewed species sizes, seasonal months, species ranges), with CLIP-like vectors from
bench/clip_like.py whose species structure matches the taxa. For each filter (a genus, two months, a
bounding box):
- EcoLens: Corpus.pool (SQLite, through the catalog's indexes and R*Tree, the ids read as one string) +
  rank_vector (FAISS over the flat rows with a bitmap of the pool's rows, or an exact product over a small
  pool) + hits (metadata of the k photos), with the p50 of each phase and the first query apart (it builds
  the index's id -> row table, once per loaded index);
- bare: faiss IndexFlatIP search of the same flat index restricted to the same pool by an id selector
  built beforehand (no SQLite, no metadata).
Ratio p95 goal <= 2. Then SearchEngine.search (text query -> embedder -> filters -> FAISS -> photos), the
path the CLI and the web app use, with the hash stand-in embedder at the same dimension, unfiltered and
filtered; with --approx also after training the IVF-PQ index as ingest would."""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.clip_like import ClipLike  # noqa: E402


def pct(times: list[float]) -> tuple[float, float]:
    arr = np.array(times) * 1000
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def fill_catalog(db, labels: np.ndarray, species_per_genus: int, rng: np.random.Generator) -> None:
    from sqlalchemy import insert

    from storage.models import PhotoRow

    n = len(labels)
    n_species = int(labels.max()) + 1
    centre_lat = rng.uniform(-50, 65, n_species)
    centre_lon = rng.uniform(-170, 170, n_species)
    peak_month = rng.integers(0, 12, n_species)
    with db.begin() as conn:
        for i in range(0, n, 50_000):
            lab = labels[i:i + 50_000]
            m = len(lab)
            year = rng.integers(0, 10, m)
            month = (peak_month[lab] + np.round(rng.normal(0, 1.5, m)).astype(int)) % 12
            day = rng.integers(0, 28, m)
            lat = np.clip(centre_lat[lab] + rng.normal(0, 4, m), -89, 89)
            lon = (centre_lon[lab] + rng.normal(0, 6, m) + 180) % 360 - 180
            rows = []
            for j in range(m):
                s = int(lab[j])
                g = s // species_per_genus
                observed = date(2015 + int(year[j]), int(month[j]) + 1, int(day[j]) + 1)
                rows.append({"id": i + j + 1, "path": f"/photos/{i + j}.jpg", "sha256": f"{i + j:064x}",
                             "scientific_name": f"Genus{g} species{s}", "genus": f"Genus{g}",
                             "family": f"Family{g // 20}", "observed_on": observed, "observed_month": observed.month,
                             "latitude": float(lat[j]), "longitude": float(lon[j]),
                             "license": "cc-by" if j % 3 else "cc0",
                             "license_code": "cc-by" if j % 3 else "cc0", "extra": {}})  # (as add_photos derives it)
            conn.execute(insert(PhotoRow), rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--photos", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--approx", action="store_true", help="also train IVF-PQ and time the unfiltered app search")
    ap.add_argument("--smoke", action="store_true",
                    help="a tiny run (3,000 photos, 5 queries, with --approx) that checks the bench works")
    args = ap.parse_args()
    if args.smoke:
        args.photos, args.queries, args.approx = 3000, 5, True

    import faiss
    from sqlalchemy import text

    from core.backends.hash_embedder import HashEmbedder
    from core.backends.registry import Backends
    from core.vectors.index import VectorIndex, id_selector, set_threads
    from core.vectors.index_store import IndexStore
    from core.contracts.records import Filters
    from core.search.corpus import Corpus
    from core.search.engine import SearchEngine
    from core.contracts.search_request import SearchRequest
    from core.contracts.settings import load_settings
    from storage.catalog import SqlCatalog
    from storage.db import open_engine

    set_threads(args.threads)
    rng = np.random.default_rng(7)
    gen = ClipLike(512)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        x, labels = gen.sample(args.photos)
        queries, _ = gen.sample(args.queries)
        index = VectorIndex(512)
        index.add(np.arange(1, args.photos + 1), x)
        del x
        t1 = time.perf_counter()
        db = open_engine(Path(tmp) / "ecolens.sqlite")
        fill_catalog(db, labels, 25, rng)
        with db.begin() as conn:
            conn.execute(text("ANALYZE"))
        t2 = time.perf_counter()
        print(f"{args.photos:,} photos: vectors in {t1 - t0:.0f} s, SQLite catalog in {t2 - t1:.0f} s "
              f"({(Path(tmp) / 'ecolens.sqlite').stat().st_size / 1e9:.2f} GB)", flush=True)
        settings = load_settings(environ={}, data_dir=tmp, embedder="hash", k=args.k)
        backends = Backends(settings)
        backends._embedder = HashEmbedder(dim=512)
        catalog = SqlCatalog(db)
        service = Corpus(catalog, IndexStore(Path(tmp)), backends.embedder, settings)
        engine = SearchEngine(service, backends, settings)
        service._index = index  # built above, as ingest would have
        counts = np.bincount(labels // 25)
        genus = int(np.argsort(counts)[len(counts) // 2 + len(counts) // 4])  # a fairly common genus
        lat0, lon0 = 40.0, 0.0
        filters = {"taxon": Filters(taxon=f"Genus{genus}"), "months": Filters(months=(5, 6)),
                   "bbox": Filters(bbox=(lon0 - 40, lat0 - 25, lon0 + 40, lat0 + 25))}
        for name, f in filters.items():
            pool = service.pool(f)
            sel, _keep = id_selector(pool)
            params = faiss.SearchParameters(sel=sel)
            with db.connect() as conn:
                where = {"taxon": "genus != '' AND lower(genus) = 'genus1'", "months": "observed_month IN (5, 6)",
                         "bbox": "id IN (SELECT id FROM photo_places WHERE min_lat >= 15 AND max_lat <= 65 "
                                 "AND min_lon >= -40 AND max_lon <= 40)"}[name]
                table_sql = (f"SELECT id FROM photo_places WHERE {where[len('id IN (SELECT id FROM photo_places WHERE '):-1]}"
                             if name == "bbox" else f"SELECT id FROM photos WHERE {where}")
                plan = " / ".join(r[-1] for r in conn.execute(text(f"EXPLAIN QUERY PLAN {table_sql}")))
            bare, ours, phases = [], [], {"pool": [], "rank": [], "hits": []}
            for q in queries:
                t = time.perf_counter()
                index.flat.search(q[None, :], args.k, params=params)
                bare.append(time.perf_counter() - t)
                t0 = time.perf_counter()
                ids = service.pool(f)
                t1 = time.perf_counter()
                ranked = service.rank_vector(q, args.k, ids)
                t2 = time.perf_counter()
                service.hits(ranked)
                t3 = time.perf_counter()
                ours.append(t3 - t0)
                for phase, took in zip(phases, (t1 - t0, t2 - t1, t3 - t2)):
                    phases[phase].append(took)
            b50, b95 = pct(bare)
            o50, o95 = pct(ours)
            print(f"filter {name:6s} pool {len(pool):>7,} | bare faiss p50 {b50:7.1f} ms p95 {b95:7.1f} ms | EcoLens "
                  f"p50 {o50:7.1f} ms p95 {o95:7.1f} ms | ratio p50 {o50 / b50:.2f} p95 {o95 / b95:.2f} (goal <= 2) "
                  f"| SQLite: {plan}", flush=True)
            print(f"    EcoLens p50 by phase: pool (SQLite) {pct(phases['pool'])[0]:.1f} ms, rank (FAISS) "
                  f"{pct(phases['rank'])[0]:.1f} ms, hits (metadata) {pct(phases['hits'])[0]:.1f} ms; first query "
                  f"{ours[0] * 1000:.1f} ms", flush=True)

        def app_search(label: str, f: Filters | None) -> None:
            times = []
            for i in range(args.queries):
                t = time.perf_counter()
                engine.search(SearchRequest(f"a photo of genus {i} in the wild", k=args.k, filters=f))
                times.append(time.perf_counter() - t)
            p50, p95 = pct(times)
            print(f"app search path ({label}): p50 {p50:7.1f} ms p95 {p95:7.1f} ms", flush=True)

        app_search("no filter, exact flat index", None)
        for name, f in filters.items():
            app_search(f"filter {name}", f)
        if args.approx:
            t = time.perf_counter()
            kind = index.ensure_approximate("ivfpq", nprobe=32)
            print(f"trained {kind} once on a sample in {time.perf_counter() - t:.0f} s", flush=True)
            app_search(f"no filter, {kind}", None)


if __name__ == "__main__":
    main()
