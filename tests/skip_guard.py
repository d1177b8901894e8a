"""A pytest plugin (tests/conftest.py loads it): in the full lane, a run where a test or a whole module was
skipped for a reason not listed in tests/expected_skips.py fails, and the summary names each such skip. The fast
lane (--lane fast) is not checked: it refuses browser and integration tests by design."""
from __future__ import annotations

import re

import pytest

from tests.expected_skips import EXPECTED_SKIPS

FIX = ("how to fix: install what is missing (bash scripts/setup.sh --dev; Debian's chromium for the browser "
       "tests), or, if the skip is legitimately expected in a full run, add its reason with why to "
       "tests/expected_skips.py")


def skip_reason(report) -> str | None:
    """The reason of a skipped test or module (None when the report is not a skip; an xfail is not one)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def is_expected(reason: str, expected: tuple[tuple[str, str], ...] = EXPECTED_SKIPS) -> bool:
    return any(re.search(pattern, reason) for pattern, _why in expected)


class SkipGuard:
    """Collects the skips of one run; fails the run on one that is not expected."""

    def __init__(self) -> None:
        self.unexpected: list[tuple[str, str]] = []  # (node id, reason)

    def _note(self, report) -> None:
        reason = skip_reason(report)
        if reason is not None and not is_expected(reason):
            self.unexpected.append((report.nodeid, reason))

    def pytest_collectreport(self, report) -> None:  # a module skipped whole (importorskip at module level)
        self._note(report)

    def pytest_runtest_logreport(self, report) -> None:
        self._note(report)

    def pytest_sessionfinish(self, session) -> None:
        # (a run whose every test was skipped ends as "no tests collected": that fails too)
        if self.unexpected and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.unexpected:
            return
        terminalreporter.section("skips not on the list of expected skips (tests/expected_skips.py)", red=True)
        for nodeid, reason in self.unexpected:
            terminalreporter.write_line(f"{nodeid}: {reason}")
        terminalreporter.write_line(f"the full lane fails on these {len(self.unexpected)} skip(s); {FIX}")


def pytest_configure(config) -> None:
    if config.getoption("--lane", default="full") != "fast":
        config.pluginmanager.register(SkipGuard(), "ecolens-skip-guard")
