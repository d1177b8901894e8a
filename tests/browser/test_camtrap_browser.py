"""Camera traps in Chromium against the real server: a small card of real camera-trap frames (the MegaDetector
repository's, tests/fixtures/megadetector, MIT) with EXIF times, a deployments CSV and a MegaDetector results
file, ingested by the command line. The page offers the camera-trap filters; one result per event shows the
burst as one card captioned with "3 frames", its deployment and time, the empty frame hidden and counted; the
photo view draws the detector's box on the frame (its pixels differ from the plain frame's on the box and
not far from it), says the deployment, time with its offset, event and detection in words, shows the event's
frames as a strip (a click shows that frame), and takes a person's identification of the event with the
keyboard, stored as a human observation. Screenshots: docs/screenshots/camtrap-*.png."""
from __future__ import annotations

import csv
import io
import json
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, ROOT
from tests.browser.pages import CONTRAST_JS, captions, close_photo, open_photo, wait_searched
from tests.live_server import LiveServer, cli

gradio_client = pytest.importorskip("gradio_client")

FIXTURE = ROOT / "tests" / "fixtures" / "megadetector"
# (file in the card, fixture frame, EXIF time, EXIF offset): a burst of three frames of a mountain lion, the
# empty snow frame of the same camera later that day, an island fox at another deployment. The EXIF times are
# those the frames' burned-in stamps show (Idaho "2016-01-28 15:14:45", winter: MST; Santa Cruz Island
# "2014-11-23 8:26:22 PM", PST), the burst 2 s apart from it; the snow frame is a crop of the lion's frame
# (its stamp is the same), so it is given a time 25 minutes later on the stamp's day to stand apart as an event
FRAMES = [("idaho/lion-1.jpg", "north/idaho-camera-traps.jpg", "2016:01:28 15:14:45", "-07:00"),
          ("idaho/lion-2.jpg", "north/idaho-camera-traps.jpg", "2016:01:28 15:14:47", "-07:00"),
          ("idaho/lion-3.jpg", "north/idaho-camera-traps.jpg", "2016:01:28 15:14:49", "-07:00"),
          ("idaho/snow.jpg", "north/idaho-camera-traps-left.jpg", "2016:01:28 15:40:00", "-07:00"),
          ("channel/fox.jpg", "north/channel-islands-thumb.jpg", "2014:11:23 20:26:22", "-08:00")]
PLACES = {"idaho": ("Salmon River ridge", 44.9, -114.9, "-07:00"),
          "channel": ("Santa Cruz Island", 34.0, -119.7, "-08:00")}


def _frame(src: Path, taken: str, offset: str, nudge: int) -> bytes:
    """The fixture frame re-encoded with EXIF DateTimeOriginal/OffsetTimeOriginal; one pixel nudged so each
    frame of the burst is a file of its own (not a duplicate)."""
    with Image.open(src) as im:
        image = im.convert("RGB")
    r, g, b = image.getpixel((0, 0))
    image.putpixel((0, 0), ((r + nudge) % 256, g, b))
    exif = Image.Exif()
    sub = exif.get_ifd(0x8769)
    sub[0x9003], sub[0x9011] = taken, offset
    out = io.BytesIO()
    image.save(out, "JPEG", quality=95, exif=exif)
    return out.getvalue()


@pytest.fixture(scope="module")
def card_server(tmp_path_factory):
    card = tmp_path_factory.mktemp("camtrap") / "card"
    boxes = {e["file"]: e for e in json.loads((FIXTURE / "md_results.json").read_text())["images"]}
    images = []
    for i, (name, src, taken, offset) in enumerate(FRAMES):
        (card / name).parent.mkdir(parents=True, exist_ok=True)
        (card / name).write_bytes(_frame(FIXTURE / src, taken, offset, i + 1))
        images.append({"file": name, "detections": boxes[src]["detections"]})
    results = json.loads((FIXTURE / "md_results.json").read_text())
    results["images"] = images
    (card / "md_results.json").write_text(json.dumps(results))
    places = card.parent / "deployments.csv"
    with places.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["deploymentID", "locationName", "latitude", "longitude", "utc_offset"])
        out.writerows([key, *place] for key, place in PLACES.items())
    data = tmp_path_factory.mktemp("data")
    done = cli(data, "ingest", str(card), "--detections", str(card / "md_results.json"), "--deployments",
               str(places), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    server = LiveServer(data)
    yield server
    server.stop()


@pytest.fixture()
def page(playwright, card_server):
    ctx = playwright.chromium.launch_persistent_context(
        tempfile.mkdtemp(prefix="ecolens-chromium-"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(card_server.url)
    page.wait_for_selector("#search-query textarea")
    yield page
    ctx.close()


def _rows(server, sql: str, *params) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(server.data_dir / "ecolens.sqlite", timeout=30) as conn:
        return conn.execute(sql, params).fetchall()


def _image(page, src: str) -> np.ndarray:
    got = page.request.get(src if src.startswith("http") else page.url.rstrip("/") + "/" + src.lstrip("/"))
    assert got.ok, src
    return np.asarray(Image.open(io.BytesIO(got.body())).convert("RGB")).astype(int)


def test_an_event_card_its_frames_the_box_drawn_and_an_identification(card_server, page, shot):
    # the camera-trap filters are offered (this catalog has deployments), inside the Filters box
    page.click("#search-filters button, #search-filters .label-wrap")
    page.locator("#filter-camtrap").first.wait_for(state="visible")
    page.click("#filter-by-event label")
    page.fill("#search-query textarea", "a mountain lion in the snow")
    page.click("#search-button")
    page.wait_for_selector("#search-gallery .thumbnail-item img")
    wait_searched(page, 1)
    tiles = captions(page)
    assert len(tiles) == 2, tiles  # the burst as one card, the fox; the empty frame hidden
    lion = next(i for i, c in enumerate(tiles) if c.startswith("lion-"))
    assert tiles[lion].startswith("lion-1.jpg · #"), tiles[lion]  # the event's best frame, named by its file
    assert "· 3 frames · idaho · 2016-01-28 15:14" in tiles[lion], tiles[lion]
    # every caption sits under its picture, none over it (a camera-trap caption runs to several lines)
    over = page.eval_on_selector_all(
        "#search-gallery .thumbnail-item", "tiles => tiles.map(t => { const i = t.querySelector('img')"
        ".getBoundingClientRect(), c = t.querySelector('.caption-label').getBoundingClientRect();"
        " return [i.height > 40, c.top >= i.bottom - 1, c.bottom <= t.getBoundingClientRect().bottom + 1]; })")
    assert over and all(all(t) for t in over), over
    notices = page.locator("#search-notices").inner_text()
    assert "1 empty frame hidden (a detector found nothing in it; “Show empty frames” shows them)" in notices, notices
    shot(page, "camtrap-event-card")
    assert page.evaluate(CONTRAST_JS, "#search-filters") == []

    # the photo view: the detector's box drawn, the facts in words, the event's frames as a strip
    open_photo(page, "#search-gallery", lion)
    info = page.locator("#lightbox-info").inner_text()
    for said in ("Deployment\tidaho", "Salmon River ridge", "(UTC-07:00)", "3 frames",
                 "an animal (98% sure), by megadetector"):
        assert said in info, (said, info)
    strip = page.locator("#lightbox-strip .thumbnail-item")
    assert strip.count() == 3
    # the strip's label ("The event's frames ...") sits above the frames, not over their tops; so the results'
    label_bottom, first_top = page.eval_on_selector(
        "#lightbox-strip", "g => [g.querySelector('[data-testid=block-label]').getBoundingClientRect().bottom,"
        " g.querySelector('.thumbnail-item').getBoundingClientRect().top]")
    assert label_bottom <= first_top, (label_bottom, first_top)
    label_bottom, first_top = page.eval_on_selector(
        "#search-gallery", "g => [g.querySelector('[data-testid=block-label]').getBoundingClientRect().bottom,"
        " g.querySelector('.thumbnail-item').getBoundingClientRect().top]")
    assert label_bottom <= first_top, (label_bottom, first_top)
    assert [c.split(" · ")[0] for c in captions(page, "#lightbox-strip")] == \
        ["frame 1 of 3", "frame 2 of 3", "frame 3 of 3"]
    shown = _shown_id(page)
    (path,) = _rows(card_server, "SELECT path FROM photos WHERE id = ?", shown)[0]
    drawn = _image(page, page.get_attribute("#lightbox-photo img", "src"))
    with Image.open(path) as im:
        plain = np.asarray(im.convert("RGB").resize((drawn.shape[1], drawn.shape[0]))).astype(int)
    x, y, w, h = boxes_of(path)
    height, width = drawn.shape[:2]
    left, top, right = int(x * width), int(y * height), int((x + w) * width)
    diff = np.abs(drawn - plain).sum(axis=2)
    edge = diff[top + 2:top + 20, left + 10:right - 10]  # the box's top edge (and its label above)
    far = diff[int(0.05 * height):int(0.25 * height), :int(0.3 * width)]  # sky far from the box
    assert edge.mean() > 60 and far.mean() < 15, (edge.mean(), far.mean())
    shot(page, "camtrap-photo-view", full_page=False)
    assert page.evaluate(CONTRAST_JS, "#lightbox") == []  # every text of the photo view meets WCAG AA

    # a frame of the strip, then the event identified with the keyboard (Enter in the species box)
    strip.nth(2).click()
    page.wait_for_function("(id) => !document.querySelector('#lightbox-info').innerText.includes('Photo id\\t' + id)",
                           arg=str(shown))
    frame = page.locator("#lightbox-info").inner_text()
    assert "15:14:49" in frame and "not itself ranked" in frame and "Similarity" not in frame, frame
    page.fill("#identify-annotator textarea", "Ada Lovelace")
    assert page.input_value("#identify-count input") == "1"  # one animal; 0 is no animal ('blank')
    page.fill("#identify-count input", "")  # emptied: no count said
    page.fill("#identify-species textarea", "Puma concolor")
    page.press("#identify-species textarea", "Enter")
    page.wait_for_function("() => document.querySelector('#lightbox-info').innerText.includes('Puma concolor')")
    assert _rows(card_server, "SELECT count FROM observations WHERE method = 'human'") == [(None,)]
    page.fill("#identify-count input", "1")
    page.press("#identify-species textarea", "Enter")
    page.wait_for_function("() => document.querySelector('#lightbox-info').innerText.includes('1 seen')")
    info = page.locator("#lightbox-info").inner_text()
    assert "Puma concolor, 1 seen · the whole event, by Ada Lovelace (a person)" in info, info
    stored = _rows(card_server, "SELECT level, type, scientific_name, count, method, classified_by, classified_at "
                                "FROM observations WHERE method = 'human'")
    assert len(stored) == 1 and stored[0][:6] == ("event", "animal", "Puma concolor", 1, "human", "Ada Lovelace")
    assert stored[0][6]
    # c confirms the species shown: the same person's identification is replaced, never doubled
    page.locator("#lightbox-title").click()
    page.keyboard.press("c")
    page.wait_for_function("() => [...document.querySelectorAll('.toast-body, .toast-wrap')]"
                           ".some((t) => t.innerText.includes('identified by Ada Lovelace'))")
    assert len(_rows(card_server, "SELECT id FROM observations WHERE method = 'human'")) == 1
    shot(page, "camtrap-identified", full_page=False, toasts=True)
    # the next search names the card by the species identified (the catalog named none)
    close_photo(page)
    page.click("#search-button")
    wait_searched(page, 2)
    assert any(c.startswith("Puma concolor · #") and "· 3 frames" in c for c in captions(page)), captions(page)


def test_a_deployment_chosen_in_the_page_and_an_identification_by_script(card_server, page):
    page.click("#search-filters button, #search-filters .label-wrap")
    page.locator("#filter-camtrap").first.wait_for(state="visible")
    page.click("#filter-deployments input")
    # each deployment by its key and its place (the deployments CSV's locationName)
    assert {o.inner_text().strip() for o in page.get_by_role("option").all()} == \
        {"channel · Santa Cruz Island", "idaho · Salmon River ridge"}
    page.get_by_role("option", name="channel · Santa Cruz Island", exact=True).click()
    page.fill("#search-query textarea", "a fox at night")
    page.click("#search-button")
    page.wait_for_selector("#search-gallery .thumbnail-item img")
    wait_searched(page, 1)
    assert [c.split(" · ")[0] for c in captions(page)] == ["fox.jpg"]
    # a lone result is one tile of the gallery's five a row, its caption in view: not the whole gallery, cropped
    # and blown up with its caption below the gallery's bottom edge (Gradio narrows the grid to the photos)
    tile, caption, gallery = page.eval_on_selector(
        "#search-gallery", "g => [g.querySelector('.thumbnail-item'), g.querySelector('.caption-label'), g]"
        ".map(e => { const r = e.getBoundingClientRect(); return [r.width, r.bottom]; })")
    assert tile[0] < gallery[0] / 4 and caption[1] <= gallery[1], (tile, caption, gallery)
    # the API's /identify: a photo, then an event by its key; a bad count is refused in words
    client = gradio_client.Client(card_server.url, verbose=False)
    (fox,) = _rows(card_server, "SELECT id FROM photos WHERE path LIKE '%fox.jpg'")[0]
    got = client.predict("Urocyon littoralis", "a script", fox, None, 1, api_name="/identify")
    assert (got["level"], got["photo"], got["classification_method"], got["classified_by"]) == \
        ("media", fox, "human", "a script")
    (event,) = _rows(card_server, "SELECT key FROM events WHERE frames = 3")[0]
    got = client.predict("Puma concolor", "a script", None, event, 2, api_name="/identify")
    assert (got["level"], got["event"], got["count"]) == ("event", event, 2)
    with pytest.raises(Exception) as refused:
        client.predict("Puma concolor", "a script", fox, None, -3, api_name="/identify")
    assert "count" in str(refused.value)


def _shown_id(page) -> int:
    """The id of the photo the photo view shows (its info table's "Photo id" row)."""
    return int(re.search(r"Photo id\s+(\d+)", page.locator("#lightbox-info").inner_text()).group(1))


def boxes_of(path: str) -> tuple[float, float, float, float]:
    """The fixture's box of the frame at `path` (the burst frames are the Idaho frame)."""
    name = Path(path).name
    src = next(s for n, s, _, _ in FRAMES if n.endswith(name))
    images = json.loads((FIXTURE / "md_results.json").read_text())["images"]
    return tuple(next(e for e in images if e["file"] == src)["detections"][0]["bbox"])
