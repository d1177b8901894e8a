"""The evidence panel: a search's answer with its citations written as the ranks shown in the gallery, and the
parts of a Cover query."""
from __future__ import annotations

import re
from html import escape
from typing import Any, Sequence

from ui import strings as S
from ui.present import subquery_text

_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def cite_html(photo_id: int, ranks: dict[int, int]) -> str:
    """A citation as the page shows it: the photo's rank in the gallery on screen, a link that opens that photo
    (CITE_JS); a cited photo that is not in the gallery is named by its id."""
    rank = ranks.get(int(photo_id))
    if rank is None:
        return escape(S.CITED_OFF_SCREEN.format(photo=photo_id))
    return (f"<a class='ecolens-cite' href='#photo-{rank}' "
            f"title='{escape(S.CITE_TITLE.format(rank=rank), quote=True)}'>#{rank}</a>")


def evidence_md(stages: dict[str, Any], hits: Sequence[dict[str, Any]] = ()) -> str:
    """The evidence answer, its citations written as the ranks shown in the gallery (`hits`; each a link that
    opens the photo; the ids stay in the JSON result), and the parts of the query (the parts no photo covers
    are said above the gallery: cover_header)."""
    parts = []
    ans = stages.get("answer") or {}
    if ans.get("text"):
        ranks = {int(h["id"]): int(h.get("rank") or i + 1) for i, h in enumerate(hits)}
        raw = escape(str(ans["text"]))
        inline = {int(x) for m in _CITATION.finditer(raw) for x in m.group(1).split(",")}
        text = _CITATION.sub(lambda m: "[" + ", ".join(cite_html(int(x), ranks) for x in m.group(1).split(","))
                             + "]", raw)
        # the photos it used are listed after it only where the text does not already cite them
        cited = ", ".join(cite_html(int(i), ranks) for i in ans.get("cited_ids") or [] if int(i) not in inline)
        label = S.EVIDENCE_REFUSED if ans.get("refused") else S.EVIDENCE if ans.get("verified") else \
            S.EVIDENCE_UNVERIFIED  # an answer is "with evidence" only when it passed the evidence check
        parts.append(f"**{escape(label)}:** " + text + (f" ({S.CITED} {cited})" if cited else ""))
    cov = stages.get("coverage") or {}
    if cov.get("subqueries"):
        subs = cov["subqueries"]
        parts.append(f"**{S.SUBQUERIES}:** " + "; ".join(escape(subquery_text(subs, i)) for i in range(len(subs))))
    return "\n\n".join(parts)
