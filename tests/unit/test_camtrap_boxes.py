"""Box arithmetic of detections: clipping, margins, pixel rectangles, normalisation, crops and drawing."""
import pytest
from PIL import Image

from core.camtrap import boxes


def close(a, b):
    return all(abs(x - y) < 1e-9 for x, y in zip(a, b))


@pytest.mark.parametrize("box,expected", [
    ((0.1, 0.2, 0.3, 0.4), (0.1, 0.2, 0.3, 0.4)),          # inside: unchanged
    ((-0.1, 0.5, 0.3, 0.2), (0.0, 0.5, 0.2, 0.2)),         # past the left edge
    ((0.8, 0.9, 0.5, 0.5), (0.8, 0.9, 0.2, 0.1)),          # past the right and bottom edges
    ((1.2, 0.1, 0.1, 0.1), (1.0, 0.1, 0.0, 0.1)),          # wholly outside: zero width at the edge
])
def test_clip(box, expected):
    assert close(boxes.clip(box), expected)


def test_margin_grows_by_the_box_own_size_and_clips():
    assert close(boxes.with_margin((0.4, 0.4, 0.2, 0.1), 0.1), (0.38, 0.39, 0.24, 0.12))
    # at the frame's corner the margin is cut off by the frame
    assert close(boxes.with_margin((0.0, 0.0, 0.5, 0.5), 0.1), (0.0, 0.0, 0.55, 0.55))
    assert close(boxes.with_margin((0.1, 0.1, 0.2, 0.2), 0.0), (0.1, 0.1, 0.2, 0.2))


def test_normalise_pixels_and_corners():
    assert close(boxes.normalise((100, 50, 200, 100), (1000, 500)), (0.1, 0.1, 0.2, 0.2))
    assert close(boxes.normalise((100, 50, 300, 150), (1000, 500), corners=True), (0.1, 0.1, 0.2, 0.2))
    assert close(boxes.normalise((900, 0, 300, 100), (1000, 500)), (0.9, 0.0, 0.1, 0.2))  # clipped


def test_pixel_rect_is_inside_and_never_empty():
    assert boxes.pixel_rect((0.1, 0.2, 0.5, 0.5), (200, 100)) == (20, 20, 120, 70)
    assert boxes.pixel_rect((0.999, 0.999, 0.0001, 0.0001), (100, 100)) == (99, 99, 100, 100)
    assert boxes.pixel_rect((0.0, 0.0, 1.0, 1.0), (64, 48)) == (0, 0, 64, 48)


def test_crop_takes_the_box_with_its_margin():
    im = Image.new("RGB", (200, 100), (0, 0, 0))
    im.paste((255, 0, 0), (50, 25, 150, 75))  # a red animal in the middle
    part = boxes.crop(im, (0.25, 0.25, 0.5, 0.5), margin=0.0)
    assert part.size == (100, 50)
    assert part.getcolors() == [(5000, (255, 0, 0))]
    wide = boxes.crop(im, (0.25, 0.25, 0.5, 0.5), margin=0.1)
    assert wide.size == (120, 60)


def test_draw_outlines_the_box_on_a_copy():
    im = Image.new("RGB", (300, 200), (10, 10, 10))
    out = boxes.draw(im, [(0.5, 0.5, 0.25, 0.25)], ["animal 93%"], ["animal"])
    assert im.getpixel((150, 100)) == (10, 10, 10)  # the original is untouched
    assert out.getpixel((150, 120)) == boxes.COLOURS["animal"]  # the left edge of the box
    assert out.getpixel((200, 140)) == (10, 10, 10)  # inside the box: the picture
    assert out.getpixel((20, 20)) == (10, 10, 10)


def test_box_json_and_words():
    class D:
        x, y, w, h, category, conf, model = 0.12345678, 0.2, 0.3, 0.4, "animal", 0.93127, "MDV5A"
    item = boxes.box_json(D())
    assert item == {"bbox": [0.123457, 0.2, 0.3, 0.4], "category": "animal", "conf": 0.93127, "model": "MDV5A"}
    assert boxes.matched_words(item) == "matched inside the box of an animal, 93% detector confidence"
    assert boxes.matched_words(None) == ""
