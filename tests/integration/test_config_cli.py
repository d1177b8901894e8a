"""`python app.py config` as a user runs it: install-time variables are not settings (exit 0), URL credentials
are masked, and a bad value ends in `error:` + `how to fix:` with status 2, no traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(tmp_path / "data"), **env_extra)
    return subprocess.run([sys.executable, "app.py", "config"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_install_time_variables_and_masked_urls(tmp_path):
    done = _config(tmp_path, ECOLENS_VENV="/x", ECOLENS_CACHE="/y", ECOLENS_SETUP_LLAMA="1",
                   ECOLENS_OPENAI_BASE_URL="https://ada:s3cret@llm.example.org/v1?key=k123")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["openai_base_url"] == "https://***@llm.example.org/v1?key=***"
    assert "s3cret" not in done.stdout and "k123" not in done.stdout and "venv" not in shown


def test_bad_values_are_explained(tmp_path):
    for name, value in (("ECOLENS_K", "2.9"), ("ECOLENS_THREADS", "100000"), ("ECOLENS_MAX_UPLOAD_MB", "nan"),
                        ("ECOLENS_BACKEND_TIMEOUT_S", "0")):
        done = _config(tmp_path, **{name: value})
        assert done.returncode == 2, (name, done.stdout, done.stderr)
        assert done.stderr.startswith("error: ") and "how to fix: " in done.stderr and "Traceback" not in done.stderr
