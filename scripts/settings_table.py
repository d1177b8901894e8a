"""Print the settings reference as a Markdown table (pasted into README.md; a test checks it is current)."""
import sys
from dataclasses import fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.settings import Settings  # noqa: E402


def table() -> str:
    rows = ["| setting (TOML key / ECOLENS_ variable) | default | what it does |", "| --- | --- | --- |"]
    for f in fields(Settings):
        default = repr(f.default) if f.default != "" else "''"
        rows.append(f"| `{f.name}` / `ECOLENS_{f.name.upper()}` | `{default}` | {f.metadata['help']} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
