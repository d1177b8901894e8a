"""The committed Leaflet (assets/vendor/leaflet) is checked by scripts/fetch_leaflet.py: the files as committed
pass, and a changed or missing file is named, with a non-zero exit."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "fetch_leaflet.py"


def _module():
    spec = importlib.util.spec_from_file_location("fetch_leaflet", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_files_match_their_checksums():
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "matches its checksums" in run.stdout
    assert set(_module().SHA256) == {"leaflet.js", "leaflet.css", "LICENSE"}
    assert "BSD 2-Clause" in (ROOT / "assets/vendor/leaflet/LICENSE").read_text(encoding="utf-8")


def test_a_changed_file_and_a_missing_one_are_named(tmp_path):
    module = _module()
    copy = tmp_path / "leaflet"
    shutil.copytree(module.TARGET, copy)
    assert module.problems(copy) == []
    css = copy / "leaflet.css"
    css.write_bytes(css.read_bytes() + b"\n/* edited */\n")
    (copy / "LICENSE").unlink()
    found = module.problems(copy)
    assert len(found) == 2
    assert any("leaflet.css differs" in line for line in found) and any("LICENSE is missing" in line for line in found)
    assert not any("leaflet.js" in line for line in found)
