"""Labelling like Label Studio, in Chromium against the real server: Enter in the query box loads (and opens no
session), photos are judged in the grid by click or keys, keys pressed faster than the server answers (the
network slowed to 150 ms each way) still land on the photos seen, in order; undo, next unjudged, progress that
counts judgements not skips, the done state where a key changes nothing, instructions per query, and the
disagreements list after kappa with a final word."""
from __future__ import annotations

import time

from tests.browser.pages import load_labels, press, progress_starts

QUERY = "a moth with red hindwings"


def labels_of(server, who: str, query: str = QUERY) -> list[tuple[int, int]]:
    return [(p, v) for p, v in server.rows("SELECT photo_id, label FROM labels WHERE annotator = ? AND query = ? "
                                           "ORDER BY id", who, query)]


def tile_ids(page) -> list[int]:
    return [int(i) for i in page.eval_on_selector_all("#label-board .lb-tile", "els => els.map(e => e.dataset.id)")]


def test_labelling_in_the_grid_with_clicks_keys_undo_and_the_done_state(server, open_browser, shot):
    page = open_browser()
    sessions = server.rows("SELECT count(*) FROM sessions")[0][0]
    load_labels(page, "dora", QUERY, k=6, enter=True)  # Enter in the query box loads
    assert server.rows("SELECT count(*) FROM sessions")[0][0] == sessions  # loading opens no empty session
    ids = tile_ids(page)
    page.fill("#label-instructions textarea", "relevant only if the red hindwings show")
    page.locator("#label-hotkeys-help").click()  # leaving the box saves the instructions
    page.wait_for_function("document.querySelector('#label-message').innerText.includes('Instructions saved')")
    # a click on the ✓ of the third tile judges that photo; the cursor goes on to the next one not judged
    page.locator("#label-board .lb-tile").nth(2).locator(".lb-yes").click()
    progress_starts(page, "1 of 6 judged")
    assert labels_of(server, "dora") == [(ids[2], 1)]
    assert page.get_attribute("#label-board .lb-board", "data-cursor") == str(ids[3])
    press(page, "0", 2)
    press(page, "s")
    page.wait_for_function("document.querySelector('#label-progress').innerText.includes('1 skipped: not counted')")
    progress_starts(page, "2 of 6 judged")
    press(page, "u")  # undo the skip: photo 5 is unjudged again and under the cursor
    page.wait_for_function("document.querySelector('#label-message').innerText.includes('Undone: photo 5')")
    assert labels_of(server, "dora") == [(ids[2], 1), (ids[3], 0)]
    assert page.get_attribute("#label-board .lb-board", "data-cursor") == str(ids[4])
    shot(page, "label-undo")
    for key in ("1", "0", "1"):  # photos 5 and 6, then the cursor wraps around to photo 1
        press(page, key)
    progress_starts(page, "5 of 6 judged")
    assert labels_of(server, "dora")[-3:] == [(ids[4], 1), (ids[5], 0), (ids[0], 1)]
    press(page, "n")  # next unjudged: photo 2, the only one left
    page.wait_for_function(f"document.querySelector('#label-board .lb-board').dataset.cursor === '{ids[1]}'")
    press(page, "0")
    page.wait_for_function("document.querySelector('#label-progress').innerText.startsWith('All 6 photos judged')")
    assert page.get_attribute("#label-board .lb-board", "data-cursor") == ""
    before = len(labels_of(server, "dora"))
    press(page, "1")  # done: a key at the end overwrites nothing and says why
    page.wait_for_function("document.querySelector('#label-message').innerText.includes('Every photo is judged')")
    assert len(labels_of(server, "dora")) == before
    page.locator("#label-board .lb-tile").nth(5).click()  # pick a photo again: now it may be changed
    page.wait_for_function(f"document.querySelector('#label-board .lb-board').dataset.cursor === '{ids[5]}'")
    press(page, "1")
    page.wait_for_function("document.querySelector('#label-message').innerText.includes('photo 6 = relevant')")
    assert labels_of(server, "dora")[-1] == (ids[5], 1)
    # a second visit shows the instructions and resumes
    load_labels(page, "dora", QUERY, k=6)
    assert page.input_value("#label-instructions textarea") == "relevant only if the red hindwings show"
    progress_starts(page, "All 6 photos judged")


def test_keys_faster_than_the_server_land_on_the_photos_seen_in_order(server, open_browser, shot):
    page = open_browser()
    load_labels(page, "eli", QUERY, k=12)
    ids = tile_ids(page)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 150, "downloadThroughput": -1,
                                                  "uploadThroughput": -1})
    keys = ["1", "0", "0", "1", "s", "1", "0", "1", "1", "0"]
    page.locator("#label-hotkeys-help").click()
    t0 = time.perf_counter()
    for key in keys:
        page.keyboard.press(key)  # about 10 ms apart: far faster than one answer (300 ms and more)
    typed = time.perf_counter() - t0
    page.wait_for_function("() => window.ecolensLabel && window.ecolensLabel.pending() === 0", timeout=120_000)
    progress_starts(page, "9 of 12 judged")
    got = labels_of(server, "eli")
    value = {"1": 1, "0": 0, "s": -1}
    assert got == [(ids[i], value[k]) for i, k in enumerate(keys)], (typed, got)
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1,
                                                  "uploadThroughput": -1})
    page.locator("#label-board .lb-tile").nth(11).locator(".lb-no").click()  # a click on a tile's ✗ judges it
    progress_starts(page, "10 of 12 judged")
    assert labels_of(server, "eli")[-1] == (ids[11], 0)
    shot(page, "label")


def test_disagreements_after_kappa_get_a_final_word(server, open_browser, shot):
    page = open_browser()
    load_labels(page, "fay", QUERY, k=5)
    ids = tile_ids(page)
    for key, done in (("1", 1), ("1", 2), ("0", 3), ("1", 4)):
        press(page, key, done)
    press(page, "0")
    progress_starts(page, "All 5 photos judged")
    for pid, label in zip(ids, (1, 0, 0, 1, 0)):  # a second annotator, through the scripting endpoint
        server_label(server, pid, label, "gus")
    page.click("#label-agreement")
    page.wait_for_function("document.querySelector('#label-kappa').innerText.includes('kappa')")
    page.wait_for_selector("#label-disagreements .thumbnail-item")
    assert "fay" in page.locator("#label-kappa").inner_text()
    texts = page.eval_on_selector_all("#label-disagreements .caption-label", "els => els.map(e => e.innerText)")
    assert any(t.startswith(f"photo {ids[1]} · ") and "fay: relevant" in t and "gus: not relevant" in t for t in texts)
    page.locator("#label-disagreements .thumbnail-item").first.click()
    page.click("#label-adjudicate-not-relevant")
    page.wait_for_function("document.querySelector('#label-disagreements-note').innerText.includes('Final word saved')")
    final = server.rows("SELECT photo_id, label FROM labels WHERE annotator = 'adjudicated' AND query = ?", QUERY)
    assert final and final[-1][1] == 0
    shot(page, "label-disagreements")


def server_label(server, photo_id: int, label: int, who: str) -> None:
    from gradio_client import Client

    Client(server.url, verbose=False).predict(QUERY, photo_id, label, who, 1.0, api_name="/label")
