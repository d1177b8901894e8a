"""The fast lane (./test.sh fast) holds unit and hostile tests only: a browser test or anything outside those
folders that it collects is named, so the lane cannot grow slow unnoticed."""
from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import ROOT, fast_lane_intruders


def item(path: str, *markers: str) -> SimpleNamespace:
    return SimpleNamespace(path=ROOT / path, nodeid=f"{path}::test_x",
                           get_closest_marker=lambda name: object() if name in markers else None)


def test_the_fast_lane_names_browser_and_integration_tests():
    items = [item("tests/unit/test_engine.py"), item("tests/hostile/test_api_inputs.py"),
             item("tests/integration/test_bench_smoke.py"), item("tests/browser/test_app_browser.py", "browser"),
             item("tests/unit/test_odd.py", "browser")]
    assert fast_lane_intruders(items) == ["tests/integration/test_bench_smoke.py::test_x",
                                          "tests/browser/test_app_browser.py::test_x", "tests/unit/test_odd.py::test_x"]


def test_test_sh_reserves_fast_for_the_lane_and_passes_the_rest_to_pytest():
    script = (ROOT / "test.sh").read_text()
    assert 'if [ "${1:-}" = fast ]; then' in script and "shift" in script
    assert 'pytest --lane fast tests/unit tests/hostile "$@"' in script
    assert script.rstrip().endswith('exec "$VENV/bin/python" -m pytest "$@"')  # the full run, as CI calls it
