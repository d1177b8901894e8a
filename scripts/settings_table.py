"""Write the settings reference table, generated from the settings model (core/config/settings.py), into
docs/reference/settings.md between its markers; tests/unit/test_readme.py checks that the page is current.

    python scripts/settings_table.py           rewrite the table in the page (creating the page if missing)
    python scripts/settings_table.py --print   print the table only"""
import sys
from pathlib import Path

from core.config import markdown_table

ROOT = Path(__file__).resolve().parents[1]

PAGE = ROOT / "docs" / "reference" / "settings.md"
START, END = "<!-- settings:start -->", "<!-- settings:end -->"
NEW_PAGE = f"""# Settings reference

Every setting of EcoLens: its TOML key, its `ECOLENS_` environment variable, its type, default, the values it
accepts and what it does. Precedence: defaults < a TOML file (`--config FILE`, `$ECOLENS_CONFIG` or
`./ecolens.toml`, keys at the top level or under `[ecolens]`) < `ECOLENS_*` environment variables. The table is
generated from the settings model in `core/config/settings.py` by `python scripts/settings_table.py`; do not
edit it by hand.

{START}
{END}
"""


def table() -> str:
    return markdown_table()


def render(page: str) -> str:
    """`page` with the text between the markers replaced by the current table."""
    if START not in page or END not in page:
        raise ValueError(f"{PAGE.name} lacks the markers {START} and {END}")
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    if "--print" in argv:
        print(table())
        return 0
    page = PAGE.read_text(encoding="utf-8") if PAGE.exists() else NEW_PAGE
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(render(page), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
