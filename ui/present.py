"""Turning results, stages and log records into what the views show: gallery items, escaped HTML panels and
Markdown (a check's badge: ui.badges; the views' tables: ui.tables; camera-trap words: ui.camtrap_present).
Pure functions of plain data (no gradio), so the handlers stay thin and testable.

Scores: each view shows one scale with a stated meaning and range (ui.strings.SCALES): 'similarity' (the
photo's cosine with the query's words, clamped to 0-1: core.search.scales; every preset has it) or, once a
photo's checks were made (Verify), 'checks passed' (0-100%: the share of the yes/no checks asked that it
passed, a check not made counting as undecided; with how many were made: "67% (2 of 3 checked)"). A
ranking score that is neither (rank fusion) is never shown as a similarity."""
from __future__ import annotations

import math
import re
from html import escape
from pathlib import PurePosixPath
from typing import Any, Callable, Iterable, Sequence
from urllib.parse import urlparse

from core.contracts import standin_scores
from core.contracts.limits import CHECKS_RANGE, SIMILARITY_RANGE, on_similarity_scale
from core.contracts.verdicts import NOT_CHECKED
from ui import strings as S
from ui.badges import badge_reason, badges_html, check_verdict
from ui.camtrap_present import caption_tail, in_box
from ui.licence_names import licence_html, licence_text


# ---- scores ---------------------------------------------------------------------------------------
def scale_of(stages: dict[str, Any] | None) -> str:
    """'checks' when photos were scored by yes/no checks (a rerank where every check was "not checked", as with
    a judge that failed its check, scores none: its photos keep their similarity); 'pictures' when they were
    found by the pictures searched with (VisRet drew some, or the user gave an example); else 'similarity'."""
    stages = stages or {}
    if checked_ids(stages):  # a photo with a check made; checks all "not checked" put nothing on this scale
        return "checks"
    return "pictures" if searched_by_pictures(stages) else "similarity"


def searched_by_pictures(stages: dict[str, Any] | None) -> bool:
    vis = (stages or {}).get("visret") or {}
    return bool(vis) and not vis.get("fallback") and bool(vis.get("visualizations") or vis.get("examples"))


def standin_model(stages: dict[str, Any] | None, scale: str) -> str | None:
    """The stand-in embedder whose numbers a similarity `scale` shows (core.search.scales.standin_similarity),
    or None: a real model's similarity, or a checks scale."""
    return (stages or {}).get("standin_similarity") if scale in ("similarity", "pictures") else None


def scale_words(scale: str, stages: dict[str, Any] | None = None) -> tuple[str, str]:
    """(name, meaning) of the view's scale: ui.strings.SCALES, or STANDIN_SCALE when a stand-in made it."""
    model = standin_model(stages, scale)
    if model:
        return S.STANDIN_SCALE[0], standin_scores.meaning(model)
    return S.SCALES[scale]


def scale_line(scale: str, stages: dict[str, Any] | None = None) -> str:
    """The score line under the results; for a search by drawings, also how the order was made (it fuses
    each picture's ranking, so the similarities shown need not fall in rank order)."""
    name, meaning = scale_words(scale, stages)
    line = S.SCORE_LINE.format(scale=name, meaning=meaning)
    vis = (stages or {}).get("visret") or {}
    pictures = len(vis.get("visualizations") or []) + int(vis.get("examples") or 0)
    if pictures > 1:
        line += " " + S.FUSED_ORDER.format(n=pictures)
    return line


def checked_ids(stages: dict[str, Any] | None) -> dict[int, float]:
    """photo id -> its checks score (0-100) for every photo the judge checked."""
    return {int(p["id"]): float(p.get("score", 0.0)) for p in ((stages or {}).get("rerank") or {}).get("photos") or []
            if "id" in p and p.get("score", 0.0) is not None}  # a photo none of whose checks could be made: none


def checks_made(stages: dict[str, Any] | None, photo_id: int) -> tuple[int, int]:
    """(checks made, checks asked) of one photo (0, 0 when it was not checked)."""
    answers = answers_of(stages, photo_id)
    return sum(1 for a in answers if check_verdict(a) != NOT_CHECKED and a.get("p_yes") is not None), len(answers)


def percent(score: float) -> str:
    """A checks score as the page writes it: rounded down, so 100% appears only for a score of exactly 100
    (every check made and passed surely), never for 99.6."""
    lo, hi = SCALE_RANGES["checks"]
    return f"{math.floor(min(hi, max(lo, float(score))) + 1e-9):.0f}%"


def score_text(hit: dict[str, Any], scale: str, checked: dict[int, float] | None = None,
               similarity_is_score: bool = False, made: tuple[int, int] | None = None) -> str:
    """The hit's score on `scale`, as the page writes it: '0.83' (similarity, 0-1) or '83%' (checks passed, from
    the judge's own score of the photo when `checked` has it), with '(2 of 3 checked)' when `made` (checks made,
    asked) says some were not made. `similarity_is_score`: rankings by similarity itself (the dialogue's
    candidates), whose hits carry no separate similarity."""
    if scale == "checks":
        if checked is not None and int(hit["id"]) not in checked:
            return S.NOT_CHECKED
        text = percent((checked or {}).get(int(hit["id"]), hit.get("score", 0.0)))
        if made and made[0] < made[1]:
            text += " " + S.CHECKS_MADE.format(made=made[0], asked=made[1])
        return text
    sim = on_similarity_scale(hit.get("similarity", hit.get("score") if similarity_is_score else None))
    return "–" if sim is None else f"{sim:.2f}"


def name_of(hit: dict[str, Any]) -> str:
    """What a photo is called on the page: its common name, its taxon, the species someone identified on it (a
    camera-trap frame: `identified`, ui.camtrap_form), or (a photo of your own without a species) its file name;
    the photo id only when none is known."""
    named = hit.get("common_name") or hit.get("taxon") or hit.get("identified")
    if named:
        return named
    path = str(hit.get("path") or "")
    file = PurePosixPath(urlparse(path).path if "://" in path else path.replace("\\", "/")).name
    return file or f"photo {hit['id']}"


# the range each scale holds to, the ones core.search.scales clamps to (the page holds to them too for hits that
# carry a raw cosine, the dialogue's)
SCALE_RANGES = {"similarity": SIMILARITY_RANGE, "pictures": SIMILARITY_RANGE, "checks": CHECKS_RANGE}


# ---- galleries ------------------------------------------------------------------------------------
def gallery_items(hits: Sequence[dict[str, Any]], stages: dict[str, Any] | None,
                  paths: Sequence[str], scale: str | None = None) -> list[tuple[str, str]]:
    """(file, caption) per hit, the file being the served copy in `paths` (ui.photos makes them). The caption
    starts with the species (so a narrow screen still shows it), then rank and score on the view's one scale
    (scale 'rank': no score, for views that set rankings with different scales side by side; no `stages` at
    all: a ranking by similarity itself, the dialogue's), and for a photo that covers parts of the query (Cover)
    how many. Gradio shows captions as text."""
    scale = scale or scale_of(stages)
    checked = checked_ids(stages) if scale == "checks" else None
    short = part_names(((stages or {}).get("coverage") or {}).get("subqueries") or [])
    out = []
    for h, path in zip(hits, paths):
        made = checks_made(stages, h["id"]) if scale == "checks" else None
        score = "" if scale == "rank" else f" · {score_text(h, scale, checked, stages is None, made)}"
        if score and words_only(h, scale, stages):
            score = f" · {S.NO_PICTURE_SHORT}"
        elif score and standin_model(stages, scale):
            score = f" · {S.STANDIN_SCORE.format(score=score[3:])}"
        score += near_copies_text(h)
        if h.get("covers") is not None:  # a covering photo: what it covers first, so two lines always show it
            parts = ", ".join(short.get(t, t) for t in h["covers"])
            out.append((path, f"#{h['rank']} {S.COVERS.format(parts=parts)} · {name_of(h)}{score}"))
        else:
            out.append((path, f"{name_of(h)} · #{h['rank']}{score}{caption_tail(h)}{in_box(h, short=True)}"
                              f"{catalog_match(h, short=True)}"))
    return out


def words_only(hit: dict[str, Any], scale: str, stages: dict[str, Any] | None) -> bool:
    """A photo the catalog's words found with no similarity on a similarity scale: it has no vector (its file
    was never on this machine), so there is no number to show, only the words that found it."""
    return stages is not None and scale in ("similarity", "pictures") and hit.get("similarity") is None \
        and bool(hit.get("catalog_match"))


def catalog_match(hit: dict[str, Any], short: bool = False) -> str:
    """What the page says of a photo whose catalog text holds words of the query ('' for none): a few words
    for a gallery caption, a sentence for the photo view."""
    words = hit.get("catalog_match")
    if not words:
        return ""
    quoted = ", ".join(f"“{w}”" for w in words)
    return " · " + S.CATALOG_MATCH_SHORT.format(words=quoted) if short else S.CATALOG_MATCH.format(words=quoted)


def near_copies_text(hit: dict[str, Any]) -> str:
    """' · +2 near-copies' for a result with near-copies folded into it (core.vectors.near_copies), else ''."""
    n = len(hit.get("near_copies") or [])
    return "" if not n else " · " + (S.NEAR_COPIES[0] if n == 1 else S.NEAR_COPIES[1].format(n=n))


PART_CHARS = 24  # the longest short form of a part in a caption
_LEADING = re.compile(r"^(?:(?:a|an|the|its|their|with|and|showing|both|of)\s+)+", re.IGNORECASE)


def part_names(subqueries: Sequence[Any]) -> dict[str, str]:
    """Each part's text -> its short form for a caption: without the words every part starts with (the organism
    they all name) and without leading articles, cut at a word (never mid-word) to PART_CHARS.
    "Slate Reedpiper with a black crest" -> "black crest"."""
    texts = [str(q.get("text", q)) if isinstance(q, dict) else str(q) for q in subqueries]
    words = [re.findall(r"[\w'-]+", t) for t in texts]
    shared = 0  # the words every part starts with
    while len(words) > 1 and all(len(ws) > shared for ws in words) and \
            len({ws[shared].lower() for ws in words}) == 1:
        shared += 1
    out = {}
    for text, ws in zip(texts, words):
        kept = " ".join(ws[shared:])
        kept = _LEADING.sub("", kept).strip() or _LEADING.sub("", text).strip() or text
        if len(kept) > PART_CHARS:
            cut = kept[:PART_CHARS + 1].rsplit(" ", 1)[0] if " " in kept[:PART_CHARS + 1] else kept
            kept = cut.rstrip(" ,;") + "…"
        out[text] = kept
    return out


def cover_header(hits: Sequence[dict[str, Any]], stages: dict[str, Any] | None) -> str:
    """Above a Cover gallery: which ranks are the covering photos and where the rest begins, and the parts no
    photo covers ('' for other searches)."""
    cov = (stages or {}).get("coverage") or {}
    subs = cov.get("subqueries") or []
    if not subs:
        return ""
    covering = [h for h in hits if h.get("covers") is not None]
    lines = []
    if covering:
        last = covering[-1]["rank"]
        head = S.COVER_HEAD_ONE if last == 1 else S.COVER_HEAD_TWO if last == 2 else S.COVER_HEAD.format(last=last)
        rest = S.COVER_REST.format(first=last + 1) if len(hits) > len(covering) else "."
        lines.append(f"**{head}** {S.COVER_HEAD_WHAT}{rest}")
    else:
        lines.append(S.COVER_NONE)
    if cov.get("uncovered"):
        lines.append(f"**{S.UNCOVERED}:** " + "; ".join(escape(subquery_text(subs, i)) for i in cov["uncovered"]))
    return "\n\n".join(lines)


def visualization_items(stages: dict[str, Any]) -> list[tuple[str, str]]:
    """Generated pictures (VisRet and the coverage reference), each captioned as drawn, with its variant."""
    vis = list((stages.get("visret") or {}).get("visualizations") or [])
    ref = (stages.get("coverage") or {}).get("reference")
    if ref:
        vis.append(ref)
    return [(v["path"], f"{S.GENERATED} · {S.SEED.format(seed=v.get('seed', '?'))}") for v in vis if v.get("path")]


# ---- the photo's explanation ---------------------------------------------------------------------
def _stage_photo(stages: dict[str, Any], stage: str, photo_id: int) -> dict[str, Any] | None:
    for p in (stages.get(stage) or {}).get("photos") or []:
        if int(p.get("id", -1)) == int(photo_id):
            return p
    return None


def answers_of(stages: dict[str, Any] | None, photo_id: int) -> list[dict[str, Any]]:
    """The yes/no answers the judge gave for this photo (empty when it was not checked)."""
    found = _stage_photo(stages or {}, "rerank", photo_id)
    return list(found.get("answers") or []) if found else []


def _place(h: dict[str, Any]) -> str:
    lat, lon = h.get("latitude"), h.get("longitude")
    return "" if lat is None or lon is None else f"{float(lat):.4f}, {float(lon):.4f}"


def attribution(hit: dict[str, Any]) -> str:
    return S.ATTRIBUTION.format(who=hit.get("rights_holder") or S.UNKNOWN_HOLDER,
                                license=licence_text(hit.get("license")) or S.UNKNOWN_LICENSE)


def closest_picture(stages: dict[str, Any] | None, photo_id: int) -> tuple[str, str | None]:
    """(caption, file of the drawing or None) of the picture searched with that is closest to the photo, as
    the pictures strip captions it; ('', None) when the search drew nothing or did not record it."""
    vis = (stages or {}).get("visret") or {}
    got = (vis.get("closest_picture") or {}).get(str(int(photo_id)))
    if not got:
        return "", None
    if "example" in got:
        return S.YOUR_EXAMPLE, None
    for v in vis.get("visualizations") or []:
        if v.get("index") == got.get("drawing") and v.get("organism", 0) == got.get("organism", 0):
            return f"{S.GENERATED} · {S.SEED.format(seed=v.get('seed', '?'))}", v.get("path")
    return "", None


def _closest_html(hit: dict[str, Any], stages: dict[str, Any], picture_url: Callable[[str | None], str | None]) -> str:
    caption, path = closest_picture(stages, hit["id"])
    if not caption:
        return ""
    src = picture_url(path) if path else None
    img = (f"<img src='{escape(src, quote=True)}' alt='{escape(caption, quote=True)}' class='ecolens-closest-img'>"
           if src else "")
    sim = hit.get("similarity")
    shown = f"{float(sim):.2f}" if sim is not None else "-"
    if sim is not None and standin_model(stages, "pictures"):
        shown = S.STANDIN_SCORE.format(score=shown)
    text = S.CLOSEST_PICTURE.format(picture=caption, similarity=shown)
    return f"<p class='ecolens-closest'>{img}{escape(text)}</p>"


def explanation_html(hit: dict[str, Any], stages: dict[str, Any], badges: bool = True,
                     scale: str | None = None,
                     picture_url: Callable[[str | None], str | None] = lambda path: None) -> str:
    """The explanation panel of one photo: the score on the view's scale (default: what the stages call for)
    with its meaning, the picture searched with it was closest to (a thumbnail where `picture_url` gives the
    drawing's URL), sub-question badges, coverage, metadata, licence and attribution (all escaped)."""
    html = []
    scale = scale or scale_of(stages)
    checked = checked_ids(stages) if scale == "checks" else None
    if badges and words_only(hit, scale, stages):
        quoted = ", ".join(f"“{w}”" for w in hit["catalog_match"])
        html.append(f"<p class='ecolens-score'>{escape(S.NO_PICTURE.format(words=quoted))}.</p>")
    if badges:
        if not words_only(hit, scale, stages):
            name, meaning = scale_words(scale, stages)
            html.append(f"<p class='ecolens-score'><b>{escape(name[0].upper() + name[1:])}: "
                        f"{escape(score_text(hit, scale, checked, made=checks_made(stages, hit['id'])))}</b>"
                        f"<br><span class='ecolens-scale'>"
                        f"{escape(meaning[0].upper() + meaning[1:])}.</span></p>")
            html.append(_closest_html(hit, stages, picture_url))
        if hit.get("matched_detection"):
            html.append(f"<p class='ecolens-in-box'>{escape(in_box(hit))}</p>")
        if hit.get("catalog_match") and not words_only(hit, scale, stages):
            html.append(f"<p class='ecolens-catalog-match'>{escape(catalog_match(hit))}</p>")
        if hit.get("near_copies"):
            ids = ", ".join(str(i) for i in hit["near_copies"])
            html.append(f"<p class='ecolens-near-copies'>{escape(S.NEAR_COPIES_LIST.format(ids=ids))}</p>")
        inner = badges_html(answers_of(stages, hit["id"]))
        html.append(f"<div class='ecolens-badges'>{inner or escape(S.NO_BADGES)}</div>")
    cov = _stage_photo(stages, "coverage", hit["id"])
    if cov is not None:
        subqueries = (stages.get("coverage") or {}).get("subqueries") or []
        names = [subquery_text(subqueries, i) for i in cov.get("satisfies", [])]
        html.append("<p class='ecolens-cover'>" + escape(S.COVERS_LIST.format(parts="; ".join(names) or "-"))
                    + "</p>")
    rows = [("scientific_name", hit.get("taxon")), ("common_name", hit.get("common_name")),
            ("observed_on", hit.get("observed_on")), ("place", _place(hit)), ("license", hit.get("license")),
            ("rights_holder", hit.get("rights_holder")), ("id", hit.get("id")), ("rank", hit.get("rank")),
            ("caption", hit.get("caption"))]
    body = "".join(f"<tr><th>{escape(S.META[k])}</th>"
                   f"<td>{licence_html(v) if k == 'license' else escape(str(v))}</td></tr>"
                   for k, v in rows if v not in (None, ""))
    html.append(f"<table class='ecolens-meta'>{body}</table>")
    html.append(f"<p class='ecolens-attribution'>{escape(attribution(hit))}</p>")
    return "".join(html)


def subquery_text(subqueries: Sequence[Any], i: Any) -> str:
    if not 0 <= int(i) < len(subqueries):
        return str(i)
    q = subqueries[int(i)]
    return str(q.get("text", q)) if isinstance(q, dict) else str(q)


# ---- what scripts get -----------------------------------------------------------------------------
def results_json(state: dict[str, Any], notices: Sequence[str], status: str) -> dict[str, Any]:
    """The search as the API returns it: photo ids, ranks, scores on the stated scale, similarity, the
    yes/no answers (badges), coverage, metadata and notices. No server paths."""
    stages = state.get("stages") or {}
    scale = state.get("scale") or scale_of(stages)
    checked = checked_ids(stages)
    results = []
    for h in state.get("hits") or []:
        row = {k: h.get(k) for k in ("rank", "id", "similarity", "taxon", "common_name", "observed_on",
                                     "latitude", "longitude", "license", "license_code", "license_url",
                                     "rights_holder", "deployment_id", "event_id", "timestamp", "detections",
                                     "matched_detection", "event_frames", "event_frame_ids", "near_copies",
                                     "catalog_match")
               if k in h}
        if row.get("similarity") is not None:
            row["similarity"] = on_similarity_scale(row["similarity"])
        # `score` is on the stated scale (None: not on it, e.g. a photo with no check made); the ranking's own
        # number (a rank-fusion value, ...) is `ranking_score`, described by `ranking`
        row["score"] = checked.get(int(h["id"])) if scale == "checks" else row.get("similarity")
        row["ranking_score"] = h.get("score")
        row["checked"] = int(h["id"]) in checked
        made, asked = checks_made(stages, h["id"])
        if asked:
            row["checks"] = {"made": made, "asked": asked}
        row["badges"] = [{**{k: a.get(k) for k in ("question", "answer", "p_yes", "checked") if k in a},
                          "answer": check_verdict(a), "reason": badge_reason(a)} for a in answers_of(stages, h["id"])]
        if h.get("covers") is not None:
            row["covers"] = list(h["covers"])
        results.append(row)
    name, _ = S.SCALES[scale]
    _, meaning = scale_words(scale, stages)
    score = {"scale": name, "meaning": meaning, "range": list(SCALE_RANGES[scale])}
    if standin_model(stages, scale):
        score["standin"] = standin_model(stages, scale)
    return {"session_id": state.get("session_token") or None, "query": state.get("query", ""),
            "preset": state.get("preset", ""), "method": state.get("method", ""), "score": score,
            "ranking": stages.get("score"), "results": results, "notices": list(notices),
            "status": status}


# ---- other panels ---------------------------------------------------------------------------------
def notices_md(notices: Iterable[str]) -> str:
    return "\n".join(f"- {escape(str(n))}" for n in notices)
