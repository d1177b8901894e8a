"""The photo view, marking and the layout in Chromium against the real server: a click opens the photo at
full size with its badges, metadata, licence and attribution; arrow keys move through the results; photos
marked from the Search, Compare, Dialogue and History galleries export as CSV, JSONL and a Darwin Core
Archive with their species,
place, date, licence and query; the drawings strip shows every picture whole with its caption and the user's
own example photo first; a selection made while a search streams is kept; one score scale per view; on a
390 px phone the explanation is right under the tapped photo and captions keep the species; every text has
WCAG AA contrast."""
from __future__ import annotations

import csv
import json
import re

from dwca.read import DwCAReader

from tests.browser.pages import (
    CONTRAST_JS,
    QUERY,
    captions,
    close_photo,
    lightbox_key,
    open_photo,
    search,
    show_tab,
    tab,
    wait_searched,
    wait_settled,
)
from ui.strings import MARK_EXPORT_NAMES

MARK_COLUMNS = ["id", "species", "common_name", "path", "latitude", "longitude", "date", "month", "license",
                "license_url", "rights_holder", "query", "preset"]


def test_photo_view_shows_the_photo_large_with_badges_and_moves_with_the_keys(server, open_browser, shot):
    page = open_browser()
    search(page, preset="Verify")
    open_photo(page, "#search-gallery", 2)
    box = page.locator("#lightbox")
    src = page.get_attribute("#lightbox-photo img", "src")
    # the full-size served copy (1280 px, or the photo's own size when it is smaller), not a reduced thumbnail;
    # the shown photo's own size (the shared catalog holds photos of several sizes, camera-trap frames among them)
    shown = re.search(r"Photo id\s+(\d+)", box.locator("#lightbox-info").inner_text()).group(1)
    (longer,) = server.rows("SELECT max(width, height) FROM photos WHERE id = ?", int(shown))[0]
    assert re.search(r"-(\d+)\.jpg$", src).group(1) == str(min(1280, longer)), (src, shown, longer)
    assert box.locator(".ecolens-badge").count() >= 2  # one badge per yes/no check
    text = box.inner_text()
    for expected in ("Checks passed:", "Taxon", "Observed", "Licence", "Rights holder", "Photo: ", "sure"):
        assert expected in text, expected
    shot(page, "lightbox", full_page=False)
    title = page.locator("#lightbox-title").inner_text()
    lightbox_key(page, "ArrowRight", "Photo 4 of")
    assert page.locator("#lightbox-title").inner_text() != title
    lightbox_key(page, "ArrowLeft", "Photo 3 of")
    assert page.locator("#lightbox-title").inner_text() == title
    close_photo(page)
    assert "Licence" in page.locator("#search-explanation").inner_text()  # the selection stays explained


def test_marks_from_every_gallery_export_as_csv_jsonl_and_darwin_core(server, open_browser, shot, tmp_path):
    page = open_browser()
    search(page, preset="Fast")
    open_photo(page, "#search-gallery", 0)
    lightbox_key(page, "m", "★ Marked")
    lightbox_key(page, "ArrowRight", "Photo 2 of")
    lightbox_key(page, "m", "★ Marked")
    close_photo(page)
    tab(page, "Compare")
    page.fill("#compare-query textarea", "a bird carrying a twig")
    page.click("#compare-button")
    page.wait_for_selector("#compare-gallery-1 .thumbnail-item img")
    open_photo(page, "#compare-gallery-1", 0)
    assert "Similarity:" in page.locator("#lightbox-info").inner_text()  # Visualize: similarity to the drawings
    page.click("#lightbox-mark")
    page.wait_for_function("document.querySelector('#lightbox-mark').innerText.includes('Marked')")
    close_photo(page)
    tab(page, "Dialogue")
    page.fill("#dialogue-start-text textarea", "a small bird on a branch")
    page.click("#dialogue-start")
    page.wait_for_selector("#dialogue-gallery .thumbnail-item img")
    page.locator("#dialogue-gallery .thumbnail-item").nth(3).click()
    # the click marks the photo: the note it writes above the button moves the button down, so click it after
    page.wait_for_function("document.querySelector('#dialogue-marked').innerText.includes('#4')")
    page.click("#dialogue-view-photo")
    page.wait_for_function("document.querySelector('#lightbox-title') && "
                           "document.querySelector('#lightbox-title').innerText.includes('Photo 4 of')")
    page.click("#lightbox-mark")
    page.wait_for_function("document.querySelector('#lightbox-mark').innerText.includes('Marked')")
    close_photo(page)
    tab(page, "History")
    page.click("#history-refresh")
    page.click("#history-open")
    page.wait_for_selector("#history-gallery .thumbnail-item img")
    open_photo(page, "#history-gallery", 1)
    page.click("#lightbox-mark")
    page.wait_for_function("document.querySelector('#lightbox-mark').innerText.includes('Marked')")
    close_photo(page)
    panel = page.locator("#marks-panel")
    assert "Marked photos: 5" in panel.inner_text()
    panel.locator("button, .label-wrap").first.click()
    page.wait_for_function("document.querySelectorAll('#marks-gallery .thumbnail-item').length === 5")
    rows = {}
    for fmt, suffix in (("csv", "csv"), ("jsonl", "jsonl"), ("dwc", "zip")):
        page.click("#marks-format input")
        page.get_by_role("option", name=MARK_EXPORT_NAMES[fmt], exact=True).click()
        page.click("#marks-export")
        link = page.locator(f"#marks-file a[download$='.{suffix}']").first
        link.wait_for()
        with page.expect_download() as info:
            link.click()
        path = tmp_path / f"marked.{suffix}"
        info.value.save_as(path)
        if fmt == "dwc":
            with DwCAReader(str(path)) as dwca:
                rows[fmt] = [r.data for r in dwca]
        elif fmt == "csv":
            with path.open() as fh:
                reader = csv.DictReader(fh)
                assert reader.fieldnames == MARK_COLUMNS
                rows[fmt] = list(reader)
        else:
            rows[fmt] = [json.loads(line) for line in path.read_text().splitlines()]
    shot(page, "mark-and-export")
    got = rows["csv"]
    assert len(got) == 5 and [str(r["id"]) for r in rows["jsonl"]] == [r["id"] for r in got]
    assert {r["query"] for r in got} >= {QUERY, "a bird carrying a twig", "a small bird on a branch"}
    assert {r["preset"] for r in got} >= {"Fast", "Visualize", "Dialogue"}
    for r in got:
        assert r["species"] and r["license"] and r["rights_holder"] and re.fullmatch(r"\d{4}-\d\d-\d\d", r["date"])
        assert int(r["month"]) == int(r["date"][5:7]) and float(r["latitude"]) and float(r["longitude"])
        assert r["path"] and not r["path"].startswith("/") and str(server.data_dir) not in r["path"]
    ids = ",".join(r["id"] for r in got)
    names = {str(i): n for i, n in server.rows(f"SELECT id, scientific_name FROM photo_details WHERE id IN ({ids})")}
    assert all(names[r["id"]] == r["species"] for r in got)  # each row describes its own photo
    # the Darwin Core Archive: one occurrence per photo, each said to be a synthetic demo picture
    # (licence and rights holder are Dublin Core terms, dcterms:license and dcterms:rightsHolder, issue 35)
    dwc, dc = "http://rs.tdwg.org/dwc/terms/", "http://purl.org/dc/terms/"
    assert len(rows["dwc"]) == len({r["id"] for r in got})
    assert {r[dwc + "scientificName"] for r in rows["dwc"]} == {r["species"] for r in got}
    assert all("synthetic" in r[dwc + "occurrenceRemarks"] and r[dc + "license"].startswith("https://")
               and r[dc + "rightsHolder"] for r in rows["dwc"])


def test_pictures_strip_whole_with_captions_and_the_users_example_first(server, open_browser, shot):
    page = open_browser()
    photo = next(p for p in sorted((server.data_dir / "fieldguide").rglob("*.png")))
    page.click("#search-advanced button, #search-advanced .label-wrap")
    page.set_input_files("#search-example input[type=file]", str(photo))
    page.wait_for_selector("#search-example img")
    search(page, "a frog on a lily pad", preset="Visualize")
    strip = captions(page, "#search-visualizations")
    assert strip[0] == "your example photo" and len(strip) == 4 and all("drawn" in c for c in strip[1:])
    fits = page.eval_on_selector_all(
        "#search-visualizations .thumbnail-item img",
        "imgs => imgs.map(i => { const a = i.getBoundingClientRect(), b = i.closest('.thumbnail-item')"
        ".getBoundingClientRect(); return [getComputedStyle(i).objectFit, a.left >= b.left - 1 && "
        "a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1]; })")
    assert fits and all(fit == "contain" and inside for fit, inside in fits)  # whole pictures, never cropped
    visible = page.eval_on_selector_all("#search-visualizations .caption-label",
                                        "els => els.map(e => e.getBoundingClientRect().height > 0)")
    assert all(visible)
    page.locator("#search-visualizations").scroll_into_view_if_needed()
    shot(page, "search-pictures")


def test_one_score_scale_per_view_and_a_selection_kept_while_streaming(server, open_browser, shot):
    page = open_browser()
    for preset in ("Fast", "Visualize", "Cover"):
        search(page, preset=preset)
        assert page.locator("#search-scale").inner_text().startswith("Scores: similarity")
        shown = captions(page)
        assert all(re.search(r" · -?[01]\.\d\d( · |$)", c) for c in shown), \
            (preset, [c for c in shown if not re.search(r" · -?[01]\.\d\d( · |$)", c)])
    # a slow Verify search: a photo clicked while the checks still run stays selected, and gets its badges
    page.click("#search-advanced button, #search-advanced .label-wrap")
    page.fill("#search-rerank-k input[type=number]", "100")
    page.press("#search-rerank-k input[type=number]", "Enter")
    # words no earlier search used: its photos are checked afresh (an earlier Verify of QUERY has its answers
    # in the cache, and a search answered from the cache can end before its first update is drawn)
    page.fill("#search-query textarea", QUERY + " in the reeds")
    page.click("#search-preset label:has-text('Verify')")
    n = page.evaluate("window.__searches = (window.__searches || 0) + 1")
    page.click("#search-button")
    page.wait_for_function("document.querySelector('#search-status').innerText.includes('so far')")
    page.locator("#search-gallery .thumbnail-item").nth(1).click()
    page.wait_for_function("document.querySelector('#lightbox-info') && "
                           "document.querySelector('#lightbox-info').innerText.includes('Photo id')")
    picked = re.search(r"Photo id\s+(\d+)", page.locator("#lightbox-info").inner_text()).group(1)
    close_photo(page)
    wait_searched(page, n)
    explanation = page.locator("#search-explanation")
    # the explanation is redrawn for the final ranking: the picked photo with its badges, or the note that it
    # has left the results
    page.wait_for_function("document.querySelector('#search-explanation .ecolens-badge') !== null || "
                           "document.querySelector('#search-explanation').innerText.startsWith("
                           "'The photo you picked is no longer')")
    said = explanation.inner_text()
    # the picked photo stays the one explained: with its id, or (when the checks moved it out of the results)
    # with what was known about it and a note that says so
    assert re.search(rf"Photo id\s+{picked}\b", said) or said.startswith("The photo you picked is no longer"), said
    assert page.locator("#search-scale").inner_text().startswith("Scores: checks passed")
    # (with how many of the checks asked were made, when not all: issue 35 item 5, '66% (2 of 3 checked)')
    assert all(re.search(r" · (\d+%( \(\d+ of \d+ checked\))?|not checked)( · |$)", c) for c in captions(page)), \
        captions(page)
    shot(page, "search")
    # the gallery's highlight went with the picked photo to its place in the final ranking, or went away with it
    # (the browser would keep it on the second place, over whichever photo the checks put there)
    chosen = page.locator("#search-gallery .thumbnail-item.selected")
    if said.startswith("The photo you picked is no longer"):
        assert chosen.count() == 0
    else:
        assert chosen.count() == 1
        chosen.click()
        page.wait_for_function("document.querySelector('#lightbox-info') && "
                               "document.querySelector('#lightbox-info').innerText.includes('Photo id')")
        assert re.search(rf"Photo id\s+{picked}\b", page.locator("#lightbox-info").inner_text())
        close_photo(page)
    # a new search starts with no photo highlighted
    open_photo(page, "#search-gallery", 2)
    close_photo(page)
    assert page.locator("#search-gallery .thumbnail-item.selected").count() == 1
    search(page, query="a heron holding a fish")
    assert page.locator("#search-gallery .thumbnail-item.selected").count() == 0


def test_phone_layout_explanation_under_the_tapped_photo_species_in_captions(playwright, server, shot):
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, wait_until_ready

    ctx = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS).new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, device_scale_factor=2)
    try:
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        page.goto(server.url)
        page.wait_for_selector("#search-query textarea")
        wait_until_ready(page)
        search(page, preset="Fast")
        species = {n for (n,) in server.rows("SELECT DISTINCT common_name FROM photo_details")}
        shown = captions(page)
        assert shown and all(c.split(" · ")[0] in species for c in shown)
        clipped = page.eval_on_selector_all("#search-gallery .caption-label",
                                            "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).length")
        assert clipped == 0  # no caption is cut off sideways
        tile = page.locator("#search-gallery .thumbnail-item").nth(3)
        tile.scroll_into_view_if_needed()
        tile.tap()
        page.wait_for_function("() => { const i = document.querySelector('#lightbox-photo img');"
                               " return i && i.complete && i.naturalWidth > 0; }")
        wait_settled(page, "#lightbox-photo", "#lightbox-info")  # the photo view has finished opening
        photo = page.locator("#lightbox-photo").bounding_box()
        info = page.locator("#lightbox-info").bounding_box()
        assert 0 <= info["y"] - (photo["y"] + photo["height"]) <= 120  # the explanation right under the photo
        assert info["y"] < 844 and photo["y"] >= 0  # both on screen without scrolling
        shot(page, "phone-photo-view", full_page=False)
    finally:
        ctx.close()


def test_every_text_has_wcag_aa_contrast(server, open_browser):
    page = open_browser()
    search(page, preset="Verify")
    page.click("#search-advanced button, #search-advanced .label-wrap")
    page.click("#search-filters button, #search-filters .label-wrap")
    assert page.evaluate(CONTRAST_JS, "body") == []
    open_photo(page, "#search-gallery", 0)
    assert page.evaluate(CONTRAST_JS, "#lightbox") == []
    close_photo(page)
    for name in ("Dialogue", "Compare", "Label", "History"):
        show_tab(page, name)
        assert page.evaluate(CONTRAST_JS, "body") == [], name
