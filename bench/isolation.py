"""Benchmark: does a cheap search wait behind expensive ones? Fast-search latency through the real web server
(gradio_client, /search), measured alone and then while four Verify searches (four browser sessions) wait on a
judge that never answers (a local server that accepts connections and stays silent). Prints p50 / p95 of both
and their ratio (goal: p95 ratio <= 2).

    python bench/isolation.py [--n 30] [--per-species 10]
    python bench/isolation.py --smoke   # a tiny run for the test suite
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from tests.live_server import free_port

ROOT = Path(__file__).resolve().parents[1]

FORM = ["Fast", 10, 1, 20, "full", False, "", "", "", [], "", "", None]  # preset, k, m, rerank_k, mode, ...
QUERIES = ["a frog calling", "a moth on bark", "a bird in flight", "a beetle on a leaf", "a flower in bud"]


def silent_judge() -> tuple[socket.socket, int]:
    """A server that accepts every connection and never answers (a hung vision-language model)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)  # keep it open, say nothing
    threading.Thread(target=accept, daemon=True).start()
    return server, server.getsockname()[1]


def start_app(data: Path, judge_port: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(data), ECOLENS_JUDGE="openai", ECOLENS_OPENAI_API_KEY="unused",
               ECOLENS_OPENAI_BASE_URL=f"http://127.0.0.1:{judge_port}/v1", ECOLENS_BACKEND_RETRIES="0",
               ECOLENS_BACKEND_TIMEOUT_S="600", HF_HUB_OFFLINE="1")
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, wait_for_app(proc, port, 300, "")


def wait_for_app(proc: subprocess.Popen, port: int, timeout_s: float, log_path: str) -> str:
    """The app's URL once `proc` answers on `port`; SystemExit when it stops or does not answer in time (its
    log, if it has one, says why)."""
    url = f"http://127.0.0.1:{port}/"
    see = f"; see {log_path}" if log_path else ""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the app stopped (exit {proc.returncode}){see}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"the app did not start within {timeout_s:.0f} s{see}")


def fast_latencies(client, n: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        client.predict(QUERIES[i % len(QUERIES)] + f" {i}", *FORM, api_name="/search")
        out.append(time.perf_counter() - t0)
    return out


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=30, help="Fast searches per measurement")
    ap.add_argument("--per-species", type=int, default=10, help="pictures per species in the world")
    ap.add_argument("--smoke", action="store_true",
                    help="a tiny run (3 searches each, 1 picture per species) that checks the bench works")
    args = ap.parse_args()
    if args.smoke:
        args.n, args.per_species = 3, 1
    from gradio_client import Client

    from fieldguide.world import build_world

    judge, judge_port = silent_judge()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        from app import build_services
        from core.config import load_settings

        services = build_services(load_settings(environ={}, data_dir=str(data)))
        services.ingestor().run(build_world(data / "fieldguide", per_species=args.per_species, benchmark=False))
        proc, url = start_app(data, judge_port)
        try:
            fast = Client(url, verbose=False, download_files=False)
            fast.predict("warm up", *FORM, api_name="/search")  # the collection is already built: no waiting
            alone = fast_latencies(fast, args.n)
            heavy = []
            for i in range(4):  # four other users, each with a Verify search that waits on the silent judge
                c = Client(url, verbose=False, download_files=False)
                heavy.append(c.submit(f"a bird carrying a twig {i}", "Verify", 10, 1, 20, "full", False, "", "", "",
                                      [], "", "", None, api_name="/search"))
            time.sleep(3)  # they are past their first results and waiting on the judge now
            waiting = sum(1 for job in heavy if not job.done())
            loaded = fast_latencies(fast, args.n)
            photos = services.catalog.count()
        finally:
            proc.terminate()
            proc.wait(20)
            judge.close()
    a50, a95, l50, l95 = p(alone, 50), p(alone, 95), p(loaded, 50), p(loaded, 95)
    print(f"Fast search through the web server, {args.n} searches each, {photos} photos")
    print(f"  alone:                                p50 {a50 * 1000:7.1f} ms   p95 {a95 * 1000:7.1f} ms")
    print(f"  with {waiting} Verify searches on a hung judge: p50 {l50 * 1000:7.1f} ms   p95 {l95 * 1000:7.1f} ms")
    print(f"  ratio (loaded / alone):               p50 {l50 / a50:7.2f}      p95 {l95 / a95:7.2f}   (goal p95 <= 2)")


if __name__ == "__main__":
    main()
