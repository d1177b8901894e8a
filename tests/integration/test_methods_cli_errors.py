"""User-supplied photo ids through the CLI: an unknown id is a user error (exit 2, 'error:'), not a crash."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.photos import write_corpus

ROOT = Path(__file__).resolve().parents[2]


def _run(args, data_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(data_dir), ECOLENS_EMBEDDER="hash", ECOLENS_LLM="rule", CI="true")
    return subprocess.run([sys.executable, str(ROOT / "app.py"), *args], env=env, capture_output=True, text=True,
                          timeout=180, cwd=ROOT)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    csv_path = write_corpus(tmp_path_factory.mktemp("corpus"), 6, lambda i: {
        "scientific_name": "Rana aurora", "common_name": "Red-legged Frog", "license": "CC0", "inat_id": str(100 + i)})
    data_dir = tmp_path_factory.mktemp("data")
    out = _run(["ingest", str(csv_path)], data_dir)
    assert out.returncode == 0, out.stderr
    return data_dir


@pytest.mark.parametrize("flag", ["--relevant", "--not-relevant", "--example-ids"])
def test_unknown_photo_id_exits_2_without_traceback(data, flag):
    out = _run(["search", "x", flag, "999999"], data)
    assert out.returncode == 2, out.stderr
    assert "error: photo id 999999 is not in the index" in out.stderr
    assert "use ids shown in the results" in out.stderr and "Traceback" not in out.stderr
