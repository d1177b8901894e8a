"""A first screen that shows results (issue 35 item 8): the banner is one line (its whole text one click away),
at 1440x900 the first results are on screen after a search without scrolling, and on a 390 px phone every tab
is reachable (none behind an overflow menu) and captions wrap whole."""
from __future__ import annotations

import os
from pathlib import Path

from tests.browser.pages import TAB_LANDMARKS, search, show_tab

SHOTS = Path(os.environ.get("ECOLENS_SHOTS_DIR", "/tmp/ecolens-first-screen"))

BANNER_LINES_JS = """() => { const b = document.querySelector('#standin-banner');
  const line = b.querySelector('summary') || b; const lh = parseFloat(getComputedStyle(line).lineHeight) || 20;
  return line.getBoundingClientRect().height / lh; }"""
CUT_CAPTIONS_JS = """() => [...document.querySelectorAll('#search-gallery .thumbnail-item .caption-label')]
  .filter((c) => c.scrollHeight > c.clientHeight + 1 || getComputedStyle(c).textOverflow === 'ellipsis'
                 || c.scrollWidth > c.clientWidth + 1).map((c) => c.innerText)"""


def test_first_screen_on_a_desktop_and_a_phone(open_browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = open_browser()
    page.set_viewport_size({"width": 1440, "height": 900})
    assert page.locator("#standin-banner summary").is_visible()
    assert page.evaluate(BANNER_LINES_JS) <= 2.2  # at most two lines, the detail behind a click
    assert not page.locator("#standin-banner details p").is_visible()
    page.click("#standin-banner summary")
    assert "SYNTHETIC DEMO" in page.locator("#standin-banner details p").inner_text()  # the whole text, open
    page.click("#standin-banner summary")
    search(page, preset="Fast")
    page.evaluate("() => window.scrollTo(0, 0)")
    top = page.evaluate("() => document.querySelector('#search-gallery .thumbnail-item').getBoundingClientRect().top")
    page.screenshot(path=str(SHOTS / "desktop-1440x900.png"))
    assert top < 900, f"the first result starts at {top:.0f} px, below the 900 px screen"

    page.set_viewport_size({"width": 390, "height": 844})
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / "phone-390.png"))
    assert page.evaluate(BANNER_LINES_JS) <= 2.2
    assert not page.locator("#tabs .overflow-menu button").is_visible()  # no tab hides behind "..."
    for name in TAB_LANDMARKS:
        button = page.get_by_role("tab", name=name)
        assert button.is_visible(), name
        box = button.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, (name, box)
        show_tab(page, name)  # clickable: its tab opens
    show_tab(page, "Search")
    page.locator("#search-gallery").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "phone-390-results.png"))
    assert page.evaluate(CUT_CAPTIONS_JS) == []
