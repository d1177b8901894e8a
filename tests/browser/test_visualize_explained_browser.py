"""Visualize explained, in Chromium against the real server: the score line says the order fuses the
pictures' rankings (so similarities need not fall in rank order), the photo view names the drawing a photo
was closest to with its thumbnail and similarity, and the pictures strip shows a lone example photo whole at
a modest size with no 'Draw new pictures' buttons (nothing was drawn)."""
from __future__ import annotations

from tests.browser.pages import close_photo, open_photo, search
from ui import strings as S


def test_visualize_order_and_the_closest_drawing_are_explained(server, open_browser, shot):
    page = open_browser()
    search(page, "a frog on a lily pad", preset="Visualize")
    assert "merges the 3 pictures' own rankings" in page.locator("#search-scale").inner_text()
    assert page.locator("#search-regenerate").is_visible()  # drawings: they can be redrawn
    open_photo(page, "#search-gallery", 2)
    info = page.locator("#lightbox-info")
    closest = info.locator(".ecolens-closest")
    closest.wait_for()
    text = closest.inner_text()
    assert text.startswith("Closest picture searched with: drawn · variant ") and "similarity 0." in text
    img = closest.locator("img")
    page.wait_for_function("(el) => el.complete && el.naturalWidth > 0", arg=img.element_handle())
    shot(page, "visualize-closest")
    close_photo(page)


def test_a_lone_example_photo_is_shown_whole_without_drawing_buttons(server, open_browser, shot):
    page = open_browser()
    photo = next(p for p in sorted((server.data_dir / "fieldguide").rglob("*.png")))
    page.click("#search-advanced button, #search-advanced .label-wrap")
    page.set_input_files("#search-example input[type=file]", str(photo))
    page.wait_for_selector("#search-example img")
    search(page, "", preset="Fast")
    item = page.locator("#search-visualizations .thumbnail-item").first
    item.wait_for()
    assert item.inner_text().strip() == S.YOUR_EXAMPLE
    box = item.bounding_box()
    assert box["width"] <= 220 and box["height"] <= 220  # a modest tile, not the strip's full width
    fit = page.eval_on_selector("#search-visualizations .thumbnail-item img", "(e) => getComputedStyle(e).objectFit")
    assert fit == "contain"  # whole, not cropped to its top
    assert not page.locator("#search-regenerate").is_visible()
    assert not page.locator("#search-drop-visualization").is_visible()
    shot(page, "example-strip")
