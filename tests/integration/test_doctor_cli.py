"""`python app.py doctor` as a user runs it: one row per backend, exit 0 on the offline defaults; a broken
backend is a FAILED row with its fix (and exit 1), credentials in URLs masked."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = ["embedder", "llm", "judge", "generator", "captioner"]


def _doctor(tmp_path, *args, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(HF_HUB_OFFLINE="1", ECOLENS_DATA_DIR=str(tmp_path / "data"), **env_extra)
    return subprocess.run([sys.executable, "app.py", "doctor", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_doctor_on_the_offline_defaults(tmp_path):
    done = _doctor(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split()[0] for line in done.stdout.splitlines()[2:] if line.split() and line.split()[0] in KINDS]
    assert rows == KINDS and "every backend answered" in done.stdout and "FAILED" not in done.stdout
    assert "Traceback" not in done.stderr
    data = json.loads(_doctor(tmp_path, "--json").stdout)
    assert data["ok"] and [r["backend"] for r in data["backends"]] == KINDS
    assert all(r["ok"] and r["standin"] for r in data["backends"])
    assert data["backends"][0]["detail"].startswith("dimension 128")


def test_doctor_reports_broken_backends_with_fixes(tmp_path):
    done = _doctor(tmp_path, "--json", ECOLENS_JUDGE="openai", ECOLENS_CAPTIONER="openai", ECOLENS_BACKEND_RETRIES="0",
                   ECOLENS_OPENAI_BASE_URL="http://ada:s3cret@127.0.0.1:9/v1",
                   ECOLENS_GENERATOR="diffusers:nobody/none")
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {r["backend"]: r for r in json.loads(done.stdout)["backends"]}
    assert rows["embedder"]["ok"] and rows["llm"]["ok"]
    assert not rows["judge"]["ok"] and "could not reach" in rows["judge"]["detail"] and rows["judge"]["fix"]
    assert not rows["generator"]["ok"] and "HF_HUB_OFFLINE" in rows["generator"]["fix"]
    assert "s3cret" not in done.stdout + done.stderr and "***@127.0.0.1" in rows["judge"]["detail"]
