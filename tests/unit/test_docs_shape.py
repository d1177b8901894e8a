"""The documentation reads at a glance: no line of README.md or docs/ over 400 characters (prose is wrapped near
120 columns; a table cell that long is a paragraph in the wrong place), no path of one machine (a home folder, a
temporary or work folder, an environment's interpreter used as a command: commands are `python ...` run from
the repository root after `bash scripts/setup.sh`), and docs/benchmarks.md opens with its summary table of at
most 30 rows, the dated runs in docs/benchmarks-log.md."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "docs").rglob("*.json"))]
MAX_LINE = 400
# written by programs, whose table rows carry each entry's whole text: held to the path rule only
GENERATED = {"docs/reference/settings.md": "scripts/settings_table.py, from core/contracts/settings_fields.py",
             "docs/fieldguide-report/report.md": "python app.py eval --out docs/fieldguide-report"}
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(root|home|tmp|work|Users|mnt|opt|var/folders)/"
                          r"|~/\.cache/\S*/bin/|\.venv/bin/|venv/bin/python")


def _lines(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), 1))


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_line_is_a_wall_and_no_path_is_one_machines(path):
    generated = str(path.relative_to(ROOT)) in GENERATED
    long = [f"{n}: {len(line)} characters" for n, line in _lines(path) if len(line) > MAX_LINE and not generated]
    assert long == [], "wrap the prose at about 120 columns, or make the cell a paragraph"
    paths = [f"{n}: {m.group(0)}" for n, line in _lines(path) for m in MACHINE_PATH.finditer(line)]
    assert paths == [], "write commands as `python ...` from the repository root, and folders as what they are"


def test_the_machine_path_check_finds_what_it_is_for():
    for said in ("/root/.cache/ecolens/venv/bin/python bench/load.py", "Workdir `/work/scale-runs/5m`",
                 "--baseline /tmp/main-copy", "~/.cache/ecolens/venv/bin/python app.py", "/home/ana/photos"):
        assert MACHINE_PATH.search(said), said
    for fine in ("`~/.cache/ecolens/venv` (the default)", "python bench/load.py", "storage/migrations/versions/",
                 "https://example.org/tmp/x", "data_dir/hub"):
        assert not MACHINE_PATH.search(fine), fine


def test_the_benchmark_page_opens_with_one_screen_of_latest_figures():
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    before_table, table = text.split("\n| benchmark |", 1)
    rows = [line for line in ("| benchmark |" + table).splitlines() if line.startswith("|")]
    header, rows = rows[0], rows[2:]
    assert not re.search(r"^#+ ", before_table.split("\n", 1)[1], re.M)  # no section before the summary
    assert 0 < len(rows) <= 30
    for column in ("what", "figure", "date", "machine", "command"):
        assert column in header
    assert all(re.search(r"\| 20\d\d-\d\d-\d\d \|", row) for row in rows)
    assert (ROOT / "docs" / "benchmarks-log.md").exists() and "(benchmarks-log.md" in text
