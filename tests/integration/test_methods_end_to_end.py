"""Every method end to end on a small field-guide world: through the engine and through the CLI.

Uses the field-guide backends when their trained weights are present, else the hash embedder, the stand-in
generator and the clip judge (both offline)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
FIELDGUIDE = (ROOT / "assets" / "fieldguide" / "encoder.pt").is_file()
BACKENDS = ({"embedder": "fieldguide", "generator": "fieldguide", "judge": "fieldguide"} if FIELDGUIDE else
            {"embedder": "hash", "generator": "standin", "judge": "clip"})
SHIM = "import sys, app; sys.exit(app.main(sys.argv[1:]))"


def env_for(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update({f"ECOLENS_{k.upper()}": v for k, v in BACKENDS.items()})
    env.update(ECOLENS_DATA_DIR=str(data_dir), ECOLENS_LLM="rule", ECOLENS_CAPTIONER="metadata",
               ECOLENS_RERANK_K="12", ECOLENS_K="8", ECOLENS_JUDGE_CONCURRENCY="4", CI="true")
    return env


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from app import build_services
    from core.config import load_settings
    from fieldguide.world import build_world

    data = tmp_path_factory.mktemp("data")
    csv_path = build_world(data / "world", seed=0, per_species=3, benchmark=False)
    settings = load_settings(environ={}, data_dir=str(data), llm="rule", captioner="metadata", rerank_k=12, k=8,
                             judge_concurrency=4, **BACKENDS)
    engine = build_services(settings)
    engine.ingestor().run(str(csv_path), None)
    engine.corpus.reload()
    return engine, data


def cli(data: Path, *args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-c", SHIM, *args], cwd=ROOT, env=env_for(data), input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def check_stages(out: dict, method: str) -> None:
    st = out["stages"]
    assert isinstance(out["notices"], list) and out["results"]
    if method == "visret":
        assert st["visret"]["instruction"]
        for v in st["visret"]["visualizations"]:
            assert Path(v["path"]).is_file() and isinstance(v["seed"], int) and v["model"]
    rr = st["rerank"]
    assert 2 <= len(rr["subquestions"]) <= 3 and rr["photos"]
    for p in rr["photos"]:
        assert set(p) >= {"id", "answers", "score"} and len(p["answers"]) == len(rr["subquestions"])
        assert all(set(a) >= {"question", "answer", "p_yes", "reason"} for a in p["answers"])
    cov = st["coverage"]
    assert cov["subqueries"] and isinstance(cov["uncovered"], list)
    assert all(set(p) >= {"id", "satisfies", "dense"} for p in cov["photos"])
    assert st["answer"]["text"] and st["answer"]["cited_ids"]


@pytest.mark.parametrize("method", ["baseline", "rewrite", "visret"])
def test_engine_runs_every_method(world, method):
    from core.contracts.search_request import SearchRequest

    engine, _ = world
    events = []
    res = engine.engine.search(SearchRequest("a moth resting on bark with red hindwings", method=method, m=2,
                                             rerank="full", coverage=True, answer=True), on_event=events.append)
    out = json.loads(json.dumps(res.to_json(), default=str))
    check_stages(out, method)
    kinds = {e.kind for e in events}
    assert {"first_results", "judged", "done"} <= kinds
    judged = [e for e in events if e.kind == "judged"]
    assert judged[-1].progress == f"judged {len(judged)}/{len(judged)}"
    if method == "visret":
        assert "visualization" in kinds


def test_cli_coverage_json_puts_the_pareto_photos_first(world):
    """`search --coverage --json`: the first len(stages.coverage.photos) results are the coverage photos, ordered
    by parts covered then dense score, and each carries the parts it covers."""
    _, data = world
    proc = cli(data, "search", "a Slate Reedpiper with a black crest and a frog on a leaf", "--coverage", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    cover = out["stages"]["coverage"]["photos"]
    assert cover, "the query should have covering photos in the world"
    expected = [p["id"] for p in sorted(cover, key=lambda p: (-len(p["satisfies"]), -p["dense"], p["id"]))]
    head = out["results"][:len(cover)]
    assert [r["id"] for r in head] == expected
    texts = [q["text"] for q in out["stages"]["coverage"]["subqueries"]]
    for r, p in zip(head, sorted(cover, key=lambda p: (-len(p["satisfies"]), -p["dense"], p["id"]))):
        assert r["covers"] == [texts[j] for j in p["satisfies"]]
    assert all("covers" not in r for r in out["results"][len(cover):])


def test_cli_search_visret_full_json_and_cache(world):
    _, data = world
    args = ["search", "What colour are the hindwings of the moth?", "--method", "visret", "--m", "2", "--rerank",
            "full", "--coverage", "--answer", "--json"]
    first = cli(data, *args)
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    check_stages(out, "visret")
    assert out["method"] == "visret+rerank:full+coverage"
    second = cli(data, *args)
    assert second.returncode == 0, second.stderr
    again = json.loads(second.stdout)
    assert again["stages"]["cache"]["backend_calls_total"] == 0
    assert [r["id"] for r in again["results"]] == [r["id"] for r in out["results"]]


@pytest.mark.parametrize("mode,method", [("direct", "baseline"), ("subq", "rewrite"), ("context", "baseline")])
def test_cli_rerank_modes_and_first_stages(world, mode, method):
    _, data = world
    res = cli(data, "search", "a frog calling at night", "--method", method, "--rerank", mode, "--answer", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["stages"]["first"]["method"] == method and out["stages"]["answer"]["cited_ids"]
    rr = out["stages"]["rerank"]
    assert rr["mode"] == mode and rr["photos"]
    assert (len(rr["subquestions"]) == 1) == (mode != "subq")


def test_cli_generator_down_falls_back_with_notice(world):
    _, data = world
    env_gen = "openai:gpt-image-1"
    res = subprocess.run([PY, "-c", SHIM, "search", "a frog", "--method", "visret", "--json"], cwd=ROOT,
                         env={**env_for(data), "ECOLENS_GENERATOR": env_gen, "ECOLENS_OPENAI_BASE_URL":
                              "http://127.0.0.1:9", "OPENAI_API_KEY": "none", "ECOLENS_BACKEND_RETRIES": "0",
                              "ECOLENS_BACKEND_TIMEOUT_S": "2"},
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["stages"]["visret"]["fallback"] is True and out["results"]
    assert any("rewrite baseline" in n for n in out["notices"])


def test_cli_text_output_and_chat_ends_on_eof(world):
    _, data = world
    res = cli(data, "search", "a bird on a branch", "--coverage")
    assert res.returncode == 0 and "coverage:" in res.stdout
    chat = cli(data, "chat", "a small bird", "--rounds", "3", "--json", stdin="yes\nmark 1\n", timeout=120)
    assert chat.returncode == 0, chat.stderr
    session = json.loads(chat.stdout)
    # "yes" is a turn; a marked photo is relevance feedback (no turn, no pasted note), shown with its rank
    assert len(session["turns"]) == 1 and session["results"] and session["relevant"] == [1]
    assert [m["id"] for m in session["marked"]] == [1] and len(session["history"]) == 3
    assert "(end of input)" in chat.stderr
    closed = cli(data, "chat", "a small bird", stdin="", timeout=60)
    assert closed.returncode == 0 and "Q1:" in closed.stdout
