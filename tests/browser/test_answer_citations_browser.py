"""Answers point at the screen, in Chromium against the real server: a question typed in the query box offers
the answer beside it (no Advanced settings to open); the answer cites the ranks shown in the gallery, and
clicking a citation opens that photo in the photo view."""
from __future__ import annotations

import re

from tests.browser.pages import close_photo, wait_searched
from ui import strings as S

QUESTION = "what colour are the wings of a Gold-crested Tuftling?"


def test_a_question_offers_its_answer_and_citations_open_the_photos(server, open_browser, shot):
    page = open_browser()
    box = page.locator("#search-answer")
    page.fill("#search-query textarea", "a frog on a lily pad")
    page.locator("#search-query textarea").dispatch_event("input")
    assert not box.is_visible()
    page.fill("#search-query textarea", QUESTION)
    box.wait_for(state="visible")
    assert S.ASK_ANSWER in box.inner_text()
    assert not page.locator("#search-advanced .form").first.is_visible()  # Advanced settings stay closed
    box.locator("input").check()
    # the species the question names as the taxon filter (the page offers it): an answer cites only photos
    # that show what it names, so the results should be that species
    page.wait_for_selector("#search-taxon-suggestion", state="visible")
    n = page.evaluate("window.__searches = (window.__searches || 0) + 1")
    page.click("#search-taxon-suggestion")
    wait_searched(page, n)
    cite = page.locator("#search-evidence a.ecolens-cite").first
    cite.wait_for()
    rank = int(cite.get_attribute("href").removeprefix("#photo-"))
    assert cite.inner_text() == f"#{rank}"
    evidence = page.locator("#search-evidence").inner_text()
    assert not re.search(r"\[\d+\]", evidence)  # no bare photo id is cited: ranks (#3) only
    shot(page, "answer-citations")
    cite.click()
    page.wait_for_function("(r) => document.querySelector('#lightbox-title') && "
                           "document.querySelector('#lightbox-title').innerText.includes('Photo ' + r + ' of')",
                           arg=rank)
    close_photo(page)
