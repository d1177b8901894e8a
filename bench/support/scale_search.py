"""The search phases of bench/scale.py: EcoLens's filtered and unfiltered search (with bare FAISS interleaved),
bare FAISS search on the same index file, and exact search for recall@10."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from bench.support.measure import Pauses, PeakMemory, pct
from bench.support.scale_build import DIM, services

BOX = (-40.0, 15.0, 40.0, 65.0)
MONTHS = (5, 6)


# ---- 3. EcoLens's search --------------------------------------------------------------------------
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
        # the float16 store read into the file cache in the background since the index opened
        # (core.vectors.warm_up): whether that pass had ended when the first timed search began
        warm = corpus.warm_up
        out["warm_up"] = {"started": warm is not None, "ended_before_searches": bool(warm and warm.done.is_set()),
                          "mb_read": (warm.read / 1e6) if warm else 0.0}
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
            out[name] = {"pool": int(len(pool)), "p50": pct(times)[0], "p95": pct(times)[1],
                         "first_ms": times[0] * 1000, **{f"{ph}_p50": pct(v)[0] for ph, v in phases.items()},
                         "catalog_pool_p50": pct(sqlite_times)[0],
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
    if warm is not None:
        warm.done.wait()
        out["warm_up"].update(mb=warm.read / 1e6, seconds=warm.seconds)
    (workdir / "found.json").write_text(json.dumps(found))
    out.update(peak_anon=peak.anon, peak_file=peak.file)
    return out


# ---- 4. bare search -------------------------------------------------------------------------------
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


# ---- 5. exact -------------------------------------------------------------------------------------
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
