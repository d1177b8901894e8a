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
   12-bit codes, about 2 x sqrt(N) lists, 64 x k re-scored), no flat copy and the float16 re-scoring store: the
   index is trained first on a sample of the file and every vector goes straight into it. Peak private
   (anonymous) memory of the process, file-backed pages of memory maps counted apart (/proc/self/smaps_rollup, sampled).
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
recall@10 >= 0.95, build >= 0.8x the bare add+insert, compressed index <= 32 B/photo, catalog <= 250 B/photo.
This file runs the phases and reports; the phases are in bench/support/scale_build.py and scale_search.py, what
they measure with in bench/support/measure.py and results.jsonl in bench/support/phase_results.py."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Why: on a machine shared with other jobs, OpenMP threads that spin while they wait for one another burn the
# time slices the other thread needs; waiting passively costs little when the cores are free. Set before FAISS
# loads (the same for EcoLens's phases and the bare ones); an explicit OMP_WAIT_POLICY is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from bench.support.measure import Pauses  # noqa: E402
from bench.support.phase_results import results, write_result  # noqa: E402
from bench.support.scale_build import phase_bare_build, phase_data, phase_ingest, phase_sizes  # noqa: E402
from bench.support.scale_search import phase_bare_search, phase_exact, phase_search  # noqa: E402

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
        return (f"{r['search']['refine']} x k re-scored per 2M candidates ({r['search']['short_list']} for k=10 "
                "unfiltered)")
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
        line += (f" vs bare FAISS add + SQLite insert {bare['seconds']:.0f} s "
                 f"({photos / bare['seconds']:,.0f} vectors/s;"
                 f" training {bare['train_seconds']:.0f} s of it) | speed ratio {ratio:.2f} (goal >= 0.8)")
        if "cpu_seconds" in ing and "cpu_seconds" in bare:  # (runs before these were recorded have none)
            line += (f" | CPU seconds (user + system, every thread) {ing['cpu_seconds']:.0f} "
                     f"vs {bare['cpu_seconds']:.0f}"
                     + (f" (training {bare['train_cpu_seconds']:.0f})" if "train_cpu_seconds" in bare else "")
                     + f", ratio {bare['cpu_seconds'] / ing['cpu_seconds']:.2f}")
    print(line)
    mem = (f"peak private memory: EcoLens ingest {ing['peak_anon'] / gb:.2f} GB "
           f"(file-backed {ing['peak_file'] / gb:.2f} GB apart)")
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
            print("    interleaved query by query with bare faiss in the same process: "
                  f"bare p50 {o['bare_p50']:.1f} ms "
                  f"p95 {o['bare_p95']:.1f} ms | ratio p50 {o['p50'] / o['bare_p50']:.2f} p95 "
                  f"{o['p95'] / o['bare_p95']:.2f} (goal <= 2)" + after(o))
    if "columns_seconds" in srch:
        print(f"filter columns: {'made' if srch['columns_ready'] else 'NOT made (SQLite answered)'} from the catalog "
              f"in {srch['columns_seconds']:.1f} s before the searches"
              + (f", {srch['columns_bytes'] / photos:.0f} bytes a photo on disk" if "columns_bytes" in srch else ""))
    if "warm_up" in srch:
        w = srch["warm_up"]
        print("float16 store read into the file cache at open (core.vectors.warm_up): " + (
            "not started (off, nothing to read, or too large for the memory available)" if not w["started"] else
            f"{w.get('mb', w['mb_read']):,.0f} MB in {w.get('seconds', float('nan')):.1f} s, "
            + ("ended before the first timed search" if w["ended_before_searches"] else
               f"still reading when the searches began ({w['mb_read']:,.0f} MB read by then)")))
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
          f"recall10={recall.get('all', float('nan')):.3f}" + (" (smoke: goals not judged)" if smoke else ""),
          flush=True)


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
