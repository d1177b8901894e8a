"""A camera-trap frame found through its animal's crop, in Chromium against the real server with the demo world's
camera card (ingested at first start with its detections): searched by a picture of one animal cut from its
frame, the gallery caption says the frame matched in the animal's box, the photo view says so in words and
shows the frame with that box drawn (a served copy of its own, the box's edge in the box colour)."""
from __future__ import annotations

import re
from urllib.parse import unquote

from PIL import Image

from core.camtrap.boxes import COLOURS, crop, pixel_rect
from tests.browser.pages import captions, open_photo, search


def _image(src: str) -> Image.Image:
    """The served copy an <img> shows (its URL names the file in the server's served folder, on this machine)."""
    with Image.open(unquote(src.split("file=", 1)[1])) as im:
        return im.convert("RGB")


def test_a_frame_matched_inside_the_box_shows_the_box(server, open_browser, shot, tmp_path):
    page = open_browser()
    (path, x, y, w, h), = server.rows(
        "SELECT p.path, d.x, d.y, d.w, d.h FROM detections d JOIN photos p ON p.id = d.photo_id "
        "WHERE d.conf >= 0.2 AND d.category = 'animal' ORDER BY d.w * d.h DESC, d.id LIMIT 1")
    found = sorted(server.data_dir.rglob(path))  # a catalog path is relative to the demo world's folder
    assert found, path
    with Image.open(found[0]) as frame:
        animal = crop(frame.convert("RGB"), (x, y, w, h), 0.1)  # as the crop index holds it (crop_margin 0.1)
    animal.save(tmp_path / "animal.png")
    page.click("#search-advanced button, #search-advanced .label-wrap")
    page.set_input_files("#search-example input[type=file]", str(tmp_path / "animal.png"))
    page.wait_for_selector("#search-example img")
    search(page, "", preset="Fast")
    said = captions(page)
    index = next((i for i, c in enumerate(said) if "matched in the animal's box" in c), None)
    assert index == 0, said
    open_photo(page, "#search-gallery", index)
    text = page.locator("#lightbox").inner_text()
    assert re.search(r"Matched inside the box of an animal \(\d+% detector confidence\)", text), text
    src = page.get_attribute("#lightbox-photo img", "src")
    assert "-box" in src, src  # the copy with the box drawn, not the bare frame's
    photo_id = int(re.search(r"Photo id\s+(\d+)", text).group(1))
    drawn = _image(src)
    rows = server.rows("SELECT x, y, w, h FROM detections WHERE photo_id = ? AND conf >= 0.2", photo_id)
    assert rows, photo_id
    colour = COLOURS["animal"]
    edges = []
    for x, y, w, h in rows:  # the matched box is one of the frame's boxes: its left edge is drawn in the colour
        left, top, right, bottom = pixel_rect((x, y, w, h), drawn.size)
        middle = (top + bottom) // 2
        edges.append(max(abs(a - b) for a, b in zip(drawn.getpixel((left + 1, middle)), colour)))
    assert min(edges) < 60, edges
    shot(page, "camtrap-box", full_page=False)
