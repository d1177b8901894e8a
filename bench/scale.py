"""Millions of photos from precomputed vectors: the build through EcoLens's own ingest against a bare FAISS add
+ SQLite insert, memory, sizes on disk and bytes per photo, filtered and unfiltered search against bare FAISS
on the same index, and recall@10 against exact search, measured in one run.

    nice -n 19 python bench/scale.py --photos 1000000 --workdir /some/disk/scale-1m [--queries 100]
    python bench/scale.py --smoke   # a tiny run for the test suite (3,000 photos, 5 queries); goals not judged

Phases, each in a process of its own (so that each one's peak memory is its own), each written to
`<workdir>/results.jsonl` as it finishes; a run that is cut off starts again where it stopped (finished phases
are skipped, and the ingest itself resumes from its last checkpoint):
1. data: a parquet of N photos: CLIP-like vectors (bench/clip_like.py) stored as float16, a URL per photo,
   taxa (species of 2,000 genera), dates (seasonal months) and places (species ranges) drawn per species,
   licences; and the held-out query vectors.
2. ingest: `Ingestor.run` on the parquet, the product's precomputed ingest, with index_type ivfpq (PQ16 with
   12-bit codes, about 2 x sqrt(N) lists, 64 x k re-scored), no flat copy and the float16 re-scoring store: the index is trained first on a
   sample of the file and every vector goes straight into it. Peak private (anonymous) memory of the
   process, file-backed pages of memory maps counted apart (/proc/self/smaps_rollup, sampled).
3. search: EcoLens's filtered search (Corpus.pool + rank_vector + hits: the filter columns, memory-mapped
   arrays made from the catalog before the searches (their time reported), checked against SQLite's own pool, then
   IVF-PQ with the pool as a selector inside the scan, or the float16 rows of a small pool scored exactly,
   then the photos' metadata) for a genus, two months and a bounding box, and unfiltered IVF-PQ search
   (re-scored from the float16 store); ids kept for recall.
4. bare search: in its own process, the IVF-PQ index file read by faiss and searched with each pool as an
   id selector prepared beforehand (same nprobe rule as EcoLens; no SQLite, no metadata, no re-scoring), and
   unfiltered.
5. exact: in its own process, exact inner products of the queries with every stored vector (the float16
   store, i.e. the vectors as the parquet holds them): recall@10 of EcoLens's unfiltered and filtered results.
6. sizes on disk, and bytes per photo of the compressed index, the float16 store and the catalog (by table
   and index, from SQLite's dbstat); run right after the ingest.
7. bare build (last): in its own process, the same rows read from the parquet, an IVF-PQ of the same shape trained
   on a sample of the same size and the vectors added (faiss), and the rows inserted into a plain SQLite table
   (executemany, no index): the least any build of these rows must do.
Goals (issue 22): private memory <= 12 GB at 5M, filtered p95 <= 2x bare, unfiltered p95 <= 50 ms at
recall@10 >= 0.95, build >= 0.8x the bare add+insert, compressed index <= 32 B/photo, catalog <= 250 B/photo."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# Why: on a machine shared with other jobs, OpenMP threads that spin while they wait for one another burn the
# time slices the other thread needs; waiting passively costs little when the cores are free. Set before FAISS
# loads (the same for EcoLens's phases and the bare ones); an explicit OMP_WAIT_POLICY is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

from bench.clip_like import ClipLike  # noqa: E402

MODEL = "bench:clip-like-512"  # the model id the parquet declares and the bench's embedder answers to
DIM = 512
SPECIES_PER_GENUS = 25
PQ_M, PQ_BITS = 16, 12  # 16 x 12 bits = 24 bytes of code + 8 of id per photo in the IVF lists
REFINE = 64  # the short list re-scored from the float16 store: k x this
# (PQ16 with 8-bit codes, 24 bytes a photo, reached recall@10 0.78 with 16 x k re-scored and 0.88 with 64 x k
# at 100k photos; 12-bit codes 0.90 and 0.94: docs/benchmarks.md, millions of photos)
ROWS_PER_GROUP = 20_000
LICENCES = ("cc-by-nc", "cc-by", "cc0", "cc-by-sa")
URL = "https://inaturalist-open-data.s3.amazonaws.com/photos/{}/medium.jpg"
BOX = (-40.0, 15.0, 40.0, 65.0)
MONTHS = (5, 6)


# ---- measuring ------------------------------------------------------------------------------------
def pct(times: list[float]) -> tuple[float, float]:
    arr = np.array(times) * 1000
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def memory_now() -> dict[str, int]:
    """Bytes of this process: private anonymous memory, and file-backed resident pages (memory maps, code)."""
    out = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[0].rstrip(":") in ("Rss", "Anonymous"):
                out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return {"anon": out.get("Anonymous", 0), "file": out.get("Rss", 0) - out.get("Anonymous", 0)}


class PeakMemory:
    """Samples memory_now() every second in a thread (reading smaps costs time in a large process); keeps the
    peaks."""

    def __init__(self):
        self.anon = self.file = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while True:
            now = memory_now()
            self.anon, self.file = max(self.anon, now["anon"]), max(self.file, now["file"])
            if self._stop.wait(1.0):
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def cpu_seconds() -> float:
    """CPU time of this process so far, every thread (user + system): less sensitive than the wall clock to what
    else the machine runs, so the two builds compare on a shared machine too."""
    import resource

    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


class Pauses:
    """Counts the SIGCONTs this process receives: on a shared machine a long run may be paused from outside
    (SIGSTOP to its process group while someone else measures, SIGCONT after). A pause inflates the wall time
    of whatever was being timed, never its CPU time; a query timed across a pause is left out of the
    percentiles (counted as `paused_queries`: not timed again, which would find its pages warm), and every phase
    records how many pauses it saw."""

    count = 0

    @classmethod
    def install(cls) -> None:
        import signal

        def on_cont(signum, frame):
            cls.count += 1

        signal.signal(signal.SIGCONT, on_cont)


def write_result(workdir: Path, phase: str, data: dict, load_at_start=None) -> None:
    data = {"phase": phase, "at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "load_average": os.getloadavg(), "load_average_start": load_at_start, "pauses": Pauses.count, **data}
    with open(workdir / "results.jsonl", "a") as f:
        f.write(json.dumps(data) + "\n")


def results(workdir: Path) -> dict[str, dict]:
    path = workdir / "results.jsonl"
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["phase"]] = row
    return out


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
    started, cpu_started = time.perf_counter(), cpu_seconds()
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
    return {"seconds": time.perf_counter() - started, "cpu_seconds": cpu_seconds() - cpu_started,
            "parquet_bytes": target.stat().st_size, "embedding_dictionary": False}


# ---- 2. EcoLens's ingest --------------------------------------------------------------------------
def lists_for(n: int) -> int:
    """IVF lists: the product's default (about 2 x sqrt(N)) at scale; fewer for a tiny run, to be trainable."""
    from core.vectors.ivf import default_nlist

    return default_nlist(n) if n >= 100_000 else max(8, n // 100)


def settings_for(workdir: Path, n: int):
    from core.contracts.settings import load_settings

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
    from core.contracts.settings import Settings  # noqa: F401
    from core.search.corpus import Corpus
    from core.vectors.threads import set_threads
    from core.vectors.index_store import IndexStore
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
    started, cpu_started = time.perf_counter(), cpu_seconds()
    attempt = sum(1 for _ in open(workdir / "ingest-progress.jsonl")) if (workdir / "ingest-progress.jsonl").exists() else 0
    last = [0.0]

    def progress(done: int, total: int) -> None:  # written down as it goes: a cut-off run still tells its rate
        now = time.perf_counter()
        if now - last[0] >= 30:
            last[0] = now
            with open(workdir / "ingest-progress.jsonl", "a") as f:
                f.write(json.dumps({"at": time.strftime("%H:%M:%S", time.gmtime()), "attempt_line": attempt,
                                    "seconds": now - started, "cpu_seconds": cpu_seconds() - cpu_started,
                                    "pauses": Pauses.count, "rows_read": done, "peak_anon": peak.anon,
                                    "peak_file": peak.file, "load_average": os.getloadavg()}) + "\n")

    with PeakMemory() as peak:
        report = Ingestor(catalog, store, BenchEmbedder(), settings).run(workdir / "photos.parquet", progress)
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
    with catalog.engine.begin() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    return {"seconds": seconds, "cpu_seconds": cpu, "added": report.added, "already": report.already, "reembedded": report.reembedded,
            "index": report.index_kind, "notices": report.notices[:5], "peak_anon": peak.anon, "peak_file": peak.file}


# ---- 3. the bare build ----------------------------------------------------------------------------
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
    started, cpu_started = time.perf_counter(), cpu_seconds()
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
        trained, trained_cpu = time.perf_counter(), cpu_seconds()
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
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
    return {"seconds": seconds, "cpu_seconds": cpu, "train_seconds": trained - started,
            "train_cpu_seconds": trained_cpu - cpu_started, "add_insert_seconds": seconds - (trained - started),
            "peak_anon": peak.anon, "peak_file": peak.file}


# ---- 4. EcoLens's search --------------------------------------------------------------------------
def filters_of(workdir: Path):
    from core.contracts.records import Filters

    genus = json.loads((workdir / "genus.json").read_text())["genus"]
    return {"genus": Filters(taxon=genus), "months": Filters(months=MONTHS), "box": Filters(bbox=BOX)}


def pick_genus(workdir: Path, catalog) -> None:
    """A fairly common genus (the one at three quarters of the genera ordered by photos)."""
    names = [(n, c) for n, rank, c in catalog.taxon_names(limit=100_000) if rank == "genus"]
    names.sort(key=lambda nc: nc[1])
    (workdir / "genus.json").write_text(json.dumps({"genus": names[len(names) * 3 // 4][0]}))


def phase_search(workdir: Path, n: int) -> dict:
    settings, catalog, store, corpus = services(workdir, n)
    queries = np.load(workdir / "queries.npy")
    k = 10
    out: dict = {"k": k}
    with PeakMemory() as peak:
        t = time.perf_counter()
        index = corpus.index  # open: checks, reconcile with the catalog, memory maps
        out["open_seconds"] = time.perf_counter() - t
        out["index_kind"], out["index_size"], out["refine"] = index.approx_kind, len(index), index.refine()
        out["short_list"] = index.short_list(k, len(index))
        if not (workdir / "genus.json").exists():
            pick_genus(workdir, catalog)
        t = time.perf_counter()  # the filter columns made from the catalog (once; later only caught up)
        out["columns_ready"] = corpus.filter_columns.ready(wait=True)
        out["columns_seconds"] = time.perf_counter() - t
        out["columns_bytes"] = sum(f.stat().st_size for f in corpus.filter_columns.folder.glob("*.bin"))
        # bare FAISS interleaved query by query with EcoLens's search (its own copy of the index file, each pool's
        # selector made beforehand): on a loaded machine the separate bare phase runs at another moment's load
        import faiss

        bare = faiss.read_index(str(next((workdir / "data" / "index").glob("vectors-*.faiss.approx"))))
        found = {}
        for name, f in filters_of(workdir).items():
            pool = corpus.pool(f)
            np.save(workdir / f"pool-{name}.npy", pool)
            params, _, _bitmap = bare_params(bare, pool)
            bare_times = []
            sqlite_times = []  # the catalog's own answer, for comparison: the same photos, and its time
            for _ in range(10):
                before, t = Pauses.count, time.perf_counter()
                by_catalog = np.asarray(catalog.filter_ids(f), np.int64)
                if Pauses.count == before:
                    sqlite_times.append(time.perf_counter() - t)
            same = bool(np.array_equal(by_catalog, pool))
            # after the first query the pool (and its FAISS selector) is remembered for the filter while the
            # catalog is unchanged (core.search.pool_memo), as bare FAISS has its pool made beforehand: what
            # naming it costs each time it is not remembered (a new filter, a changed catalog) is timed apart
            anew_times = []
            for _ in range(10):
                t = time.perf_counter()
                if corpus.filter_columns.pool(f, remembered=False) is not None:
                    anew_times.append(time.perf_counter() - t)
            times, phases, ids, paused = [], {"pool": [], "rank": [], "hits": []}, [], 0
            for q in queries:
                before = Pauses.count
                t0 = time.perf_counter()
                p = corpus.pool(f)
                t1 = time.perf_counter()
                ranked = corpus.rank_vector(q, k, p)
                t2 = time.perf_counter()
                corpus.hits(ranked)
                t3 = time.perf_counter()
                ids.append([i for i, _ in ranked])
                t4 = time.perf_counter()
                bare.search(q[None, :], k, params=params)
                t5 = time.perf_counter()
                if Pauses.count != before:  # paused from outside: neither time is the search's own
                    paused += 1
                    continue
                times.append(t3 - t0)
                for ph, took in zip(phases, (t1 - t0, t2 - t1, t3 - t2)):
                    phases[ph].append(took)
                bare_times.append(t5 - t4)
            found[name] = ids
            out[name] = {"pool": int(len(pool)), "p50": pct(times)[0], "p95": pct(times)[1], "first_ms": times[0] * 1000,
                         **{f"{ph}_p50": pct(v)[0] for ph, v in phases.items()}, "catalog_pool_p50": pct(sqlite_times)[0],
                         **({"pool_anew_p50": pct(anew_times)[0]} if anew_times else {}),
                         "same_as_catalog": same, "bare_p50": pct(bare_times)[0], "bare_p95": pct(bare_times)[1],
                         "paused_queries": paused, "load_average_after": os.getloadavg()}
        times, ids, bare_times, paused = [], [], [], 0
        for q in queries:
            before = Pauses.count
            t0 = time.perf_counter()
            ranked = corpus.rank_vector(q, k, None)
            corpus.hits(ranked)
            t1 = time.perf_counter()
            ids.append([i for i, _ in ranked])
            t2 = time.perf_counter()
            bare.search(q[None, :], k)
            t3 = time.perf_counter()
            if Pauses.count != before:
                paused += 1
                continue
            times.append(t1 - t0)
            bare_times.append(t3 - t2)
        found["all"] = ids
        out["all"] = {"p50": pct(times)[0], "p95": pct(times)[1], "bare_p50": pct(bare_times)[0],
                      "bare_p95": pct(bare_times)[1], "paused_queries": paused, "load_average_after": os.getloadavg()}
    (workdir / "found.json").write_text(json.dumps(found))
    out.update(peak_anon=peak.anon, peak_file=peak.file)
    return out


# ---- 5. bare search -------------------------------------------------------------------------------
def bare_params(ivf, pool: np.ndarray):
    """FAISS's search parameters for `pool` as bare as they come: a bitmap selector made beforehand and the
    nprobe EcoLens uses for that pool; (params, nprobe, the bitmap to keep alive)."""
    import faiss

    from core.vectors.index import SMALL_POOL, SMALL_POOL_SHARE

    nprobe, nlist = ivf.nprobe, ivf.nlist
    bits = np.zeros(int(pool.max(initial=0)) + 1, dtype=bool)
    bits[pool] = True
    bitmap = np.packbits(bits, bitorder="little")
    sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
    small = len(pool) <= SMALL_POOL or len(pool) * SMALL_POOL_SHARE <= ivf.ntotal
    # a pool EcoLens scores exactly is one FAISS alone must scan every list for; others: EcoLens's rule
    probe = nlist if small else min(nlist, int(np.ceil(nprobe / (len(pool) / ivf.ntotal))))
    return faiss.SearchParametersIVF(sel=sel, nprobe=probe), probe, bitmap


def phase_bare_search(workdir: Path, n: int) -> dict:
    import faiss

    faiss.omp_set_num_threads(2)
    index_dir = workdir / "data" / "index"
    approx = next(index_dir.glob("vectors-*.faiss.approx"))
    ivf = faiss.read_index(str(approx))
    nprobe = ivf.nprobe
    queries = np.load(workdir / "queries.npy")
    k, out = 10, {}
    with PeakMemory() as peak:
        for name in ("genus", "months", "box"):
            pool = np.load(workdir / f"pool-{name}.npy")
            params, probe, _bitmap = bare_params(ivf, pool)
            times = []
            for q in queries:
                before, t = Pauses.count, time.perf_counter()
                ivf.search(q[None, :], k, params=params)
                if Pauses.count == before:  # (a query paused from outside is left out)
                    times.append(time.perf_counter() - t)
            out[name] = {"p50": pct(times)[0], "p95": pct(times)[1], "nprobe": probe, "timed": len(times)}
        times = []
        for q in queries:
            before, t = Pauses.count, time.perf_counter()
            ivf.search(q[None, :], k)
            if Pauses.count == before:
                times.append(time.perf_counter() - t)
        out["all"] = {"p50": pct(times)[0], "p95": pct(times)[1], "nprobe": nprobe, "timed": len(times)}
    out.update(peak_anon=peak.anon, peak_file=peak.file)
    return out


# ---- 6. exact -------------------------------------------------------------------------------------
def phase_exact(workdir: Path, n: int) -> dict:
    from core.vectors.half_store import HalfStore

    store_path = next((workdir / "data" / "index").glob("vectors-*.faiss.f16"))
    store = HalfStore(store_path, DIM)
    queries = np.load(workdir / "queries.npy")
    found = json.loads((workdir / "found.json").read_text())
    ids = store.ids()
    pools = {name: np.load(workdir / f"pool-{name}.npy") for name in ("genus", "months", "box")}
    k = 10
    started = time.perf_counter()
    best = {name: [np.zeros(0, np.int64)] * len(queries) for name in ["all", *pools]}
    best_s = {name: [np.zeros(0, np.float32)] * len(queries) for name in ["all", *pools]}
    chunk = 200_000
    with PeakMemory() as peak:
        for start in range(0, len(store), chunk):
            rows = np.arange(start, min(len(store), start + chunk))
            mat = store.rows_matrix(rows)
            sims = mat @ queries.T  # rows x queries
            chunk_ids = ids[rows]
            for name in best:
                keep = np.ones(len(rows), bool) if name == "all" else np.isin(chunk_ids, pools[name])
                if not keep.any():
                    continue
                s, i = sims[keep], chunk_ids[keep]
                for qi in range(len(queries)):
                    cs = np.concatenate([best_s[name][qi], s[:, qi]])
                    ci = np.concatenate([best[name][qi], i])
                    top = np.argsort(-cs, kind="stable")[:k]
                    best_s[name][qi], best[name][qi] = cs[top], ci[top]
    recall = {}
    for name in best:
        hits = [len(set(found[name][qi]) & set(best[name][qi].tolist())) / max(1, min(k, len(best[name][qi])))
                for qi in range(len(queries))]
        recall[name] = float(np.mean(hits))
    return {"seconds": time.perf_counter() - started, "recall_at_10": recall, "peak_anon": peak.anon,
            "peak_file": peak.file}


# ---- sizes ----------------------------------------------------------------------------------------
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
    return {"photos": photos, "nlist": ivf.nlist, "pq_m": ivf.pq.M, "pq_bits": ivf.pq.nbits, "index_file": approx.stat().st_size,
            "index_lists_bytes": lists, "quantizer_bytes": quantizer,
            "store_bytes": f16.stat().st_size, "store_ids_bytes": Path(str(f16) + ".ids").stat().st_size,
            "catalog_bytes": catalog_bytes, "tables": tables,
            "parquet_bytes": (workdir / "photos.parquet").stat().st_size}


# (the bare build last: the longest phase, and the one a cut-off run can most easily extrapolate)
PHASES = {"data": phase_data, "ingest": phase_ingest, "sizes": phase_sizes, "search": phase_search,
          "bare_search": phase_bare_search, "exact": phase_exact, "bare_build": phase_bare_build}


def run_phase(workdir: Path, phase: str, n: int, queries: int) -> None:
    Pauses.install()
    load = os.getloadavg()
    data = PHASES[phase](workdir, n, queries) if phase == "data" else PHASES[phase](workdir, n)
    write_result(workdir, phase, data, load)


def srch_refine(r: dict) -> str:
    if "refine" not in r.get("search", {}):
        return "re-scoring not recorded"
    if "short_list" in r["search"]:  # the short list doubles for every doubling of the candidates beyond 2M
        return f"{r['search']['refine']} x k re-scored per 2M candidates ({r['search']['short_list']} for k=10 unfiltered)"
    return f"{r['search']['refine']} x k re-scored"


def report(workdir: Path, n: int, smoke: bool) -> None:
    """Print the figures of the phases written so far (a cut-off run reports what it has)."""
    r = results(workdir)
    gb = 1e9
    if not {"ingest", "sizes"} <= set(r):
        print(f"phases finished: {', '.join(r) or 'none'}; the ingest and its sizes are needed for a report")
        return
    ing, sizes = r["ingest"], r["sizes"]
    photos = sizes["photos"]
    def load(p: str) -> str:  # the 1-minute load average at the phase's start -> end, and pauses from outside
        start = r[p].get("load_average_start")
        text = (f"{start[0]:.1f} -> " if start else "") + f"{r[p]['load_average'][0]:.1f}"
        return text + (f", paused {r[p]['pauses']}x" if r[p].get("pauses") else "")

    print(f"{photos:,} photos (1-minute load average at each phase's start -> end: "
          + "; ".join(f"{p} {load(p)}" for p in PHASES if p in r) + ")")
    line = f"build: EcoLens ingest {ing['seconds']:.0f} s ({photos / ing['seconds']:,.0f} vectors/s)"
    if ing["already"] or ing["reembedded"]:  # a resumed run: this attempt's time covers only its part
        line += f" [resumed: {ing['already']:,} photos indexed by an earlier attempt, {ing['reembedded']:,} re-added]"
    ratio = None
    if "bare_build" in r:
        bare = r["bare_build"]
        ratio = bare["seconds"] / ing["seconds"]
        line += (f" vs bare FAISS add + SQLite insert {bare['seconds']:.0f} s ({photos / bare['seconds']:,.0f} vectors/s;"
                 f" training {bare['train_seconds']:.0f} s of it) | speed ratio {ratio:.2f} (goal >= 0.8)")
        if "cpu_seconds" in ing and "cpu_seconds" in bare:  # (runs before these were recorded have none)
            line += (f" | CPU seconds (user + system, every thread) {ing['cpu_seconds']:.0f} vs {bare['cpu_seconds']:.0f}"
                     + (f" (training {bare['train_cpu_seconds']:.0f})" if "train_cpu_seconds" in bare else "")
                     + f", ratio {bare['cpu_seconds'] / ing['cpu_seconds']:.2f}")
    print(line)
    mem = f"peak private memory: EcoLens ingest {ing['peak_anon'] / gb:.2f} GB (file-backed {ing['peak_file'] / gb:.2f} GB apart)"
    for phase, label in (("search", "EcoLens search"), ("bare_build", "bare build"), ("bare_search", "bare search"),
                         ("exact", "exact")):
        if phase in r:
            mem += f", {label} {r[phase]['peak_anon'] / gb:.2f} GB (file-backed {r[phase]['peak_file'] / gb:.2f})"
    print(mem + " (goal <= 12 GB)")
    print(f"index: IVF{sizes['nlist']},PQ{sizes['pq_m']}x{sizes.get('pq_bits', 8)}, {srch_refine(r)}")
    print(f"bytes per photo: compressed index {sizes['index_lists_bytes'] / photos:.1f} in its lists + coarse "
          f"quantizer and codebooks {sizes['quantizer_bytes'] / 1e6:.1f} MB (file {sizes['index_file'] / photos:.1f}; "
          f"goal <= 32) | float16 store {(sizes['store_bytes'] + sizes['store_ids_bytes']) / photos:.0f} on disk | "
          f"catalog {sizes['catalog_bytes'] / photos:.0f} (goal <= 250)")
    if sizes["tables"]:
        print("    catalog by table and index (bytes per photo): " + ", ".join(
            f"{name} {size / photos:.1f}" for name, size in sizes["tables"].items() if size / photos >= 0.5))
    print(f"on disk: parquet {sizes['parquet_bytes'] / gb:.2f} GB, catalog {sizes['catalog_bytes'] / gb:.2f} GB, "
          f"index {sizes['index_file'] / gb:.2f} GB, float16 store {sizes['store_bytes'] / gb:.2f} GB")
    if not {"search", "bare_search"} <= set(r):
        return
    srch, bsrch = r["search"], r["bare_search"]

    def after(o: dict) -> str:  # the load when these searches ended, and queries left out for a pause
        if "load_average_after" not in o:
            return ""
        return (f" | load average {o['load_average_after'][0]:.1f} after"
                + (f", {o['paused_queries']} queries paused from outside left out" if o["paused_queries"] else ""))
    recall = r["exact"]["recall_at_10"] if "exact" in r else {}
    for name in ("genus", "months", "box"):
        o, b = srch[name], bsrch[name]
        print(f"filter {name:6s} pool {o['pool']:>9,} | bare faiss p50 {b['p50']:7.1f} ms p95 {b['p95']:7.1f} ms "
              f"(nprobe {b['nprobe']}) | EcoLens p50 {o['p50']:7.1f} ms p95 {o['p95']:7.1f} ms | ratio p50 "
              f"{o['p50'] / b['p50']:.2f} p95 {o['p95'] / b['p95']:.2f} (goal <= 2) | recall@10 "
              f"{recall.get(name, float('nan')):.3f}")
        source = "filter columns" if srch.get("columns_ready") else "SQLite"
        line = (f"    EcoLens p50 by phase: pool ({source}) {o['pool_p50']:.1f} ms, rank {o['rank_p50']:.1f} ms, hits "
                f"{o['hits_p50']:.1f} ms; first query {o['first_ms']:.1f} ms"
                + (f"; the pool made anew (not remembered) p50 {o['pool_anew_p50']:.1f} ms" if "pool_anew_p50" in o
                   else ""))
        if "catalog_pool_p50" in o:
            line += (f" | the catalog's own pool (SQLite) p50 {o['catalog_pool_p50']:.1f} ms, "
                     f"{'the same photos' if o['same_as_catalog'] else 'OTHER PHOTOS THAN THE COLUMNS'}")
        print(line)
        if "bare_p50" in o:
            print(f"    interleaved query by query with bare faiss in the same process: bare p50 {o['bare_p50']:.1f} ms "
                  f"p95 {o['bare_p95']:.1f} ms | ratio p50 {o['p50'] / o['bare_p50']:.2f} p95 "
                  f"{o['p95'] / o['bare_p95']:.2f} (goal <= 2)" + after(o))
    if "columns_seconds" in srch:
        print(f"filter columns: {'made' if srch['columns_ready'] else 'NOT made (SQLite answered)'} from the catalog "
              f"in {srch['columns_seconds']:.1f} s before the searches"
              + (f", {srch['columns_bytes'] / photos:.0f} bytes a photo on disk" if "columns_bytes" in srch else ""))
    a, b = srch["all"], bsrch["all"]
    print(f"unfiltered: EcoLens IVF-PQ + float16 re-scoring p50 {a['p50']:.1f} ms p95 {a['p95']:.1f} ms (goal <= 50) "
          f"recall@10 {recall.get('all', float('nan')):.3f} (goal >= 0.95) | bare IVF-PQ p50 {b['p50']:.1f} ms p95 "
          f"{b['p95']:.1f} ms (nprobe {b['nprobe']})")
    if "bare_p50" in a:
        print(f"    interleaved with bare IVF-PQ in the same process: bare p50 {a['bare_p50']:.1f} ms p95 "
              f"{a['bare_p95']:.1f} ms" + after(a))
    peak = max(r[p]["peak_anon"] for p in ("ingest", "search"))
    apart = max(srch[name]["p95"] / bsrch[name]["p95"] for name in ("genus", "months", "box"))
    together = (max(srch[name]["p95"] / srch[name]["bare_p95"] for name in ("genus", "months", "box"))
                if all("bare_p95" in srch[name] for name in ("genus", "months", "box")) else float("nan"))
    print(f"RESULT photos={photos} build_ratio={'n/a' if ratio is None else f'{ratio:.2f}'} "
          f"filtered_p95_ratio_max={apart:.2f} filtered_p95_ratio_max_interleaved={together:.2f} "
          f"peak_private_gb={peak / gb:.2f} index_bpp={sizes['index_lists_bytes'] / photos:.1f} "
          f"catalog_bpp={sizes['catalog_bytes'] / photos:.0f} unfiltered_p95_ms={a['p95']:.1f} "
          f"recall10={recall.get('all', float('nan')):.3f}" + (" (smoke: goals not judged)" if smoke else ""), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--photos", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--workdir", type=Path, help="where the parquet, the data directory and results.jsonl go "
                    "(reused: finished phases are skipped); default a temporary folder")
    ap.add_argument("--phase", choices=list(PHASES), help=argparse.SUPPRESS)  # one phase, in this process
    ap.add_argument("--redo", default="", help="comma-separated phases to run again")
    ap.add_argument("--report", action="store_true", help="only print the figures of the phases done so far")
    ap.add_argument("--smoke", action="store_true", help="a tiny run (3,000 photos, 5 queries) that checks the "
                    "bench works")
    args = ap.parse_args()
    if args.smoke:
        args.photos, args.queries = 3000, 5
    if args.phase:
        run_phase(args.workdir, args.phase, args.photos, args.queries)
        return
    if args.report:
        report(args.workdir, args.photos, args.smoke)
        return
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        redo = {p for p in args.redo.split(",") if p}
        for phase in PHASES:
            done = results(workdir)
            if phase in done and phase not in redo:
                print(f"[{phase}] done earlier ({done[phase]['at']})", flush=True)
                continue
            print(f"[{phase}] {time.strftime('%H:%M:%S')} load average {os.getloadavg()[0]:.1f}", flush=True)
            cmd = [sys.executable, __file__, "--phase", phase, "--workdir", str(workdir), "--photos", str(args.photos),
                   "--queries", str(args.queries)]
            subprocess.run(cmd, check=True)
        report(workdir, args.photos, args.smoke)


if __name__ == "__main__":
    main()
