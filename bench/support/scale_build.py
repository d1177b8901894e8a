"""The build phases of bench/scale.py: the parquet of photos, EcoLens's ingest, the bare FAISS add + SQLite
insert, and the sizes on disk; with the EcoLens services those phases open on the bench's data directory."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from bench.clip_like import ClipLike
from bench.support.measure import Pauses, PeakMemory
from bench.support.process_cpu import own_cpu_seconds

MODEL = "bench:clip-like-512"  # the model id the parquet declares and the bench's embedder answers to
DIM = 512
SPECIES_PER_GENUS = 25
PQ_M, PQ_BITS = 16, 12  # 16 x 12 bits = 24 bytes of code + 8 of id per photo in the IVF lists
REFINE = 64  # the short list re-scored from the float16 store: k x this
# (PQ16 with 8-bit codes, 24 bytes a photo, reached recall@10 0.78 with 16 x k re-scored and 0.88 with 64 x k
# at 100k photos; 12-bit codes 0.90 and 0.94: docs/benchmarks-log.md, millions of photos)
ROWS_PER_GROUP = 20_000
LICENCES = ("cc-by-nc", "cc-by", "cc0", "cc-by-sa")
URL = "https://inaturalist-open-data.s3.amazonaws.com/photos/{}/medium.jpg"


# ---- 1. the parquet -------------------------------------------------------------------------------
def phase_data(workdir: Path, n: int, queries: int) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    gen = ClipLike(DIM, species_per_genus=SPECIES_PER_GENUS)
    n_species = len(gen.species)
    centre_lat, centre_lon = rng.uniform(-50, 65, n_species), rng.uniform(-170, 170, n_species)
    peak_month = rng.integers(0, 12, n_species)
    target, tmp = workdir / "photos.parquet", workdir / "photos.parquet.part"
    started, cpu_started = time.perf_counter(), own_cpu_seconds()
    schema = pa.schema([("path", pa.string()), ("scientific_name", pa.string()), ("genus", pa.string()),
                        ("family", pa.string()), ("observed_on", pa.string()), ("latitude", pa.float64()),
                        ("longitude", pa.float64()), ("license", pa.string()),
                        ("embedding", pa.list_(pa.float16(), DIM))], metadata={"model_id": MODEL})
    # The vectors are written plain, without a dictionary (the other columns keep pyarrow's default): for float16
    # (a 2-byte fixed-length type in parquet) the dictionary made the file 6% smaller but writing 1.6x and reading
    # the column back 5x dearer in CPU (pyarrow 26: 0.26 s against 0.05 s per 20,000 rows), a cost that both
    # builds paid alike on every read. The values are the same either way.
    with pq.ParquetWriter(tmp, schema, use_dictionary=[f.name for f in schema if f.name != "embedding"]) as writer:
        for i in range(0, n, ROWS_PER_GROUP):
            m = min(ROWS_PER_GROUP, n - i)
            x, lab = gen.sample(m)
            genus = lab // SPECIES_PER_GENUS
            month = (peak_month[lab] + np.round(rng.normal(0, 1.5, m)).astype(int)) % 12 + 1
            day, year = rng.integers(1, 29, m), rng.integers(2015, 2025, m)
            lat = np.clip(centre_lat[lab] + rng.normal(0, 4, m), -89, 89)
            lon = (centre_lon[lab] + rng.normal(0, 6, m) + 180) % 360 - 180
            vec = pa.FixedSizeListArray.from_arrays(pa.array(x.astype(np.float16).ravel()), DIM)
            writer.write_batch(pa.record_batch([
                pa.array([URL.format(10_000_000 + j) for j in range(i, i + m)]),
                pa.array([f"Genus{g} species{s}" for g, s in zip(genus, lab)]),
                pa.array([f"Genus{g}" for g in genus]), pa.array([f"Family{g // 20}" for g in genus]),
                pa.array([f"{y}-{mo:02d}-{d:02d}" for y, mo, d in zip(year, month, day)]),
                pa.array(lat), pa.array(lon), pa.array([LICENCES[j % len(LICENCES)] for j in range(i, i + m)]),
                vec], schema=schema))
            del x
    os.replace(tmp, target)
    q, _ = gen.sample(queries)
    np.save(workdir / "queries.npy", q.astype(np.float16).astype(np.float32))
    return {"seconds": time.perf_counter() - started, "cpu_seconds": own_cpu_seconds() - cpu_started,
            "parquet_bytes": target.stat().st_size, "embedding_dictionary": False}


# ---- 2. EcoLens's ingest --------------------------------------------------------------------------
def lists_for(n: int) -> int:
    """IVF lists: the product's default (about 2 x sqrt(N)) at scale; fewer for a tiny run, to be trainable."""
    from core.vectors.ivf import default_nlist

    return default_nlist(n) if n >= 100_000 else max(8, n // 100)


def settings_for(workdir: Path, n: int):
    from core.config import load_settings

    return load_settings(environ={}, data_dir=str(workdir / "data"), embedder="hash", index_type="ivfpq",
                         index_flat_copy=False, index_float16_file=True, index_pq_m=PQ_M,
                         index_pq_bits=PQ_BITS if n >= 100_000 else 8,  # (a tiny run has too few vectors for 12)
                         index_refine_factor=REFINE, index_nprobe=64, index_nlist=lists_for(n), checkpoint_s=120.0,
                         threads=2)


class BenchEmbedder:
    """Answers to the parquet's model id (no query is embedded from text here: the bench searches by vector)."""

    model_id, dim, is_standin = MODEL, DIM, True


def services(workdir: Path, n: int):
    from core.backends.registry import Backends
    from core.config import Settings  # noqa: F401
    from core.search.corpus import Corpus
    from core.vectors.index_store import IndexStore
    from core.vectors.threads import set_threads
    from storage.catalog import SqlCatalog
    from storage.db import open_engine

    settings = settings_for(workdir, n)
    set_threads(settings.threads)
    settings.path().mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog(open_engine(settings.path("ecolens.sqlite"), settings.sqlite_mmap_mb << 20))
    Backends(settings)  # (as app.py builds them; the bench's embedder stands in for the model)
    store = IndexStore(settings.path())
    return settings, catalog, store, Corpus(catalog, store, BenchEmbedder(), settings)


def phase_ingest(workdir: Path, n: int) -> dict:
    from core.ingest.ingestor import Ingestor

    settings, catalog, store, _ = services(workdir, n)
    started, cpu_started = time.perf_counter(), own_cpu_seconds()
    progress = workdir / "ingest-progress.jsonl"
    attempt = sum(1 for _ in open(progress)) if progress.exists() else 0
    last = [0.0]

    def progress(done: int, total: int) -> None:  # written down as it goes: a cut-off run still tells its rate
        now = time.perf_counter()
        if now - last[0] >= 30:
            last[0] = now
            with open(workdir / "ingest-progress.jsonl", "a") as f:
                f.write(json.dumps({"at": time.strftime("%H:%M:%S", time.gmtime()), "attempt_line": attempt,
                                    "seconds": now - started, "cpu_seconds": own_cpu_seconds() - cpu_started,
                                    "pauses": Pauses.count, "rows_read": done, "peak_anon": peak.anon,
                                    "peak_file": peak.file, "load_average": os.getloadavg()}) + "\n")

    with PeakMemory() as peak:
        report = Ingestor(catalog, store, BenchEmbedder(), settings).run(workdir / "photos.parquet", progress)
    seconds, cpu = time.perf_counter() - started, own_cpu_seconds() - cpu_started
    with catalog.engine.begin() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    return {"seconds": seconds, "cpu_seconds": cpu, "added": report.added, "already": report.already,
            "reembedded": report.reembedded, "index": report.index_kind, "notices": report.notices[:5],
            "peak_anon": peak.anon, "peak_file": peak.file}


# ---- 7. the bare build ----------------------------------------------------------------------------
def phase_bare_build(workdir: Path, n: int) -> dict:
    import sqlite3

    import faiss
    import pyarrow.parquet as pq

    from core.vectors.ivf import MIN_PER_LIST, TRAIN_PER_LIST

    faiss.omp_set_num_threads(2)
    out = workdir / "bare"
    out.mkdir(exist_ok=True)
    db_path = out / "bare.sqlite"
    if db_path.exists():
        db_path.unlink()
    pf = pq.ParquetFile(workdir / "photos.parquet")
    # the shape of the index EcoLens built (lists, sub-quantizers, bits), read from its file
    ours = faiss.read_index(str(next((workdir / "data" / "index").glob("vectors-*.faiss.approx"))))
    shape = faiss.downcast_index(faiss.extract_index_ivf(ours))
    nlist, pq_m, pq_bits = shape.nlist, shape.pq.M, shape.pq.nbits
    del shape, ours
    started, cpu_started = time.perf_counter(), own_cpu_seconds()
    with PeakMemory() as peak:
        want = max(MIN_PER_LIST, TRAIN_PER_LIST) * nlist
        rng = np.random.default_rng(0)
        parts, got = [], 0
        for g in rng.permutation(pf.num_row_groups):  # a sample from across the file, as ingest draws it
            if got >= want:
                break
            col = pf.read_row_group(int(g), columns=["embedding"]).column("embedding").combine_chunks()
            mat = col.flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(-1, DIM)
            parts.append(mat[rng.random(len(mat)) < min(1.0, 2 * want / n)] if want < n / 2 else mat)
            got += len(parts[-1])
        sample = np.concatenate(parts)[:want]
        ivf = faiss.IndexIVFPQ(faiss.IndexFlatIP(DIM), DIM, nlist, pq_m, pq_bits, faiss.METRIC_INNER_PRODUCT)
        ivf.train(sample)
        del sample, parts
        trained, trained_cpu = time.perf_counter(), own_cpu_seconds()
        conn = sqlite3.connect(db_path)
        conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT, scientific_name TEXT, genus TEXT, "
                     "family TEXT, observed_on TEXT, latitude REAL, longitude REAL, license TEXT)")
        next_id = 1
        for rb in pf.iter_batches(batch_size=4096):
            col = rb.column("embedding")
            mat = col.flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(-1, DIM)
            ids = np.arange(next_id, next_id + len(mat), dtype=np.int64)
            ivf.add_with_ids(mat, ids)
            cols = [rb.column(c).to_pylist() for c in ("path", "scientific_name", "genus", "family", "observed_on",
                                                       "latitude", "longitude", "license")]
            conn.executemany("INSERT INTO photos VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             zip(ids.tolist(), *cols))
            conn.commit()
            next_id += len(mat)
        conn.close()
    seconds, cpu = time.perf_counter() - started, own_cpu_seconds() - cpu_started
    return {"seconds": seconds, "cpu_seconds": cpu, "train_seconds": trained - started,
            "train_cpu_seconds": trained_cpu - cpu_started, "add_insert_seconds": seconds - (trained - started),
            "peak_anon": peak.anon, "peak_file": peak.file}


# ---- 6. sizes -------------------------------------------------------------------------------------
def phase_sizes(workdir: Path, n: int) -> dict:
    import sqlite3

    import faiss

    data = workdir / "data"
    db = data / "ecolens.sqlite"
    index_dir = data / "index"
    approx = next(index_dir.glob("vectors-*.faiss.approx"))
    f16 = next(index_dir.glob("vectors-*.faiss.f16"))
    whole = faiss.read_index(str(approx))  # (kept alive: the IVF part below points into it)
    ivf = faiss.downcast_index(faiss.extract_index_ivf(whole))
    photos = ivf.ntotal
    lists = photos * (ivf.code_size + 8)  # codes and ids in the inverted lists
    quantizer = ivf.nlist * ivf.d * 4 + ivf.pq.M * ivf.pq.ksub * ivf.pq.dsub * 4
    tables = {}
    conn = sqlite3.connect(db)
    try:
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"):
            tables[name] = int(size)
    except sqlite3.OperationalError:  # SQLite built without the dbstat table
        pass
    conn.close()
    wal = Path(str(db) + "-wal")
    catalog_bytes = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return {"photos": photos, "nlist": ivf.nlist, "pq_m": ivf.pq.M, "pq_bits": ivf.pq.nbits,
            "index_file": approx.stat().st_size, "index_lists_bytes": lists, "quantizer_bytes": quantizer,
            "store_bytes": f16.stat().st_size, "store_ids_bytes": Path(str(f16) + ".ids").stat().st_size,
            "catalog_bytes": catalog_bytes, "tables": tables,
            "parquet_bytes": (workdir / "photos.parquet").stat().st_size}

