"""History and filters in Chromium against the real server: a past search reopens fully (ranking with its
scores, the badges in the photo view, the pictures it used), a dialogue reopens with its turns, and empty
sessions are not listed; a refined search is logged under its real method; the taxon box offers the catalog's
names, a species named in the query is offered as a filter, the month picker narrows the results; error
messages speak the web app's words."""
from __future__ import annotations

import json
import re

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.pages import QUERY, captions, open_photo, search, tab


def test_history_reopens_a_search_and_a_dialogue_fully(server, open_browser, shot):
    page = open_browser()
    search(page, "a bird carrying a twig", preset="Verify")
    sid = server.rows("SELECT token FROM sessions WHERE kind = 'search' ORDER BY id DESC LIMIT 1")[0][0]
    tab(page, "Label")
    page.fill("#label-annotator textarea", "hal")
    page.fill("#label-query textarea", "a bird carrying a twig")
    page.click("#label-load")
    page.wait_for_selector("#label-board .lb-tile")
    tab(page, "History")
    page.click("#history-refresh")
    listed = page.evaluate("() => document.querySelector('#history-sessions input').value")
    assert "labelling" not in listed  # loading photos to label made no (empty) session to list
    page.fill("#history-sessions input", sid)  # a session's token pasted in (what a search's API answer names)
    page.click("#history-open")
    page.wait_for_function("() => document.querySelector('#history-requests').innerText.includes('twig')")
    page.wait_for_selector("#history-gallery .thumbnail-item img")
    shown = captions(page, "#history-gallery")
    assert shown and all(re.search(r" · (\d+%|not checked)( · |$)", c) for c in shown)  # as it was searched
    assert len(captions(page, "#history-visualizations")) >= 1  # the drawings it was searched with
    open_photo(page, "#history-gallery", 0)
    assert page.locator("#lightbox .ecolens-badge").count() >= 2  # the badges it had
    page.keyboard.press("Escape")
    shot(page, "history")
    tab(page, "Dialogue")
    page.fill("#dialogue-start-text textarea", "a beetle on bark")
    page.click("#dialogue-start")
    page.wait_for_selector("#dialogue-gallery .thumbnail-item img")
    page.fill("#dialogue-answer textarea", "it is black")
    page.click("#dialogue-send")
    page.wait_for_function("document.querySelectorAll('#dialogue-chat [data-testid=bot]').length >= 2")
    did = server.rows("SELECT token FROM sessions WHERE kind = 'dialogue' ORDER BY id DESC LIMIT 1")[0][0]
    tab(page, "History")
    page.fill("#history-sessions input", did)
    page.click("#history-open")
    page.wait_for_function("document.querySelector('#history-chat') && "
                           "document.querySelector('#history-chat').innerText.includes('it is black')")
    assert "a beetle on bark" in page.locator("#history-chat").inner_text()
    page.wait_for_selector("#history-request")  # two searches in this session: pick which one to see
    empty = server.rows("SELECT s.id FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM requests r WHERE r.session_id"
                        " = s.id) AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.session_id = s.id)")
    assert empty == [], "every logged session holds a search or a label"


def test_a_refined_search_is_logged_under_its_real_method(server, open_browser):
    page = open_browser()
    search(page, QUERY, preset="Fast")
    top = server.rows("SELECT id FROM photos ORDER BY id LIMIT 2")
    from gradio_client import Client

    client = Client(server.url, verbose=False)
    client.predict(QUERY, top[0][0], 1, "ivy", 1.0, api_name="/label")
    client.predict(QUERY, top[1][0], 0, "ivy", 1.0, api_name="/label")
    page.click("#search-refine")
    page.wait_for_function("document.querySelector('#search-status').innerText.includes('refined with your labels')")
    methods = [m for (m,) in server.rows("SELECT method FROM requests ORDER BY id DESC LIMIT 3")]
    assert methods[0] == "baseline+feedback"
    open_photo(page, "#search-gallery", 0)
    page.click("#lightbox-more")
    page.wait_for_function("document.querySelector('#search-status').innerText.includes('more like this photo')")
    assert server.rows("SELECT method FROM requests ORDER BY id DESC LIMIT 1")[0][0] == "baseline+more-like-this"


def test_taxon_names_a_suggested_species_filter_months_and_web_wording(server, open_browser, shot):
    page = open_browser()
    page.click("#search-filters button, #search-filters .label-wrap")
    # the box starts empty (any taxon) and says so in a placeholder, not in text that typing would append to
    assert page.input_value("#filter-taxon input") == ""
    page.wait_for_function("() => document.querySelector('#filter-taxon input').placeholder.startsWith('any taxon')")
    page.click("#filter-taxon input")
    options = page.get_by_role("option").all_inner_texts()
    ranks = [o.rsplit("(", 1)[-1].rstrip(")") for o in options if "(" in o]
    order = ["species", "common name", "genus", "family", "order", "class", "phylum", "kingdom"]
    assert ranks and ranks == sorted(ranks, key=order.index), ranks  # by rank, then by name
    page.fill("#filter-taxon input", "mossl")
    option = page.get_by_role("option", name=re.compile("Streaked Mossleaper"))
    option.first.wait_for()
    assert "(common name)" in option.first.inner_text()
    page.keyboard.press("Escape")
    page.fill("#filter-taxon input", "")
    page.fill("#search-query textarea", "is the streaked mossleaper calling at night?")
    page.wait_for_selector("#search-taxon-suggestion", state="visible")
    assert "Only show Streaked Mossleaper" in page.locator("#search-taxon-suggestion").inner_text()
    closed = "() => !document.querySelector('[role=option]')"  # the emptied box's list closed
    try:
        page.wait_for_function(closed, timeout=20_000)
    except PlaywrightTimeout:  # on a loaded machine the list can stay open after the focus left: close it
        page.locator("body").press("Escape")
        page.wait_for_function(closed)
    assert page.input_value("#filter-taxon input") == ""  # an emptied box stays empty: any taxon
    shot(page, "filters")
    n = page.evaluate("window.__searches = (window.__searches || 0) + 1")
    page.click("#search-taxon-suggestion")
    page.wait_for_function("(n) => { const t = document.querySelector('#search-status').innerText;"
                           " return t.includes('Search ' + n)"
                           " && / done in (?:under )?[0-9.]+ s$/.test(t.trim()); }", arg=n)
    assert "Streaked Mossleaper" in page.input_value("#filter-taxon input")
    assert captions(page) and all(c.startswith("Streaked Mossleaper") for c in captions(page))
    page.fill("#filter-taxon input", "")
    page.keyboard.press("Enter")
    page.locator("#filter-months label:has-text('Jun')").click()
    search(page, "a frog calling at night", preset="Fast")
    ranked = server.rows("SELECT s.ranking FROM stages s JOIN requests r ON r.id = s.request_id WHERE s.name = "
                         "'final' ORDER BY s.id DESC LIMIT 1")[0][0]
    ids = ",".join(str(i) for i, _ in json.loads(ranked))
    months = {m for (m,) in server.rows(f"SELECT strftime('%m', observed_on) FROM photo_details WHERE id IN ({ids})")}
    assert months == {"06"}
    # mistakes are said in the web app's words: no command-line options, no doubled full stops
    page.locator("#filter-months label:has-text('Jun')").click()
    for field, value, expected in (("#filter-bbox textarea", "1,2,3", "is not four numbers"),
                                   ("#filter-bbox textarea", "10, 80, 20, 60", "south below north")):
        page.fill(field, value)
        page.click("#search-button")
        toast = page.locator(".toast-item").filter(has_text=expected).first
        toast.wait_for()
        text = toast.inner_text()
        assert "--" not in text and ".." not in text.replace("...", "") and "bbox" not in text, text
        page.locator("button.toast-close").first.click()
    page.fill("#filter-bbox textarea", "")
    page.fill("#filter-date-from input", "2025-09-01")
    page.fill("#filter-date-to input", "2025-03-01")
    page.click("#search-button")
    toast = page.locator(".toast-item").filter(has_text="after the end date").first
    toast.wait_for()
    assert "swap the two dates" in toast.inner_text().lower() and "--date" not in toast.inner_text()
