"""Print the settings reference as a Markdown table (pasted into README.md; a test checks it is current)."""
import sys
from dataclasses import fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.contracts.settings import Settings  # noqa: E402


def allowed(f) -> str:
    """The values a setting accepts, for the table."""
    if f.metadata.get("choices"):
        return ", ".join(f.metadata["choices"])
    lo, hi = f.metadata.get("lo"), f.metadata.get("hi")
    if lo is None and hi is None:
        return "text"
    kind = "whole number" if isinstance(f.default, int) else "number"
    return f"{kind} {lo:g}-{hi:g}" if hi is not None else f"{kind} >= {lo:g}"


def table() -> str:
    rows = ["| setting (TOML key / ECOLENS_ variable) | default | allowed | what it does |",
            "| --- | --- | --- | --- |"]
    for f in fields(Settings):
        default = repr(f.default) if f.default != "" else "''"
        rows.append(f"| `{f.name}` / `ECOLENS_{f.name.upper()}` | `{default}` | {allowed(f)} | {f.metadata['help']} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
