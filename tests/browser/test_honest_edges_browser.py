"""Honest at the edges, on screen (Chromium against the real server): a Verify search for the README's "a frog
calling at night" names what the photo checker cannot see in the notice above the results ("not checked by
the photo checker: calling, at night"), the photo view marks those questions "not checked", and no shown
photo claims a confident yes to them."""
from __future__ import annotations

import re

from tests.browser.pages import QUERY, close_photo, open_photo, search


def test_parts_no_checker_can_see_are_named_not_claimed(server, open_browser, shot):
    page = open_browser()
    search(page, QUERY, preset="Verify")
    notices = page.locator("#search-notices").inner_text()
    assert "not checked by the photo checker" in notices.lower() and "calling" in notices and "at night" in notices
    open_photo(page, "#search-gallery", 0)
    info = page.locator("#lightbox-info").inner_text()
    lines = [ln for ln in info.splitlines() if re.search(r"calling|night", ln, re.I)]
    assert lines, info
    # a question about calling or the night is "not checked" wherever it is shown; never a sure yes
    assert not re.search(r"\byes\b[^\n]*(9\d|100)% sure", "\n".join(lines), re.I), lines
    assert "not checked" in info
    shot(page, "not-checked")
    close_photo(page)
