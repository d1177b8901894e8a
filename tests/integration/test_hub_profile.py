"""Real models and real photos from the hub, with a local server on 127.0.0.1 posing as the hub
(tests/fake_hub.py, HF_ENDPOINT) serving tiny random models under the hub-cpu profile's ids and a tiny parquet
in the INQUIRE-Rerank schema: downloads with progress into the data directory, resumed after a kill, a
checksum mismatch refused, the ingest, a Verify search with an answer and a Cover search all in process, the
doctor on the profile, and the same settings offline failing within seconds with the fix.

The test.sh environment sets HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE: every command here runs in a child
process whose environment clears them (and HF_HOME, so that models go to the data directory)."""
from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("open_clip")
pytest.importorskip("xgrammar")
pytest.importorskip("num2words")

from tests.fake_hub import child_env as _env
from tests.hub_repos import DATASET, QUERIES, SPLIT_FILE, dataset_files, profile_hub

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CORPUS = f"hf://datasets/{DATASET}:validation"
FAST_S = 30.0  # "within seconds": a Python start with the app's imports on a loaded 2-core machine included


def _app(args: list[str], env: dict[str, str], timeout: float = 600, stdin: str | None = None
         ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "app.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout, input=stdin)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    server = profile_hub(tmp_path_factory.mktemp("hub-build"))
    yield server
    server.stop()


# --- the hub corpus: download, resume, checksum --------------------------------------------------------
# huggingface_hub writes a download to disk every DOWNLOAD_CHUNK_SIZE (10 MB) bytes; the tiny file here is cut
# into 4 kB writes so that a kill half-way leaves a part to resume from (as a 360 MB file does at 10 MB steps)
FETCH = """
import sys
from huggingface_hub import constants
constants.DOWNLOAD_CHUNK_SIZE = 4096
from core.config import Settings
from core.ingest import hub_dataset
settings = Settings(data_dir=sys.argv[1])
files = hub_dataset.fetch(settings, sys.argv[2], lambda what, done, total: print("P", what, done, total, flush=True))
print("FILES", *files, flush=True)
"""


def _fetch(env: dict[str, str], data: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", FETCH, str(data), CORPUS], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_corpus_download_shows_progress_and_resumes_after_a_kill(hub, tmp_path):
    size = len(dataset_files()[SPLIT_FILE])
    data = tmp_path / "data"
    hub.rate, hub.log[:] = 20_000.0, []  # bytes a second: the first attempt is still running when killed
    start = hub.sent
    first = _fetch(_env(hub.url, data), data)
    deadline = time.monotonic() + 120
    while hub.sent - start < size // 3 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.05)
    assert first.poll() is None, first.communicate()
    first.kill()
    first.communicate()
    hub.rate = None
    assert not (data / "hub/datasets/evendrow/INQUIRE-Rerank/main/complete.json").exists()
    second = _fetch(_env(hub.url, data), data)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    ranges = [r for method, path, r in hub.log if method == "GET" and SPLIT_FILE in path and r]
    assert ranges and int(ranges[-1].split("=")[1].rstrip("-")) > 0  # resumed, not started again
    lines = [line.split() for line in out.splitlines() if line.startswith("P ")]
    whole = size + len(dataset_files()["README.md"])  # the split's parquet and the dataset card
    assert lines and lines[-1][-2:] == [str(whole), str(whole)]  # bytes, up to the whole download
    assert all(int(line[-2]) <= int(line[-1]) for line in lines)
    got = Path(out.split("FILES ", 1)[1].split()[0])
    assert hashlib.sha256(got.read_bytes()).hexdigest() == hashlib.sha256(dataset_files()[SPLIT_FILE]).hexdigest()
    assert json.loads((got.parents[1] / "complete.json").read_text())["split"] == "validation"


def test_checksum_mismatch_is_refused(hub, tmp_path):
    data = tmp_path / "data"
    hub.corrupt.add(SPLIT_FILE)
    try:
        proc = _fetch(_env(hub.url, data), data)
        out, err = proc.communicate(timeout=120)
    finally:
        hub.corrupt.discard(SPLIT_FILE)
    assert proc.returncode != 0 and "does not match its checksum" in err
    folder = data / "hub/datasets/evendrow/INQUIRE-Rerank/main"
    assert not (folder / SPLIT_FILE).exists() and not (folder / "complete.json").exists()


def test_unknown_split_names_the_real_ones(hub, tmp_path):
    proc = subprocess.run([sys.executable, "-c", FETCH, str(tmp_path), f"hf://datasets/{DATASET}:train"], cwd=ROOT,
                          env=_env(hub.url, tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "no parquet files for the split 'train'" in proc.stderr
    assert f"hf://datasets/{DATASET}:validation" in proc.stderr


# --- the whole profile ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def prepared(hub, tmp_path_factory):
    """A Verify search with an answer on a fresh data directory: models and photos downloaded, photos ingested."""
    data = tmp_path_factory.mktemp("profile") / "data"
    env = _env(hub.url, data, models="hub-cpu", corpus=CORPUS, generator="standin")  # explicit beats the profile
    run = _app(["search", "--preset", "Verify", "--answer", QUERIES[0], "--json"], env)
    assert run.returncode == 0, run.stderr[-3000:]
    return env, data, json.loads(run.stdout), run.stderr


def test_verify_search_end_to_end_on_the_profile(prepared):
    env, data, out, err = prepared
    backends = out["backends"]
    assert backends["judge"]["model_id"] == "transformers:HuggingFaceTB/SmolVLM-256M-Instruct"
    assert backends["llm"]["model_id"] == "transformers:HuggingFaceTB/SmolLM2-360M-Instruct"
    assert backends["embedder"]["model_id"].startswith("open_clip:hf-hub:imageomics/bioclip")
    assert backends["generator"]["standin"]  # generator=standin, set explicitly, beat the profile's SD-Turbo
    assert (data / "models").is_dir() and any((data / "models").glob("models--HuggingFaceTB--SmolVLM-256M-Instruct"))
    assert "downloading SmolVLM-256M-Instruct" in err and "downloading INQUIRE-Rerank (validation split)" in err
    # the dataset card's licence (README.md: license: cc-by-nc-4.0), named as people write it
    assert out["notices"][0].startswith("12 photos from INQUIRE-Rerank (validation split), under CC BY-NC 4.0 (the "
                                        "dataset card's licence; each photo shows its own licence and rights holder)")
    hits = out["results"]
    assert len(hits) == 12
    assert all(h["license"] in ("cc-by", "cc-by-nc") and h["rights_holder"].startswith("observer") for h in hits)
    reasons = list(_reasons(out["stages"]))  # each badge's p(yes) comes from the first token's probabilities
    assert len(reasons) >= 12 * 2 and all(r.startswith("first answer token: p(yes)=") for r in reasons)
    assert "answer" in out["stages"]


def _reasons(tree):
    """Every judge reason in the stages' JSON."""
    if isinstance(tree, dict):
        if isinstance(tree.get("reason"), str) and "checked" in tree:
            yield tree["reason"]
        for value in tree.values():
            yield from _reasons(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _reasons(value)


def test_cover_search_on_the_profile(prepared):
    env, _, _, _ = prepared
    run = _app(["search", "--preset", "Cover", QUERIES[1], "--json"], env)
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert out["backends"]["llm"]["model_id"] == "transformers:HuggingFaceTB/SmolLM2-360M-Instruct"
    assert out["results"] and "coverage" in out["stages"], out["notices"]


def test_dialogue_on_the_profile(prepared):
    env, _, _, _ = prepared
    run = _app(["chat", QUERIES[0], "--rounds", "2", "--k", "3", "--json"], env, stdin="yes\nno\n")
    assert run.returncode == 0, run.stderr[-2000:]
    session = json.loads(run.stdout[run.stdout.index("{\n"):])
    assert session["turns"] and session["results"]


def test_doctor_checks_the_profile_as_a_whole(prepared):
    env, _, _, _ = prepared
    run = _app(["doctor", "--json"], env)
    report = json.loads(run.stdout)
    rows = {r["backend"]: r for r in report["backends"]}
    assert report["profile"]["models"] == "hub-cpu"
    assert report["profile"]["explicit"] == {"generator": "standin"}
    assert rows["judge"]["setting"] == "transformers:HuggingFaceTB/SmolVLM-256M-Instruct"
    # every model of the profile loads and is wired, and each random-weight one fails its probe as not usable:
    # the embedder matches no colours, the judge does not tell a red picture from a green one, and the LLM
    # (whose JSON still parses) and the captioner read an English sentence no better than guessing
    assert not rows["embedder"]["ok"] and rows["embedder"]["setting"] == "open_clip:hf-hub:imageomics/bioclip"
    for kind, model in (("judge", "SmolVLM-256M-Instruct"), ("llm", "SmolLM2-360M-Instruct"),
                        ("captioner", "SmolVLM-256M-Instruct")):
        assert not rows[kind]["ok"] and rows[kind]["detail"].startswith("not usable"), rows[kind]
        assert rows[kind]["setting"] == f"transformers:HuggingFaceTB/{model}"
    assert "does not read English" in rows["llm"]["detail"] and model in rows["captioner"]["detail"]
    assert rows["generator"]["ok"] and rows["generator"]["standin"]  # set explicitly: the stand-in answers
    assert run.returncode == 1
    table = _app(["doctor"], env)  # the table names each model whole
    assert all(f"transformers:HuggingFaceTB/{m}" in table.stdout for m in ("SmolVLM-256M-Instruct",
                                                                          "SmolLM2-360M-Instruct"))
    assert "not working: embedder, llm, judge, captioner" in table.stdout


# --- offline -------------------------------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("settings,needle", [
    ({"models": "hub-cpu"}, "ECOLENS_MODELS=standin"),
    ({"corpus": CORPUS}, "set corpus to a local parquet file or folder"),
])
@pytest.mark.parametrize("how", ["HF_HUB_OFFLINE", "unreachable"])
def test_offline_fails_within_seconds_with_the_fix(tmp_path, settings, needle, how):
    env = _env(f"http://127.0.0.1:{_closed_port()}" if how == "unreachable" else None, tmp_path / "data", **settings)
    if how == "HF_HUB_OFFLINE":
        env["HF_HUB_OFFLINE"] = "1"
    started = time.monotonic()
    run = _app(["search", "a heron"], env, timeout=120)
    took = time.monotonic() - started
    assert run.returncode == 2 and took < FAST_S, (took, run.stderr)
    assert "error:" in run.stderr and "how to fix:" in run.stderr and needle in run.stderr
    assert ("HF_HUB_OFFLINE is set" if how == "HF_HUB_OFFLINE" else "cannot be reached") in run.stderr
    if "models" in settings:  # where to copy which folders: the data directory's model cache, not HF_HOME
        fix = run.stderr.split("how to fix:", 1)[1]
        assert f"into {tmp_path / 'data' / 'models'} here" in fix
        assert "models--HuggingFaceTB--SmolVLM-256M-Instruct" in fix and "models--imageomics--bioclip" in fix
