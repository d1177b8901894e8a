"""Benchmark: many people at once. N sessions (one gradio_client each, as N browser pages) run M searches each
through the real web server, a mix of 60% Fast, 15% Visualize, 15% Verify and 10% Cover (--mix), and label photos of
their results through /label between searches. Prints per preset p50 / p95 alone (one search at a time on an
idle server) and under load, the Fast p95 ratio (goal <= 2 with --think, 3 back to back), errors, labels confirmed
by the API against labels stored in SQLite, and the load average. Bounded in count (N x M searches) and in time
(--time-limit).

    python bench/load.py [--sessions 20] [--searches 10] [--labels 5]
    ECOLENS_DATA_DIR=/some/data python bench/load.py   # that data directory
    python bench/load.py --url http://127.0.0.1:7860/ --data-dir /some/data
    python bench/load.py --smoke   # 2 sessions x 2 searches, a tiny world
    python bench/load.py --mix Fast=100 --labels 0   # Fast searches only
    python bench/load.py --servers 2   # experiment: sessions split over 2 servers
    python bench/load.py --serve 2   # through `app.py serve --processes 2` (nginx)

Without --url it starts its own server (python app.py) on a free port: on $ECOLENS_DATA_DIR with the caller's
ECOLENS_* settings when that is set, else on a fresh temporary data directory holding the field-guide world
with the offline stand-in models. --workers off|on|auto sets that server's `workers` setting; a list
(--workers off,on --rounds 2) measures each in turn on the same data, interleaved, so that both see the same
machine. The last line is machine-readable: RESULT fast_p95_ratio=<float> errors=<int> labels_lost=<int>
(with a list: the median ratio and the sums over the runs of the last setting listed)."""
from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from bench.isolation import free_port, wait_for_app
from bench.support.clients import set_client_poll, tls_context
from bench.support.load_report import pct, report
from bench.support.process_cpu import CpuShare

ROOT = Path(__file__).resolve().parents[1]
MIX = (("Fast", 60), ("Visualize", 15), ("Verify", 15), ("Cover", 10))
QUERIES = ["a frog calling", "a moth on bark", "a bird carrying a twig", "a beetle on a leaf", "a flower in bud",
           "a red bird perched", "a caterpillar feeding", "a tadpole swimming", "a bird in flight",
           "a yellow flower open"]
HTTP_TIMEOUT_S = 120
STOPPED_EARLY = "a later step failed"  # ui/strings.py STOPPED_EARLY: the search failed after its first results


def form(preset: str) -> list:
    """The /search inputs after the query: preset, k, m, rerank_k, rerank mode, answer, taxon, dates, months,
    box, licence, example photo (the web app's defaults: 3 pictures, 20 photos judged)."""
    return [preset, 20, 3, 20, "full", False, "", "", "", [], "", "", None]


def start_app(data: Path, inherit: bool, workers: str | None, log_path: Path,
              root: Path = ROOT, serve: int = 0) -> tuple[subprocess.Popen, str]:
    """python app.py of the checkout at `root` on a free port over `data`; `inherit`: keep the caller's ECOLENS_*
    settings."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if inherit or not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(data), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False",
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    if workers:
        env["ECOLENS_WORKERS"] = workers
    with open(log_path, "w") as log:
        # --serve N: `python app.py serve --processes N` (nginx in front of N web processes)
        command = ["serve", "--processes", str(serve)] if serve else []
        proc = subprocess.Popen([sys.executable, str(root / "app.py"), "--port", str(port), *command], cwd=root,
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    return proc, wait_for_app(proc, port, 600, str(log_path))


class Load:
    """What the sessions share: the URL, the limits, and what they measured."""

    def __init__(self, urls: list[str], deadline: float, search_timeout: float, labels: int, run_id: str,
                 think: float = 0.0, client_nice: int = 0, sessions: int = 1, mix=MIX):
        # session n keeps to server n % len(urls) (several only with --servers), as a sticky proxy would
        self.urls, self.deadline, self.search_timeout, self.think = urls, deadline, search_timeout, think
        self.mix = tuple((name, weight) for name, weight in mix if weight > 0)  # the presets the sessions search
        self.labels, self.run_id, self.client_nice = labels, run_id, client_nice
        # every page is open before the first search is timed (the sessions and the bench's main thread)
        self.opened = threading.Barrier(sessions + 1)
        self.open_times: list[float] = []
        self.times: dict[str, list[float]] = {name: [] for name, _ in MIX}
        self.errors: list[str] = []
        self.confirmed: list[int] = []  # label ids the API returned
        self.label_times: list[float] = []  # seconds of each confirmed label call
        self.lock = threading.Lock()

    def lower_priority(self) -> None:
        """This client thread (and the threads gradio_client starts from it) at nice +client_nice: the people's
        browsers do not run on the server's CPU; here they share its two cores, and give way to it."""
        if self.client_nice:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.client_nice)

    def open_page(self, client) -> None:
        """What a page load does before its first search: the session's first call, which makes the server set
        up that session's state (timed apart: `open_times`)."""
        t0 = time.perf_counter()
        client.predict(api_name="/stop")
        with self.lock:
            self.open_times.append(time.perf_counter() - t0)

    def client(self, number: int = 0):
        from gradio_client import Client

        # a loaded 2-core machine answers slowly: httpx's 5 s default would count slowness as errors.
        # gradio_client makes a new httpx client for every call, and each one built a TLS context of its own
        # (loading the CA bundle, ~40 ms of CPU), even for http://127.0.0.1: that was 82% of the bench's CPU
        # (py-spy), taken from the server's two cores. One context shared by every call, as a browser keeps its
        # TLS settings, with the same certificate checks.
        # (gradio_client hands ssl_verify to httpx as its `verify`, which takes a context)
        return Client(self.urls[number % len(self.urls)], verbose=False, download_files=False, analytics_enabled=False,
                      ssl_verify=tls_context(), httpx_kwargs={"timeout": HTTP_TIMEOUT_S})

    def search(self, client, preset: str, query: str) -> tuple[float, dict | None]:
        """One search: its seconds and its result JSON, or None after an error (recorded)."""
        t0 = time.perf_counter()
        try:
            job = client.submit(query, *form(preset), api_name="/search")
            out = job.result(timeout=self.search_timeout)
        except Exception as exc:  # a refused or failed call, or no answer in time: an error of the run
            with self.lock:
                self.errors.append(f"{preset} {query!r}: {type(exc).__name__}: {str(exc)[:200]}")
            return time.perf_counter() - t0, None
        seconds = time.perf_counter() - t0
        result = out[8] if isinstance(out, (list, tuple)) and len(out) > 8 else None
        if not isinstance(result, dict) or STOPPED_EARLY in str(result.get("status", "")):
            with self.lock:
                self.errors.append(f"{preset} {query!r}: {str(result)[:200] if result else 'no result'}")
            return seconds, None
        return seconds, result

    def session(self, number: int, searches: int) -> None:
        rng = random.Random(f"load:{number}")
        self.lower_priority()
        try:
            client = self.client(number)
            self.open_page(client)
        except Exception as exc:
            with self.lock:
                self.errors.append(f"session {number}: no client: {exc}")
            self.opened.abort()  # the others go on without waiting for this one
            return
        try:
            self.opened.wait(timeout=self.search_timeout)
        except threading.BrokenBarrierError:
            pass
        names, weights = zip(*self.mix)
        for i in range(searches):
            if time.monotonic() > self.deadline:
                return
            if self.think:  # a person reads the results before the next search (exponential, mean --think)
                time.sleep(rng.expovariate(1.0 / self.think))
            preset = rng.choices(names, weights)[0]
            # distinct text, in this run and from every other run on the same data: no answer from the cache
            query = f"{rng.choice(QUERIES)} {number}-{i} {self.run_id}"
            seconds, result = self.search(client, preset, query)
            if result is None:
                continue
            with self.lock:
                self.times[preset].append(seconds)
            for hit in (result.get("results") or [])[:self.labels]:
                try:
                    t0 = time.perf_counter()
                    label_id = client.predict(query, int(hit["id"]), rng.choice([0, 1]),
                                              f"load-{self.run_id}-s{number}", 1.0, api_name="/label")
                    with self.lock:
                        self.label_times.append(time.perf_counter() - t0)
                        self.confirmed.append(int(label_id))
                except Exception as exc:
                    with self.lock:
                        self.errors.append(f"label {hit.get('id')}: {type(exc).__name__}: {str(exc)[:200]}")


def stored_labels(data: Path | None, run_id: str) -> set[int] | None:
    """The ids of this run's labels in the session log, read with sqlite3 as an outside observer would."""
    if data is None or not (data / "ecolens.sqlite").is_file():
        return None
    with sqlite3.connect(f"file:{data / 'ecolens.sqlite'}?mode=ro", uri=True, timeout=30) as db:
        rows = db.execute("SELECT id FROM labels WHERE annotator LIKE ?", (f"load-{run_id}-%",)).fetchall()
    return {int(r[0]) for r in rows}


def build_world(data: Path, per_species: int) -> None:
    """The field-guide world in `data`, built and ingested here (the server then starts on a ready catalog)."""
    from app import build_services
    from core.config import load_settings
    from fieldguide.world import build_world as draw

    services = build_services(load_settings(environ={}, data_dir=str(data)))
    services.ingestor().run(draw(data / "fieldguide", per_species=per_species, benchmark=False))


def alone(load: Load, idle: int) -> None:
    """Each preset on an idle server, one search at a time (Fast `idle` times, the others a third of that), from
    a thread at the sessions' priority."""
    thread = threading.Thread(target=_alone, args=(load, idle), daemon=True)
    thread.start()
    thread.join()


def _alone(load: Load, idle: int) -> None:
    load.lower_priority()
    client = load.client()
    load.open_page(client)
    for name, _ in MIX:
        # models and workers loaded before anything is timed
        load.search(client, name, f"warm up {name} {load.run_id}")
    for name, _ in MIX:
        for i in range(idle if name == "Fast" else max(1, idle // 3)):
            seconds, result = load.search(client, name, f"{QUERIES[i % len(QUERIES)]} alone {i} {load.run_id}")
            if result is not None:
                load.times[name].append(seconds)


def parse_mix(text: str) -> tuple[tuple[str, int], ...]:
    """'Fast=60,Verify=40' as ((preset, weight), ...); SystemExit naming what is wrong."""
    known = {name for name, _ in MIX}
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, weight = part.partition("=")
        if name.strip() not in known or not weight.strip().isdigit():
            raise SystemExit(f"--mix takes PRESET=WEIGHT pairs of {', '.join(sorted(known))} (e.g. Fast=100), "
                             f"not {part!r}")
        out.append((name.strip(), int(weight)))
    if not out or not any(w for _, w in out):
        raise SystemExit("--mix needs at least one preset with a weight above 0")
    return tuple(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=20, help="sessions at once (browser pages)")
    ap.add_argument("--searches", type=int, default=10, help="searches per session")
    ap.add_argument("--labels", type=int, default=5, help="photos each session labels after each search")
    ap.add_argument("--think", type=float, default=0.0, help="mean seconds a session waits before each search "
                    "(a person reading results); 0: back to back, the goal's condition")
    ap.add_argument("--idle", type=int, default=40, help="Fast searches measured alone (the others: a third); "
                    "the ratio's denominator is their p95, so fewer make it the slowest of a handful")
    ap.add_argument("--per-species", type=int, default=40, help="pictures per species of the world it builds")
    ap.add_argument("--url", help="a running EcoLens web app instead of starting one")
    ap.add_argument("--data-dir", help="with --url: that app's data directory (to count stored labels)")
    ap.add_argument("--workers", default="",
                    help="the started server's workers setting: auto, on or off; a list (off,on) measures each in "
                         "turn on the same data, --rounds times, interleaved (the last one listed gives RESULT)")
    ap.add_argument("--rounds", type=int, default=1, help="with a list of --workers: rounds of the list")
    ap.add_argument("--time-limit", type=float, default=1800, help="seconds the loaded phase may take")
    ap.add_argument("--search-timeout", type=float, default=300, help="seconds one search may take")
    ap.add_argument("--client-nice", type=int, default=10, help="nice value of the bench's client threads (0-19): "
                    "people's browsers do not share the server's CPU; 0 gives them the server's own priority")
    ap.add_argument("--baseline", help="another checkout (e.g. a copy of main) whose app.py is measured in turn "
                    "with this one, each round, on the same data and machine; RESULT is this checkout's")
    ap.add_argument("--client-poll", type=float, default=0.05,
                    help="seconds between gradio_client's looks for a call's next message: 0.05 is its own (each "
                         "measured call rounded up by up to that, per message); 0.005 measures to 5 ms, at the cost "
                         "of some client CPU")
    ap.add_argument("--mix", default=",".join(f"{n}={w}" for n, w in MIX),
                    help="what the sessions search, as PRESET=WEIGHT pairs; e.g. Fast=100 --labels 0 shows what Fast "
                         "searches alone do to each other on the one web server")
    ap.add_argument("--serve", type=int, default=0, metavar="N",
                    help="serve the app as `python app.py serve --processes N` (N >= 2: behind nginx; its CPU: the "
                         "server and workers columns together)")
    ap.add_argument("--servers", type=int, default=1,
                    help="an experiment, not how EcoLens is deployed: start this many web servers (python app.py) on "
                         "the one data directory, session n keeping to server n modulo this, as a proxy that keeps "
                         "each session on one process would do at no cost of its own (each server has its own "
                         "model workers); Fast alone is measured on the first")
    ap.add_argument("--smoke", action="store_true", help="2 sessions x 2 searches on a tiny world")
    args = ap.parse_args()
    if args.smoke:
        args.sessions, args.searches, args.labels, args.idle, args.per_species = 2, 2, 2, 3, 1
    choices = [w.strip() for w in args.workers.split(",") if w.strip()] or [""]
    if any(w not in ("", "auto", "on", "off") for w in choices):
        raise SystemExit(f"--workers takes auto, on or off (or a list of them), not {args.workers!r}")
    if args.url and (len(choices) > 1 or choices[0] or args.baseline):
        raise SystemExit("--workers and --baseline set the server this bench starts; not the one at --url")
    if not 1 <= args.servers <= 8:
        raise SystemExit("--servers takes 1 to 8")
    if args.url and args.servers != 1:
        raise SystemExit("--servers starts the servers itself; not with --url")
    if not 0 <= args.client_nice <= 19:
        raise SystemExit("--client-nice takes 0 to 19")
    if not 0.001 <= args.client_poll <= 0.05:
        raise SystemExit("--client-poll takes 0.001 to 0.05 (seconds)")
    args.mix = parse_mix(args.mix)
    set_client_poll(args.client_poll)
    roots = [("baseline", Path(args.baseline).resolve()), ("this", ROOT)] if args.baseline else [("this", ROOT)]
    tmp = None
    data = Path(args.data_dir) if args.data_dir else None
    given = os.environ.get("ECOLENS_DATA_DIR")
    runs: list[tuple[str, str, dict]] = []
    try:
        if not args.url:
            if given:
                data = Path(given)
            else:
                tmp = tempfile.TemporaryDirectory()
                data = Path(tmp.name)
                build_world(data, args.per_species)
        for _ in range(max(1, args.rounds) if len(choices) > 1 or args.baseline else 1):
            for workers in choices:
                for name, root in roots:
                    figures = measure(args, data, workers, bool(given), root)
                    report(args, workers, figures, name if args.baseline else "")
                    runs.append((name, workers, figures))
    finally:
        if tmp is not None:
            tmp.cleanup()
    if len(runs) > 1:
        print("Fast p95 ratio per run: " + ", ".join(
            f"{name + ' ' if args.baseline else ''}workers={w or 'default'} {f['ratio']:.2f}" for name, w, f in runs))
    last = [f for name, w, f in runs if w == choices[-1] and name == "this"]
    ratio = statistics.median(f["ratio"] for f in last)
    print(f"RESULT fast_p95_ratio={ratio:.2f} errors={sum(f['errors'] for f in last)} "
          f"labels_lost={sum(f['lost'] for f in last)}")


def measure(args, data: Path | None, workers: str, inherit: bool, root: Path = ROOT) -> dict:
    """One measurement: each preset alone, then the sessions at once, on the server at --url or on one
    started here over `data` (with `workers`)."""
    run_id = uuid.uuid4().hex[:8]
    procs: list[subprocess.Popen] = []
    try:
        if args.url:
            urls = [args.url]
        else:
            for i in range(args.servers):  # (one unless --servers: an experiment, see its help)
                procs.append(start_app(data, inherit, workers, data.parent / f"load-server-{run_id}-{i}.log", root,
                                       args.serve))
            urls = [u for _, u in procs]
        idle_load = Load(urls[:1], time.monotonic() + args.time_limit, args.search_timeout, 0, run_id,
                         client_nice=args.client_nice)
        alone(idle_load, args.idle)
        load = Load(urls, time.monotonic() + args.time_limit, args.search_timeout, args.labels, run_id, args.think,
                    args.client_nice, args.sessions, args.mix)
        samples: list[float] = []
        threads = [threading.Thread(target=load.session, args=(n, args.searches), daemon=True)
                   for n in range(args.sessions)]
        for t in threads:
            t.start()
        try:
            load.opened.wait(timeout=args.search_timeout)
        except threading.BrokenBarrierError:  # a session could not open its page (an error of the run)
            pass
        cpus = [CpuShare(proc.pid) for proc, _ in procs] or [CpuShare(None)]
        t0 = time.monotonic()
        while True:
            alive = [t for t in threads if t.is_alive()]
            if not alive:
                break
            samples.append(os.getloadavg()[0])
            for cpu in cpus:
                cpu.sample()
            alive[0].join(timeout=2.0)  # a load-average sample every 2 s at most
        wall = time.monotonic() - t0
        shares = [cpu.finish() for cpu in cpus]
        used = {"clients": shares[0]["clients"]}  # (each share counted this process: once is right)
        for part in ("server", "workers"):
            used[part] = None if shares[0][part] is None else sum(sh[part] for sh in shares)
        if args.serve and used["server"] is not None:  # serve's children: nginx, the web processes, the pool
            used = {"clients": used["clients"], "server": used["server"] + (used["workers"] or 0.0), "workers": None}
        stored = stored_labels(data, run_id)
    finally:
        for proc, _ in procs:
            proc.terminate()
        for proc, _ in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    errors = idle_load.errors + load.errors
    return {"alone": idle_load.times, "loaded": load.times, "opened": load.open_times, "wall": wall,
            "samples": samples, "errors": len(errors), "error_lines": errors, "cpu": used,
            "confirmed": len(load.confirmed), "stored": stored, "label_times": load.label_times,
            "lost": len(set(load.confirmed) - stored) if stored is not None else 0,  # confirmed, not stored
            "ratio": pct(load.times["Fast"], 95) / pct(idle_load.times["Fast"], 95)}


if __name__ == "__main__":
    main()
