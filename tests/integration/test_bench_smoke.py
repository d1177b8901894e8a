"""Every benchmark in bench/ compiles and runs to the end at a tiny size (`--smoke`), so a benchmark broken by a
change in the engine fails CI instead of the next person who measures. Each runs as its own process, as a
person would run it, with a time limit, and must print the line with its ratio (or, for bench/clip_like.py,
its statistics). At these sizes the goals are not judged; the figures in docs come from full runs.

Nothing here reaches beyond 127.0.0.1: the judge and LLM servers the benchmarks talk to are local stand-ins
(tests/standin_servers.py: the judge server of bench/rerank.py and bench/cache.py, and the chat model of
bench/llm_tasks.py's --stand-in-server, which answers every LLM call at once: SmolLM2 on llama.cpp takes minutes
per query on a busy 2-core machine, and tests/integration/test_real_backends.py already runs the app against
that server)."""
from __future__ import annotations

import os
import py_compile
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHES = sorted(p.name for p in (ROOT / "bench").glob("*.py") if p.name != "__init__.py")

EXTRA_ARGS = {"llm_tasks.py": ["--stand-in-server"]}
# bench -> (the line its smoke run must print, seconds it may take on a busy 2-core machine)
EXPECTED = {
    "cache.py": (r"ratio \d+(\.\d+)?x \(goal >= 20x\), same ranking: True", 300),
    "clip_like.py": (r"random-pair cosine -?\d\.\d\d \(CLIP: 0\.1-0\.3\)", 120),
    "crops_ingest.py": (r"ratio ingest with crops / bare decode\+crop\+forward \(throughput\): median \d", 300),
    "crops_search.py": (r"ratio p50 \d+\.\d\d p95 \d+\.\d\d \(goal <= 2\)", 300),
    "hybrid.py": (r"ratio hybrid / vectors nDCG@10: field guide \d+\.\d\d, mixed \d+\.\d\d", 300),
    "identify_event.py": (r"identify an event by key \(\d+ identifications\): p50 \d+\.\d\d ms p95 \d+\.\d\d ms", 120),
    "ingest.py": (r"ratio ingest \(local\) / bare decode\+forward: median \d", 300),
    "isolation.py": (r"ratio \(loaded / alone\): +p50 +\d+\.\d+ +p95 +\d+\.\d+", 300),
    "load.py": (r"RESULT fast_p95_ratio=\d+\.\d\d errors=0 labels_lost=0", 300),
    "llm_tasks.py": (r"sub-questions +\d+ / \d+ +\d\.\d\d", 300),
    "rerank.py": (r"ratio \d\.\d{3} \(goal <= 0\.125\)", 120),
    "scale.py": (r"ratio p50 \d+\.\d\d p95 \d+\.\d\d \(goal <= 2\)", 300),
    "server_cpu.py": (r"ratio EcoLens / bare Gradio server CPU per Fast search: median \d+\.\d\d \(goal <= 1\.5\)",
                      300),
    "search.py": (r"ratio p50 \d+\.\d\d p95 \d+\.\d\d \(goal <= 2\)", 300),
    "upload_memory.py": (r"peak memory ratio \d\.\d{3} \(goal <= 0\.125\)", 120),
    "vlm_judge.py": (r"ratio judge/bare throughput: \d+\.\d\dx \(threads\)", 300),
}


def bench_env() -> dict[str, str]:
    """The caller's environment without EcoLens settings, offline, and no proxy for local servers; this
    checkout first on the import path (the environment's editable install may be another checkout's:
    tests/unit/test_package.py checks that install)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_") or k.startswith("ECOLENS_SETUP_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False",
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", PYTHONPATH=str(ROOT))
    return env


def test_every_bench_compiles_and_has_a_smoke_expectation(tmp_path):
    assert BENCHES, "no benchmark found in bench/"
    for name in BENCHES:
        py_compile.compile(str(ROOT / "bench" / name), cfile=str(tmp_path / (name + "c")), doraise=True)
    assert sorted(EXPECTED) == BENCHES, "every bench/*.py needs a smoke expectation here (and only those)"


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHES)
def test_bench_runs_at_a_tiny_size(name):
    pattern, timeout = EXPECTED[name]
    cmd = [sys.executable, str(ROOT / "bench" / name), "--smoke", *EXTRA_ARGS.get(name, [])]
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=bench_env(), capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        pytest.fail(f"bench/{name} --smoke did not finish within {timeout} s; output so far:\n{out[-3000:]}")
    report = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"bench/{name} --smoke exited with {done.returncode}\n{report}"
    assert re.search(pattern, done.stdout), f"bench/{name} --smoke did not print /{pattern}/\n{report}"


@pytest.mark.slow
def test_the_load_bench_runs_its_two_server_experiment_and_its_mix():
    """bench/load.py --servers 2 (sessions split over two web servers on one data directory) and --mix: both
    reach the end with no error and no label lost, and the header says what ran."""
    cmd = [sys.executable, str(ROOT / "bench" / "load.py"), "--smoke", "--servers", "2", "--mix", "Fast=1,Verify=1"]
    done = subprocess.run(cmd, cwd=ROOT, env=bench_env(), capture_output=True, text=True, timeout=300, check=False)
    report = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, report
    assert "(mix Fast 50%, Verify 50%)" in done.stdout and "2 web servers, each session kept to one" in done.stdout, \
        report
    assert re.search(r"RESULT fast_p95_ratio=\d+\.\d\d errors=0 labels_lost=0", done.stdout), report


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (apt-get install nginx)")
def test_the_load_bench_runs_through_serve_behind_nginx():
    """bench/load.py --serve 2: the sessions search and label through nginx in front of two web processes, with no
    error and no label lost, and the report gives the throughput."""
    cmd = [sys.executable, str(ROOT / "bench" / "load.py"), "--smoke", "--serve", "2", "--mix", "Fast=1"]
    done = subprocess.run(cmd, cwd=ROOT, env=bench_env(), capture_output=True, text=True, timeout=300, check=False)
    report = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, report
    assert "(serve --processes 2" in done.stdout and "searches/s" in done.stdout, report
    assert re.search(r"RESULT fast_p95_ratio=\d+\.\d\d errors=0 labels_lost=0", done.stdout), report
