"""What a naturalist reads after each kind of search (Fast, Visualize, Verify, Cover): the whole visible page,
the timing details opened and the photo view of the first result included, holds no internal word (a step's
internal name, "backend", "first-stage", "rule's question", a bare count of milliseconds, a setting's name).
The status is one short line; Cover captions name the parts each covering photo shows. Screenshots:
docs/screenshots/status-details.png (Verify, details open) and cover-parts.png."""
from __future__ import annotations

import re

from core.config import Settings, masked
from tests.browser.pages import QUERY, captions, close_photo, open_photo, search
from tests.unit.test_ui_wording import JARGON

COVER_QUERY = "Slate Reedpiper showing both its black crest and its orange belly"
SETTING_NAMES = sorted({name for name in masked(Settings()) if "_" in name} | {"llm", "captioner", "dtype"})
INTERNAL = re.compile(JARGON.pattern + r"|\bbackends?\b|\brule's question\b|\b\d+(?:\.\d+)?\s?ms\b|\bms\b|"
                      + "|".join(rf"\b{re.escape(n)}\b" for n in SETTING_NAMES), re.IGNORECASE)
# the banner speaks to whoever runs EcoLens (how to configure real models), the footer is Gradio's own
VISIBLE_TEXT_JS = """
() => { let text = document.body.innerText;
  for (const sel of ['#standin-banner', 'footer']) { const el = document.querySelector(sel);
    if (el && el.innerText.trim()) text = text.split(el.innerText).join(''); }
  return text; }
"""


def _open_details(page) -> None:
    page.wait_for_selector("#search-details", state="visible")  # offered once a search has details
    details = page.locator("#search-details")
    if not page.locator("#search-timings").is_visible():
        details.locator("button, .label-wrap").first.click()
    page.wait_for_selector("#search-timings li")


def _internal_words(page) -> list[str]:
    text = page.evaluate(VISIBLE_TEXT_JS)
    return sorted({m.group(0) for m in INTERNAL.finditer(text)})


def test_every_search_reads_in_plain_words(server, open_browser, shot):
    page = open_browser()
    assert not page.locator("#search-details").is_visible()  # nothing to detail before the first search
    for preset, query in (("Fast", QUERY), ("Visualize", QUERY), ("Verify", QUERY), ("Cover", COVER_QUERY)):
        search(page, query, preset=preset)
        status = page.locator("#search-status").inner_text().strip()
        assert "\n" not in status and re.fullmatch(r"Search \d+ · .* · done in (?:under )?[0-9.]+ s", status), status
        if preset != "Verify":  # no step named that did not run
            assert "check" not in status, status
        _open_details(page)
        details = page.locator("#search-timings").inner_text()
        assert "the whole search:" in details and not re.search(r"\bms\b", details), details
        if preset == "Fast":
            assert "drawing" not in details and "checking" not in details, details
        assert _internal_words(page) == [], (preset, _internal_words(page))
        open_photo(page, "#search-gallery", 0)
        assert _internal_words(page) == [], (preset, "photo view", _internal_words(page))
        close_photo(page)
        if preset == "Verify":
            assert re.search(r"\d+ checked with \d yes/no questions", status), status
            shot(page, "status-details")
        if preset == "Cover":
            covering = [c for c in captions(page) if re.match(r"#\d+ covers: ", c)]
            assert covering, captions(page)
            # the short names of the parts, whole words, not the whole sub-query
            assert all(re.fullmatch(r"#\d+ covers: (black crest|orange belly)(, (black crest|orange belly))? · .+", c)
                       for c in covering), covering
            header = page.locator("#search-scale").inner_text()
            assert re.search(r"#1 (?:to|and) #\d+: the photos that show the most parts of your query|#1: the photo",
                             header), header
            assert "the photos closest to your whole query" in header, header
            shot(page, "cover-parts")
