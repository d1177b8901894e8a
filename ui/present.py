"""Turning results, stages and log records into what the views show: gallery items, escaped HTML panels and
Markdown tables. Pure functions of plain data (no gradio), so the handlers stay thin and testable."""
from __future__ import annotations

from html import escape
from typing import Any, Iterable, Sequence

from ui import strings as S


def gallery_items(hits: Sequence[dict[str, Any]], stages: dict[str, Any] | None,
                  paths: Sequence[str]) -> list[tuple[str, str]]:
    """(file, caption) per hit, the file being the served copy in `paths` (ui.photos makes them); the caption
    carries rank and score, and for a photo that covers parts of the query (Cover) how many of them. Gradio
    shows captions as text."""
    parts = len(((stages or {}).get("coverage") or {}).get("subqueries") or [])
    out = []
    for h, path in zip(hits, paths):
        name = h.get("common_name") or h.get("taxon") or f"photo {h['id']}"
        cover = ""
        if h.get("covers") is not None:
            cover = S.COVERS.format(n=len(h["covers"]), of=parts or len(h["covers"])) + " · "
        out.append((path, f"#{h['rank']} · {cover}{float(h['score']):.3f} · {name}"))
    return out


def _stage_photo(stages: dict[str, Any], stage: str, photo_id: int) -> dict[str, Any] | None:
    for p in (stages.get(stage) or {}).get("photos") or []:
        if int(p.get("id", -1)) == int(photo_id):
            return p
    return None


def badges_html(answers: Iterable[dict[str, Any]]) -> str:
    """One badge per sub-question: the answer, the judge's confidence and its reason, all escaped."""
    parts = []
    for a in answers:
        ans = str(a.get("answer", "")).strip()
        yes = ans.lower().startswith("y")
        p_yes = a.get("p_yes")
        conf = f"{float(p_yes):.0%} yes" if isinstance(p_yes, (int, float)) else ""
        parts.append(
            f'<div class="ecolens-badge {"badge-yes" if yes else "badge-no"}">'
            f"<b>{escape(ans or '?')}</b> <span class='badge-q'>{escape(str(a.get('question', '')))}</span>"
            f" <span class='badge-conf'>{escape(conf)}</span>"
            f"<div class='badge-reason'>{escape(str(a.get('reason', '') or ''))}</div></div>")
    return "".join(parts)


def _place(h: dict[str, Any]) -> str:
    lat, lon = h.get("latitude"), h.get("longitude")
    return "" if lat is None or lon is None else f"{float(lat):.4f}, {float(lon):.4f}"


def explanation_html(hit: dict[str, Any], stages: dict[str, Any], badges: bool = True) -> str:
    """The explanation panel of one photo: sub-question badges, coverage, metadata and licence (escaped)."""
    html = []
    if badges:
        rr = _stage_photo(stages, "rerank", hit["id"])
        inner = badges_html(rr.get("answers") or []) if rr else ""
        html.append(f"<div id='explanation-badges' class='ecolens-badges'>{inner or escape(S.NO_BADGES)}</div>")
    cov = _stage_photo(stages, "coverage", hit["id"])
    if cov is not None:
        subqueries = (stages.get("coverage") or {}).get("subqueries") or []
        names = [_subquery_text(subqueries, i) for i in cov.get("satisfies", [])]
        html.append("<p class='ecolens-cover'>covers: " + escape("; ".join(names) or "-") + "</p>")
    rows = [("rank", hit.get("rank")), ("score", f"{float(hit.get('score', 0)):.4f}"), ("id", hit.get("id")),
            ("scientific_name", hit.get("taxon")), ("common_name", hit.get("common_name")),
            ("observed_on", hit.get("observed_on")), ("place", _place(hit)), ("license", hit.get("license")),
            ("rights_holder", hit.get("rights_holder")), ("caption", hit.get("caption"))]
    body = "".join(f"<tr><th>{escape(S.META[k])}</th><td>{escape(str(v))}</td></tr>"
                   for k, v in rows if v not in (None, ""))
    html.append(f"<table class='ecolens-meta'>{body}</table>")
    return "".join(html)


def _subquery_text(subqueries: Sequence[Any], i: Any) -> str:
    if not 0 <= int(i) < len(subqueries):
        return str(i)
    q = subqueries[int(i)]
    return str(q.get("text", q)) if isinstance(q, dict) else str(q)


def visualization_items(stages: dict[str, Any]) -> list[tuple[str, str]]:
    """Generated pictures (VisRet and the coverage reference), each captioned as generated with its seed."""
    vis = list((stages.get("visret") or {}).get("visualizations") or [])
    ref = (stages.get("coverage") or {}).get("reference")
    if ref:
        vis.append(ref)
    return [(v["path"], f"{S.GENERATED} · seed {v.get('seed', '?')}") for v in vis if v.get("path")]


def evidence_md(stages: dict[str, Any]) -> str:
    """The evidence answer with its cited photo ids, and the coverage report (sub-queries nobody covers)."""
    parts = []
    ans = stages.get("answer") or {}
    if ans.get("text"):
        cited = ", ".join(str(i) for i in ans.get("cited_ids") or [])
        parts.append(f"**{escape(S.EVIDENCE)}:** " + escape(str(ans["text"]))
                     + (f" ({S.CITED} {escape(cited)})" if cited else ""))
    cov = stages.get("coverage") or {}
    if cov.get("subqueries"):
        subs = cov["subqueries"]
        parts.append(f"**{S.SUBQUERIES}:** " + "; ".join(escape(_subquery_text(subs, i)) for i in range(len(subs))))
        if cov.get("uncovered"):
            parts.append(f"**{S.UNCOVERED}:** " + "; ".join(escape(_subquery_text(subs, i)) for i in cov["uncovered"]))
    return "\n\n".join(parts)


def notices_md(notices: Iterable[str]) -> str:
    return "\n".join(f"- {escape(str(n))}" for n in notices)


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
