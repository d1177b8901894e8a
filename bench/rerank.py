"""Benchmark: structured rerank of 100 candidates x 3 sub-questions against a local OpenAI-compatible judge
server that answers every call after 200 ms (with log-probabilities), through the real OpenAIJudge.

Prints the wall time, the sequential sum of the calls' latencies and their ratio (goal <= 1/8).

    python bench/rerank.py [--concurrency 16] [--delay 0.2] [--candidates 100]
    python bench/rerank.py --smoke   # tiny run for the test suite; goal not judged
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from tests.standin_servers import JudgeServer

ROOT = Path(__file__).resolve().parents[1]

QUERY = "a moth with red hindwings resting on bark"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--smoke", action="store_true",
                    help="a tiny run (8 candidates, 20 ms calls) that checks the bench works; the goal is not judged")
    args = ap.parse_args()
    if args.smoke:
        args.candidates, args.delay, args.concurrency = 8, 0.02, 4

    from core.backends.openai_judge import OpenAIJudge
    from core.config import Settings
    from core.contracts.records import Photo
    from core.contracts.search_request import SearchRequest
    from core.search.engine import SearchEngine
    from tests.fakes import FakeBackends, FakeEmbedder, FakeSearch

    server = JudgeServer(args.delay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        s = Settings(data_dir=tmp, judge="openai", openai_base_url=f"http://127.0.0.1:{server.server_port}/v1",
                     openai_api_key="bench", judge_concurrency=args.concurrency, rerank_k=args.candidates,
                     rerank_subquestions=3, k=args.candidates, backend_retries=0, max_judge_calls=10_000)
        n = args.candidates
        # no names in the catalog: every sub-question goes to the judge (a species asked about is otherwise
        # answered from the catalog, and the bench measures the judge calls)
        photos = [Photo(path=f"p{i}.png", id=i + 1) for i in range(n)]
        vecs = np.random.default_rng(0).standard_normal((n, 16)).astype(np.float32)
        judge = OpenAIJudge.from_settings(s)
        search = FakeSearch(photos, vecs, s, backends=FakeBackends(embedder=FakeEmbedder(16), judge=judge))
        t0 = time.perf_counter()
        res = SearchEngine(search, search.backends).search(SearchRequest(QUERY, rerank="subq", rerank_k=n, k=n))
        wall = time.perf_counter() - t0
    server.shutdown()
    rr = res.stages["rerank"]
    calls = len(server.latencies) - server.probes
    seq = sum(server.latencies)  # the probe's calls too: the search waited for them as well
    print(f"rerank bench: {rr['judged']} photos x {len(rr['subquestions'])} sub-questions = {calls} judge calls "
          f"(+{server.probes} for the judge's image probe; {args.delay * 1000:.0f} ms each), "
          f"concurrency {args.concurrency}")
    print(f"wall time {wall:.2f} s; sequential sum {seq:.2f} s; ratio {wall / seq:.3f} (goal <= {1 / 8:.3f})")
    for note in res.notices:
        print(f"note: {note}")
    all_calls = calls == n * len(rr["subquestions"])
    if args.smoke:
        print("smoke run: the goal is not judged at this size")
        return 0 if all_calls else 1
    return 0 if all_calls and wall / seq <= 1 / 8 else 1


if __name__ == "__main__":
    sys.exit(main())
