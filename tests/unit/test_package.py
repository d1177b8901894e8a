"""EcoLens as a package (pyproject.toml): every top-level package of the tree is declared, no file outside tests/
edits sys.path, and the environment has the project installed editable (scripts/setup.sh), so app.py,
bench/*.py and scripts/*.py import from any folder."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN_FROM_THE_CHECKOUT = {"bench", "scripts", "tests"}  # tools and tests: importable editable, never installed


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_top_level_package_and_the_app_module_are_declared():
    setuptools = _pyproject()["tool"]["setuptools"]
    declared = {pattern.rstrip("*") for pattern in setuptools["packages"]["find"]["include"]}
    on_disk = {p.parent.name for p in ROOT.glob("*/__init__.py")} - RUN_FROM_THE_CHECKOUT
    assert declared == on_disk
    assert setuptools["py-modules"] == ["app"]
    assert _pyproject()["project"]["scripts"]["ecolens"] == "app:main"


def test_no_file_outside_tests_edits_sys_path():
    edits = re.compile(r"sys\.path\.(insert|append)")
    offenders = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                 if p.relative_to(ROOT).parts[0] not in ("tests", ".git") and edits.search(p.read_text("utf-8"))]
    assert offenders == []


def test_the_environment_imports_the_project_from_any_folder(tmp_path):
    """What `python bench/x.py` and `python scripts/x.py` rely on: the editable install's path entry."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = "import app, core.search.engine, bench.support.measure, scripts.settings_table, tests.live_server"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, ("the project is not installed in this environment: run `bash scripts/setup.sh` "
                                  f"(it runs pip install --no-deps -e .)\n{done.stderr[-2000:]}")


def test_the_test_script_runs_ruff_before_pytest_in_both_lanes():
    script = (ROOT / "test.sh").read_text(encoding="utf-8")
    lint = script.index('/bin/ruff" check .')
    assert lint < script.index("--lane fast") and lint < script.rindex('-m pytest "$@"')
    assert "ruff==" in (ROOT / "requirements-dev.txt").read_text(encoding="utf-8")
    assert "[tool.ruff.lint]" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
