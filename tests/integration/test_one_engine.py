"""What is evaluated is what is shown: every preset through the web handlers and through `search --json` on the
same request gives the same photos in the same order (one engine behind both); for Cover the first photos are
the Pareto set. Also: the log file, and a degraded stage writing its traceback there."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_methods_end_to_end import BACKENDS

ROOT = Path(__file__).resolve().parents[2]
QUERY = "a Slate Reedpiper with a black crest and an orange belly"
FORM = dict(k=8, m=2, rerank_k=12)


def env_for(data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update({f"ECOLENS_{k.upper()}": v for k, v in BACKENDS.items()})
    env.update({"ECOLENS_DATA_DIR": str(data), "ECOLENS_LLM": "rule", "ECOLENS_CAPTIONER": "metadata", "CI": "true",
                **extra})
    return env


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from app import build_services
    from core.config import load_settings
    from fieldguide.world import build_world

    data = tmp_path_factory.mktemp("data")
    csv_path = build_world(data / "world", seed=0, per_species=4, benchmark=False)
    settings = load_settings(environ={}, data_dir=str(data), llm="rule", captioner="metadata", **BACKENDS)
    services = build_services(settings)
    services.ingestor().run(str(csv_path), None)
    services.corpus.reload()
    return services, data


def cli_json(data: Path, *args: str) -> dict:
    proc = subprocess.run([sys.executable, str(ROOT / "app.py"), "search", *args, "--json"], env=env_for(data),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("preset", ["Fast", "Visualize", "Verify", "Cover"])
def test_web_handlers_and_cli_show_the_same_ranking(world, preset):
    from core.sessions.memory_log import MemorySessionLog
    from ui.search_handlers import SearchHandlers

    services, data = world
    h = SearchHandlers(services.engine, MemorySessionLog())
    outs = list(h.search(QUERY, preset, FORM["k"], FORM["m"], FORM["rerank_k"], "full", False, "", "", "", [], "",
                         "", None, None, None))
    web = [hit["id"] for hit in outs[-1][-1]["hits"]]
    out = cli_json(data, QUERY, "--preset", preset, "--k", str(FORM["k"]), "--m", str(FORM["m"]),
                   "--rerank-k", str(FORM["rerank_k"]))
    assert [r["id"] for r in out["results"]] == web and len(web) == FORM["k"]
    assert out["preset"] == preset
    if preset == "Cover":
        cover = out["stages"]["coverage"]["photos"]
        assert cover, "the world holds photos covering parts of the query"
        pareto = [p["id"] for p in sorted(cover, key=lambda p: (-len(p["satisfies"]), -p["dense"], p["id"]))]
        assert web[:len(pareto)] == pareto[:FORM["k"]]
        # the gallery marks covering photos with the parts they cover
        captions = [c for _, c in outs[-1][0]]
        assert all("covers" in c for c in captions[:len(pareto)])


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_degraded_stage_writes_its_traceback_to_the_log_file(world, tmp_path):
    _, data = world
    env = env_for(data, ECOLENS_LLM="openai", ECOLENS_OPENAI_BASE_URL=f"http://127.0.0.1:{_closed_port()}/v1",
                  ECOLENS_OPENAI_API_KEY="k", ECOLENS_BACKEND_RETRIES="0", ECOLENS_BACKEND_TIMEOUT_S="5")
    proc = subprocess.run([sys.executable, str(ROOT / "app.py"), "search", "a red frog", "--method", "rewrite",
                           "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert any("language model failed" in n for n in out["notices"])
    log = (data / "logs" / "ecolens.log").read_text(encoding="utf-8")
    lines = [ln for ln in log.splitlines() if "visualization instruction: LLM" in ln and "failed" in ln]
    assert lines and "ERROR core.methods.llm_call" in lines[-1]
    assert "Traceback (most recent call last)" in log.split(lines[-1], 1)[1]
