"""Box arithmetic and drawing for detections: boxes are normalised [x, y, w, h] from the top left (0-1 of the
frame's width and height), as MegaDetector and Camtrap DP write them.

    with_margin(box, 0.1)            # grown by 10% of its own size on every side, clipped to the frame
    pixel_rect(box, (W, H))          # (left, top, right, bottom) in pixels, at least one pixel wide
    crop(image, box, margin=0.1)     # the animal, for embedding and for the judge
    draw(image, [box], ["animal 93%"])  # a copy of the frame with the boxes drawn
    box_json(detection)              # {"bbox": [x, y, w, h], "category", "conf", "model"} (the search JSON)"""
from __future__ import annotations

from typing import Any, Sequence

from PIL import Image, ImageDraw, ImageFont

Box = tuple[float, float, float, float]  # x, y, w, h (normalised)
COLOURS = {"animal": (255, 196, 0), "person": (230, 60, 60), "vehicle": (80, 160, 255)}


def clip(box: Box) -> Box:
    """The part of `box` inside the frame (a box wholly outside keeps a zero size at the nearest edge)."""
    x, y, w, h = box
    left, top = min(max(x, 0.0), 1.0), min(max(y, 0.0), 1.0)
    right, bottom = min(max(x + w, 0.0), 1.0), min(max(y + h, 0.0), 1.0)
    return left, top, max(0.0, right - left), max(0.0, bottom - top)


def with_margin(box: Box, margin: float) -> Box:
    """`box` grown by `margin` times its own width (left and right) and height (top and bottom), clipped."""
    x, y, w, h = box
    mx, my = w * margin, h * margin
    return clip((x - mx, y - my, w + 2 * mx, h + 2 * my))


def normalise(values: Sequence[float], size: tuple[int, int], corners: bool = False) -> Box:
    """Pixel [x, y, w, h] (or [x1, y1, x2, y2] with `corners`) of a frame of `size` (width, height) as a
    normalised, clipped box."""
    width, height = size
    a, b, c, d = (float(v) for v in values)
    w, h = (c - a, d - b) if corners else (c, d)
    return clip((a / width, b / height, w / width, h / height))


def pixel_rect(box: Box, size: tuple[int, int]) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) pixels of a normalised box on a frame of `size`; at least 1 x 1 and inside."""
    width, height = size
    x, y, w, h = clip(box)
    left = min(int(round(x * width)), width - 1)
    top = min(int(round(y * height)), height - 1)
    right = max(left + 1, min(width, int(round((x + w) * width))))
    bottom = max(top + 1, min(height, int(round((y + h) * height))))
    return left, top, right, bottom


def crop(image: Image.Image, box: Box, margin: float = 0.0) -> Image.Image:
    """The part of `image` inside `box` grown by `margin` (setting crop_margin)."""
    return image.crop(pixel_rect(with_margin(box, margin), image.size))


def draw(image: Image.Image, boxes: Sequence[Box], labels: Sequence[str] = (), categories: Sequence[str] = ()
         ) -> Image.Image:
    """A copy of `image` with each box outlined (line width ~0.6% of the longer side) and its label above it."""
    out = image.convert("RGB") if image.mode != "RGB" else image.copy()
    pen = ImageDraw.Draw(out)
    line = max(2, round(max(out.size) * 0.006))
    font = _font(max(11, line * 6))
    for i, box in enumerate(boxes):
        colour = COLOURS.get(categories[i] if i < len(categories) else "animal", COLOURS["animal"])
        left, top, right, bottom = pixel_rect(box, out.size)
        pen.rectangle((left, top, right - 1, bottom - 1), outline=colour, width=line)
        if i < len(labels) and labels[i]:
            tw, th = _text_size(pen, labels[i], font)
            ty = top - th - 2 * line if top - th - 2 * line >= 0 else top + line
            pen.rectangle((left, ty, left + tw + 2 * line, ty + th + line), fill=colour)
            pen.text((left + line, ty), labels[i], fill=(0, 0, 0), font=font)
    return out


def _font(size: int):
    try:  # Pillow >= 10.1 scales its built-in font
        return ImageFont.load_default(size=size)
    except TypeError:
        return ImageFont.load_default()


def _text_size(pen: ImageDraw.ImageDraw, text: str, font) -> tuple[int, int]:
    left, top, right, bottom = pen.textbbox((0, 0), text, font=font)
    return right - left, bottom - top


def box_json(d: Any) -> dict[str, Any]:
    """A detection (core.contracts.camtrap.Detection) as the search result's JSON item (the same as the items of
    the result's `detections`, so that matched_detection is one of them)."""
    return {"bbox": [round(float(v), 6) for v in (d.x, d.y, d.w, d.h)], "category": d.category,
            "conf": round(float(d.conf), 6), "model": d.model}


def matched_words(item: dict[str, Any] | None) -> str:
    """What the page says about a match through a detection ("" for a whole-frame match)."""
    if not item:
        return ""
    return (f"matched inside the box of {'an' if item.get('category') == 'animal' else 'a'} "
            f"{item.get('category') or 'animal'}, {round(100 * float(item.get('conf') or 0))}% detector confidence")
