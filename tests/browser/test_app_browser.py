"""The web app in Chromium against the real server: search, explanation badges, dialogue turns, keyboard
labelling written to SQLite, exports, two browsers labelling at once; screenshots of each view."""
from __future__ import annotations

import csv
import json
import os
import re

from tests.browser.conftest import wait_until_ready
from tests.browser.pages import CONTRAST_JS, QUERY, load_labels, press, search, tab, wait_until
from ui.strings import LABEL_EXPORT_NAMES


def test_first_start_shows_the_preparation_and_then_searches(server, open_browser, shot):
    """The server answers before the demo world is built: the page says how far the preparation is, a search
    meanwhile says to wait, and once ready the note goes away and search works."""
    page = open_browser(wait_ready=False)
    page.fill("#search-query textarea", QUERY)
    # the note as it reads at the moment of the click (a Playwright click can take a second on a busy machine)
    note = page.evaluate("() => { const note = document.querySelector('#prepare-status').innerText;"
                         " document.querySelector('#search-button').click(); return note; }")
    assert "Preparing the photo collection" in note
    refused = ".toast-item:has-text('still being prepared'), .toast-item:has-text('Preparing')"
    page.wait_for_function("() => [...document.querySelectorAll('.toast-item')].some(t =>"
                           " /Preparing|still being prepared/.test(t.innerText)) ||"
                           " document.querySelector('#search-status').innerText.includes('done')")
    # the note is read at page load and refreshed every second: while it said "drawing", the indexing that
    # follows the drawing was still to come, so the collection was surely not ready when the click arrived
    if "drawing the demo world" in note:
        assert page.locator(refused).count() >= 1, "a search during the preparation must be refused with a message"
        # a note to wait, not an error: no error toast, no error marks on the result fields
        title = page.locator(refused).first.inner_text().split("\n")[0]
        assert title in ("Info", "Please wait"), f"the wait note is titled {title!r}"
        assert page.locator(".toast-item.error, .toast-body.error").count() == 0
        assert page.locator("#search-gallery .error, #search-status .error").count() == 0
    if page.locator("#prepare-status").is_visible():  # the progress note is dark on light (WCAG AA)
        assert page.evaluate(CONTRAST_JS, "#prepare-status") == []
    shot(page, "preparing", toasts=True)
    wait_until_ready(page)
    search(page, preset="Fast")
    assert page.locator("#search-gallery .thumbnail-item").count() >= 5
    # the terminal showed a bar while the demo world was drawn, and said when the page could search
    terminal = (server.data_dir / "server.log").read_text(errors="replace")
    assert "the page can search now" in terminal, terminal[-2000:]
    if os.environ.get("CI") != "true":  # tqdm draws no bar on CI
        assert re.search(r"drawing the demo world: +\d+%\|", terminal), terminal[-2000:]


def test_search_fills_gallery_and_selection_shows_badges(server, open_browser, shot):
    page = open_browser()
    assert "SYNTHETIC" in page.locator("#standin-banner").inner_text()
    search(page, preset="Fast")  # warm-up (first request loads models)
    first = search(page, preset="Verify")
    assert page.locator("#search-gallery .thumbnail-item").count() >= 5
    print(f"\nfirst results of a Verify search on screen after {first:.2f} s")
    assert first < 1.5, f"first results took {first:.2f} s"
    page.locator("#search-gallery .thumbnail-item").first.click()
    page.wait_for_selector("#search-explanation .ecolens-badge")
    assert page.locator("#search-explanation .ecolens-badge").count() >= 2
    assert "Licence" in page.locator("#search-explanation").inner_text()
    page.locator("#lightbox-title").click()
    page.keyboard.press("Escape")  # the photo view opened too; the explanation beside the gallery stays
    assert page.locator("#search-visualizations .thumbnail-item").count() >= 1
    shot(page, "search")
    rows = server.rows("SELECT method FROM requests WHERE method LIKE 'visret+rerank%'")
    assert rows, "the Verify search was not logged"


def test_a_new_search_cancels_the_running_one(server, open_browser, shot):
    """Verify with many candidates, then at once Fast: Fast's results appear and the Verify search is stopped
    (the page says so, and the session log keeps it with a 'cancelled' notice)."""
    page = open_browser()
    search(page, preset="Fast")  # warm-up
    page.click("#search-advanced button, #search-advanced .label-wrap")
    for slider, value in (("#search-rerank-k", "200"), ("#search-m", "8")):  # a long Verify search
        page.fill(f"{slider} input[type=number]", value)
        page.press(f"{slider} input[type=number]", "Enter")
    page.fill("#search-query textarea", "a bird carrying a twig")
    page.click("#search-preset label:has-text('Verify')")
    page.click("#search-button")
    page.wait_for_function("document.querySelector('#search-status').innerText.includes('so far')")
    searches = page.evaluate("window.__searches = (window.__searches || 0) + 2")
    # both clicks at once, in the page: Playwright's own clicks can take a second on a busy machine, and the
    # Verify search must still be running when the Fast one arrives
    page.evaluate("() => { const fast = [...document.querySelectorAll('#search-preset label')]"
                  ".find(l => l.innerText.trim() === 'Fast'); fast.querySelector('input').click();"
                  " document.querySelector('#search-button').click(); }")
    page.wait_for_function("(n) => { const t = document.querySelector('#search-status').innerText;"
                           " return t.includes('Search ' + n)"
                           " && / done in (?:under )?[0-9.]+ s$/.test(t.trim()); }", arg=searches)
    assert "previous search was stopped" in page.locator("#search-notices").inner_text()
    # the stopped search must not write over the new results: first wait until it has ended (its handler
    # records it as cancelled in the session log as its last act, and sends nothing to the page after that)
    cancelled = "SELECT s.artefacts FROM stages s JOIN requests r ON r.id = s.request_id " \
                "WHERE r.method LIKE 'visret+rerank%' AND r.query = 'a bird carrying a twig'"
    rows = wait_until(lambda: [a for (a,) in server.rows(cancelled) if "cancelled: a newer search replaced it" in a],
                      "the stopped search to be logged as cancelled")
    status = page.locator("#search-status").inner_text()
    assert f"Search {searches}" in status and "checked" not in status
    shot(page, "search-cancelled")
    assert any("cancelled: a newer search replaced it" in a for a in rows)


def test_two_dialogue_turns_update_the_gallery(server, open_browser, shot):
    page = open_browser()
    tab(page, "Dialogue")
    page.fill("#dialogue-start-text textarea", "a small bird on a branch")
    page.click("#dialogue-start")
    page.wait_for_selector("#dialogue-gallery .thumbnail-item img")
    bots = "document.querySelectorAll('#dialogue-chat [data-testid=bot]').length"
    page.wait_for_function(f"{bots} >= 1")
    for i, answer in enumerate(["yes", "it is red"]):
        page.fill("#dialogue-answer textarea", answer)
        page.click("#dialogue-send")
        page.wait_for_function(f"{bots} >= {2 + i}")
    page.wait_for_selector("#dialogue-gallery .thumbnail-item img")
    assert page.locator("#dialogue-description textarea").input_value()
    shot(page, "dialogue")
    turns = server.rows("SELECT answer, request_id FROM turns WHERE answer IN ('yes', 'it is red')")
    assert len(turns) == 2 and all(r[1] for r in turns)
    ranked = server.rows("SELECT count(*) FROM stages WHERE request_id IN (%s)" % ",".join(str(r[1]) for r in turns))
    assert ranked[0][0] == 2


def test_keyboard_labels_are_saved_and_export_parses(server, open_browser, shot, tmp_path):
    page = open_browser()
    load_labels(page, "ada")
    press(page, "1", 1)
    press(page, "0", 2)
    press(page, "s")  # a skip is not a judgement: still two judged
    page.wait_for_function("document.querySelector('#label-progress').innerText.includes('1 skipped')")
    press(page, "ArrowLeft")
    press(page, "1", 3)  # judge the skipped photo: now three photos judged
    shot(page, "label-keys")
    rows = server.rows("SELECT photo_id, label, seconds FROM labels WHERE annotator = 'ada' ORDER BY id")
    assert [r[1] for r in rows] == [1, 0, -1, 1]
    assert rows[2][0] == rows[3][0] and all(r[2] >= 0 for r in rows)
    for fmt, suffix in (("csv", ".csv"), ("jsonl", ".jsonl"), ("keypresses", ".keypresses.csv"),
                        ("inquire-rerank", ".inquire-rerank.csv")):
        page.click("#label-export-format input")
        page.get_by_role("option", name=LABEL_EXPORT_NAMES[fmt], exact=True).click()
        page.click("#label-export")
        link = page.locator(f"#label-export-file a[download$='{suffix}']").first
        link.wait_for()
        with page.expect_download() as info:
            link.click()
        path = tmp_path / f"export-{fmt}{suffix}"
        info.value.save_as(path)
        if fmt == "jsonl":  # one row per photo and annotator: the skipped photo's label replaces the skip
            parsed = [json.loads(line) for line in path.read_text().splitlines()]
            assert [r["label"] for r in parsed if r["annotator"] == "ada"] == [1, 0, 1]
        else:
            parsed = list(csv.DictReader(path.open()))
            column = "relevant" if fmt == "inquire-rerank" else "label"
            assert len(parsed) == (4 if fmt == "keypresses" else 3)  # every key press, or the final word
            assert {r[column] for r in parsed} <= {"1", "0", "-1"}
    assert len(server.rows("SELECT id FROM exports")) >= 3


def test_two_browsers_labelling_at_once_lose_nothing(server, open_browser, shot):
    pages = [open_browser(), open_browser()]
    names = ["bea", "cal"]
    for page, name in zip(pages, names):
        load_labels(page, name, k=12)
    # Playwright's sync API is bound to one thread: the two browsers' key presses are interleaved without
    # waiting for the server, so their label requests are in flight together
    keys = ["1", "0", "1", "1", "0", "0", "1", "0", "1", "1"]
    for page in pages:
        page.locator("#label-hotkeys-help").click()  # focus the page, not a text box
    for key in keys:
        for page in pages:
            page.keyboard.press(key)
    for page in pages:
        page.wait_for_function(
            f"document.querySelector('#label-progress').innerText.startsWith('{len(keys)} of')")
    for name in names:
        got = server.rows("SELECT label, photo_id FROM labels WHERE annotator = ? ORDER BY id", name)
        assert [str(r[0]) for r in got] == keys
        assert len({r[1] for r in got}) == len(keys)  # one label per photo, in order: no press lost
    pages[0].click("#label-agreement")
    pages[0].wait_for_function("document.querySelector('#label-kappa').innerText.includes('kappa')")
    assert "bea" in pages[0].locator("#label-kappa").inner_text()


def test_compare_and_history_views(server, open_browser, shot):
    page = open_browser()
    search(page, preset="Cover")
    tab(page, "Compare")
    page.fill("#compare-query textarea", QUERY)
    page.click("#compare-button")
    page.wait_for_selector("#compare-gallery-1 .thumbnail-item img")
    page.wait_for_function("document.querySelector('#compare-overlap').innerText.includes('%')")
    shot(page, "compare")
    tab(page, "History")
    page.click("#history-refresh")
    page.click("#history-open")
    page.wait_for_function("document.querySelector('#history-requests').innerText.includes('query')")
