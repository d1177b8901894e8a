"""core.vectors.threads.one_blas_thread: the BLAS libraries with a thread pool of their own (numpy's OpenBLAS)
run one thread after it; OpenMP-threaded ones (FAISS's) keep theirs. Run in a child interpreter, since the
limit holds for the whole process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json
import numpy
from threadpoolctl import threadpool_info
from core.vectors.threads import one_blas_thread
before = threadpool_info()
limited = one_blas_thread()
print(json.dumps({"before": before, "after": threadpool_info(), "limited": limited}))
"""


def test_one_blas_thread_limits_the_pthreads_pools_alone():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    before = {lib["filepath"]: lib for lib in seen["before"]}
    after = {lib["filepath"]: lib for lib in seen["after"]}
    pools = [f for f, lib in before.items() if lib["user_api"] == "blas" and lib.get("threading_layer") == "pthreads"]
    assert pools, "numpy's OpenBLAS (a pthreads pool) was expected among the loaded libraries"
    for f in pools:
        assert after[f]["num_threads"] == 1
    assert sorted(seen["limited"]) == sorted(f for f in pools if before[f]["num_threads"] > 1)
    for f, lib in before.items():
        if f not in pools:
            assert after[f]["num_threads"] == lib["num_threads"], f"{f} was not to change"
