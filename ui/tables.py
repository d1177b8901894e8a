"""The Markdown tables of the Compare, Label and History views: the overlap of methods' results, the annotators'
agreement, and any value made safe inside a table cell. Pure functions of plain data, no gradio."""
from __future__ import annotations

from html import escape
from typing import Any, Sequence

from ui import strings as S


def overlap_md(names: Sequence[str], id_lists: Sequence[Sequence[int]], k: int) -> str:
    """Pairwise overlap of the top-k ids of each method (count and share of k)."""
    head = "| | " + " | ".join(escape(n) for n in names) + " |\n|---|" + "---|" * len(names)
    rows = []
    for a, ids_a in zip(names, id_lists):
        cells = []
        for ids_b in id_lists:
            shared = len(set(ids_a[:k]) & set(ids_b[:k]))
            cells.append(f"{shared} ({shared / max(k, 1):.0%})")
        rows.append(f"| {escape(a)} | " + " | ".join(cells) + " |")
    return "\n".join([head, *rows])


def kappa_md(agreements: Sequence[Any]) -> str:
    rows = [S.KAPPA_ROW.format(a=escape(g.annotators[0]), b=escape(g.annotators[1]), pairs=g.pairs,
                               observed=g.observed, kappa="-" if g.kappa is None else f"{g.kappa:.3f}")
            for g in agreements if g.pairs]
    return S.KAPPA_NONE if not rows else "\n".join([S.KAPPA_HEAD, *rows])


def md_cell(value: Any) -> str:
    """A value safe inside a Markdown table cell (escaped, no pipes or newlines)."""
    return escape(" ".join(str(value).split())).replace("|", "\\|")
