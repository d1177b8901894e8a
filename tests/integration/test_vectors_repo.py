"""Companion vectors from the deployer's own dataset repository (setting vectors_repo): with a hub corpus, the split's
vectors/SPLIT.parquet of that repository is downloaded beside the dataset (into its own folder of data_dir/hub) and
recorded in the dataset's marker, where the ingest looks (core.ingest.companion_vectors.beside); named after the
dataset was downloaded, it is fetched at the next start; fetched once, it is not asked again; a vectors_repo that
names no repository (a split, say) is refused when the settings load, before any download. On the fake hub
(tests/fake_hub.py), in child processes (the test environment keeps the hub offline)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_hub import FakeHub, child_env
from tests.hub_repos import DATASET, dataset_files, image_ids, vector_parquet

ROOT = Path(__file__).resolve().parents[2]
CORPUS = f"hf://datasets/{DATASET}:validation"
OWN = "me/inquire-vectors"
FETCH = """
import json, sys
from core.config import Settings
from core.ingest import companion_vectors, hub_dataset
settings = Settings(data_dir=sys.argv[1], vectors_repo=sys.argv[3])
files = hub_dataset.fetch(settings, sys.argv[2])
print(json.dumps({"files": [str(f) for f in files], "beside": [str(p) for p in companion_vectors.beside(files[0])]}))
"""


@pytest.fixture(scope="module")
def hub():
    server = FakeHub()
    server.add("dataset", DATASET, dataset_files())
    server.add("dataset", OWN, {"vectors/validation.parquet": vector_parquet("open_clip:x", 16, image_ids()),
                                "vectors/test.parquet": vector_parquet("open_clip:x", 16, image_ids(2)),
                                "README.md": b"# my vectors\n"})
    yield server.start()
    server.stop()


def _fetch(hub, data: Path, vectors_repo: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", FETCH, str(data), CORPUS, vectors_repo], cwd=ROOT,
                          env=child_env(hub.url, data), capture_output=True, text=True, timeout=300)


def _own_gets(hub) -> list[str]:
    return [path for method, path, _ in hub.log if method == "GET" and OWN in path and "/resolve/" in path]


def test_vectors_from_the_deployers_own_repository_are_recorded_beside_the_dataset(hub, tmp_path):
    data = tmp_path / "data"
    hub.log[:] = []
    plain = _fetch(hub, data, "")
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert json.loads(plain.stdout)["beside"] == [] and _own_gets(hub) == []
    run = _fetch(hub, data, f"hf://datasets/{OWN}")  # named after the dataset was downloaded
    assert run.returncode == 0, run.stderr[-2000:]
    beside = [Path(p) for p in json.loads(run.stdout)["beside"]]
    assert len(beside) == 1 and beside[0].name == "validation.parquet"
    assert beside[0].read_bytes() == vector_parquet("open_clip:x", 16, image_ids())  # the split's file only
    assert beside[0].resolve().is_relative_to((data / "hub" / "datasets" / "me" / "inquire-vectors").resolve())
    assert _own_gets(hub) == [p for p in _own_gets(hub) if "validation.parquet" in p] and _own_gets(hub)
    marker = json.loads((data / "hub/datasets/evendrow/INQUIRE-Rerank/main/complete.json").read_text())
    assert marker["vectors_repo"] == f"hf://datasets/{OWN}@main"
    hub.log[:] = []
    again = _fetch(hub, data, f"hf://datasets/{OWN}")
    assert again.returncode == 0 and json.loads(again.stdout)["beside"] == [str(p) for p in beside]
    assert hub.log == []  # everything is here: the hub is not asked at all


def test_a_vectors_repo_naming_a_split_is_refused_before_any_download(hub, tmp_path):
    hub.log[:] = []
    env = child_env(hub.url, tmp_path / "data", vectors_repo=f"hf://datasets/{OWN}:validation")
    run = subprocess.run([sys.executable, "app.py", "ingest", CORPUS], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 2, run.stderr[-2000:]
    assert f"error: Setting vectors_repo='hf://datasets/{OWN}:validation' does not have the form it needs" \
        in run.stderr
    assert "how to fix: fix vectors_repo: Your own hub dataset repository (hf://datasets/OWNER/NAME[@REVISION])" \
        in run.stderr
    assert hub.log == []
