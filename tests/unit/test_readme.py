"""The settings reference table (docs/reference/settings.md) is the one the code declares, and the README's test
command is the one CI runs."""
from pathlib import Path

from scripts.settings_table import table

ROOT = Path(__file__).resolve().parents[2]


def test_settings_table_is_current():
    reference = (ROOT / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
    start = reference.index("<!-- settings:start")
    block = reference[reference.index("\n", start) + 1: reference.index("<!-- settings:end -->")].strip()
    assert block == table().strip(), \
        "run: python scripts/settings_table.py and paste it into docs/reference/settings.md"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "./test.sh" in readme and "\n./test.sh\n" in ci + "\n"
