"""tests/skip_guard.py: a full run with a skip not on the list of expected skips fails and names it; a listed
skip, the fast lane and an xfail pass. Each case is a small pytest run of its own (a second or two)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.expected_skips import EXPECTED_SKIPS
from tests.skip_guard import is_expected

ROOT = Path(__file__).resolve().parents[2]
CONFTEST = '''
pytest_plugins = ("tests.skip_guard",)

def pytest_addoption(parser):
    parser.addoption("--lane", choices=("full", "fast"), default="full")
'''


def run(tmp_path: Path, body: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_case.py").write_text("import pytest\n\n\n" + body)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_an_unlisted_skip_fails_the_full_lane_and_is_named(tmp_path):
    done = run(tmp_path, 'def test_ok():\n    pass\n\n\ndef test_gone():\n    pytest.skip("no frobnicator here")\n')
    assert done.returncode == 1, done.stdout
    assert "test_case.py::test_gone: no frobnicator here" in done.stdout
    assert "tests/expected_skips.py" in done.stdout


def test_a_module_skipped_whole_fails_the_full_lane(tmp_path):
    done = run(tmp_path, 'pytest.importorskip("a_module_that_is_not_installed")\n\n\ndef test_x():\n    pass\n')
    assert done.returncode == 1, done.stdout
    assert "test_case.py: could not import 'a_module_that_is_not_installed'" in done.stdout


def test_a_listed_skip_passes(tmp_path):
    listed = "the disk-full case did not run first"
    assert is_expected(listed)
    done = run(tmp_path, f'def test_ok():\n    pass\n\n\ndef test_later():\n    pytest.skip("{listed}")\n')
    assert done.returncode == 0, done.stdout
    assert "1 passed, 1 skipped" in done.stdout and "not on the list" not in done.stdout


def test_the_fast_lane_and_xfails_are_not_checked(tmp_path):
    body = ('def test_gone():\n    pytest.skip("no frobnicator here")\n\n\n'
            '@pytest.mark.xfail(reason="known")\ndef test_known():\n    assert False\n')
    assert run(tmp_path, body, "--lane", "fast").returncode == 0
    done = run(tmp_path, body.split("\n\n\n", 1)[1])  # the xfail alone, in the full lane
    assert done.returncode == 0 and "1 xfailed" in done.stdout, done.stdout


def test_a_failing_run_keeps_its_own_status(tmp_path):
    done = run(tmp_path, 'def test_bad():\n    assert False\n\n\ndef test_gone():\n    pytest.skip("nope")\n')
    assert done.returncode == 1 and "test_case.py::test_gone: nope" in done.stdout


def test_every_expected_skip_says_why():
    assert EXPECTED_SKIPS and all(pattern and len(why) > 20 for pattern, why in EXPECTED_SKIPS)
