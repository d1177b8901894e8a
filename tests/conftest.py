"""Test set-up shared by every layer: the repository root on sys.path (helpers live in tests/photos.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))



from fieldguide.plugin import register as _register_fieldguide  # noqa: E402

# Tests use the field-guide world as data: the plug-in is registered as app.py registers it. A test that reads
# requests in the world's terms hands its rule books in (tests/photos.py: world_books), as app.py does.
_register_fieldguide()


# the full lane fails on a skip not listed in tests/expected_skips.py (tests/skip_guard.py)
pytest_plugins = ("tests.skip_guard",)

FAST_LANE_DIRS = ("unit", "hostile")  # ./test.sh fast: what runs in under two minutes, no browser


def pytest_addoption(parser):
    parser.addoption("--lane", choices=("full", "fast"), default="full",
                     help="fast: only tests/unit and tests/hostile may run (./test.sh fast); full: everything")


def fast_lane_intruders(items) -> list[str]:
    """The ids of collected tests that do not belong in the fast lane: browser tests, and anything outside
    tests/unit and tests/hostile (integration tests, benchmark smoke runs)."""
    tests = ROOT / "tests"
    out = []
    for item in items:
        try:
            folder = Path(str(item.path)).resolve().relative_to(tests).parts[0]
        except ValueError:
            folder = ""
        if folder not in FAST_LANE_DIRS or item.get_closest_marker("browser") is not None:
            out.append(item.nodeid)
    return out


def pytest_collection_modifyitems(config, items):
    if config.getoption("--lane") != "fast":
        return
    intruders = fast_lane_intruders(items)
    if intruders:
        raise pytest.UsageError("the fast lane runs tests/unit and tests/hostile only, never a browser or "
                                f"integration test; collected: {', '.join(intruders[:10])}"
                                + (f" and {len(intruders) - 10} more" if len(intruders) > 10 else ""))
