"""The web app speaks its own words: no string the page shows (ui/strings.py, ui/strings_camtrap.py,
ui/strings_web.py) and no message core raises or notices on the way to the page, once passed through
ui.forms.web_words, holds a command-line option, a developer's term or a doubled full stop."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core.contracts.errors import InputError, NotFoundError
from ui import strings as S
from ui import strings_camtrap, strings_web
from ui.forms import user_message, web_notices, web_words

ROOT = Path(__file__).resolve().parents[2]
JARGON = re.compile(r"--[a-z]|(?<!\.)\.\.(?!\.)|\badaptor\b|\btokens?\b|\bencoder\b|rerank_plan|image_search|"
                    r"\brerank_k\b|\bsubq\b|\bRRF\b|\bembedder\b|\bdense score\b|\bfirst-stage\b|\bbaseline\b|"
                    r"\bpipeline\b|\bstage\b|"
                    r"\bp\(yes\)|\bsub-query\b|python app\.py", re.IGNORECASE)
# modules whose messages can reach the page (searching, filters, labels, exports, serving, backends at search time)
REACH_THE_PAGE = ["core/search/corpus.py", "core/contracts/bounds.py", "core/contracts/search_request.py",
                  "core/contracts/records.py", "core/labels.py", "core/exports.py", "core/contracts/sessionlog.py",
                  "core/served.py", "core/imageio.py", "core/search/engine.py", "core/search/presets.py",
                  "core/ingest/sources.py", *[str(p.relative_to(ROOT)) for p in
                                              sorted((ROOT / "core" / "methods").glob("*.py"))]]


def _texts(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _texts(v)]
    return []


def test_every_string_of_the_page_is_in_its_words():
    skip = {"WEB_WORDS", "WEB_FIELDS", "REASON_WORDS", "METHOD_NAMES"}  # mappings: their keys
    bad = [(name, t) for module in (S, strings_camtrap, strings_web) for name, value in vars(module).items()
           if name.isupper() and name not in skip
           for t in _texts(value) if JARGON.search(re.sub(r"\{[^}]*\}", "", t))]
    skip.add("RERANK_MODES")  # (label, value) pairs: the page shows the labels
    bad = [b for b in bad if b[0] != "RERANK_MODES"] + [("RERANK_MODES", label) for label, _ in S.RERANK_MODES
                                                          if JARGON.search(label)]
    bad += [("METHOD_NAMES", v) for v in S.METHOD_NAMES.values() if JARGON.search(v)]
    assert bad == []


def _messages(path: Path) -> list[str]:
    """The constant text of every error raised and every notice written in a module (f-strings joined with a
    stand-in for the values)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name in ("InputError", "NotFoundError", "BackendError", "notice") or (
                name == "append" and "notice" in ast.unparse(node.func)):
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    out.append(arg.value)
                elif isinstance(arg, ast.JoinedStr):
                    out.append("".join(v.value if isinstance(v, ast.Constant) else "X" for v in arg.values))
    return out


@pytest.mark.parametrize("module", REACH_THE_PAGE)
def test_core_messages_reach_the_page_in_its_words(module):
    said = [web_words(m) for m in _messages(ROOT / module)]
    assert [m for m in said if JARGON.search(m)] == []


def test_messages_become_single_sentences():
    assert user_message(InputError("The query is empty.", "type what you are looking for.")) == \
        "The query is empty. Type what you are looking for."
    assert user_message(NotFoundError("No session 4", "")) == "No session 4."
    message = user_message(InputError("Bounding box (1, 80, 2, 60) is not west,south,east,north in degrees",
                                      "e.g. --bbox -10.5,35,30,60 (longitudes -180..180, latitudes -90..90, "
                                      "south <= north)"))
    assert "--" not in message and ".." not in message and message.startswith("The place box")
    assert user_message(InputError("The start date is after the end date", "swap --date-from and --date-to")) \
        == "The start date is after the end date. Swap the two dates."
    assert web_notices(["no photo passes the filters", "no photo passes the filters."]) == \
        ["No photo passes the filters."]


def test_a_search_cut_by_its_time_limit_and_an_index_repaired_are_said_in_the_pages_words():
    said = web_notices([
        "the search stopped at Verify's time limit of 90 s (the photo checker at http://gpu:8000/v1 took 85 s of "
        "it): 40 of 100 photos were not checked by the photo checker at http://gpu:8000/v1 and follow the checked "
        "ones in first-stage order; raise deadline_verify_s to wait longer",
        "because of the same time limit, the 8 photos were not checked by the photo checker (fieldguide) and keep "
        "their first-stage order",
        "index check: vectors-1.faiss is damaged (its checksum differs); an ingest is running, so it was not "
        "repaired now: run `python app.py repair` after it",
        "the photo index changed on disk but could not be read; the photos known before are searched (see the "
        "log; run `python app.py repair`)"])
    assert [m for m in said if JARGON.search(m) or "deadline_" in m] == [], said
    assert "whoever runs EcoLens can let searches wait longer" in said[0]
