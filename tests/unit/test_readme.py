"""The settings reference table (docs/reference/settings.md) is the one the code declares, and the README's test
command is the one CI runs."""
from pathlib import Path

from scripts.settings_table import render

ROOT = Path(__file__).resolve().parents[2]


def test_settings_table_is_current():
    page = (ROOT / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
    assert page == render(page), "the settings reference is stale: run python scripts/settings_table.py"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "./test.sh" in readme and "\n./test.sh\n" in ci + "\n"
