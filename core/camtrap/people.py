"""People on camera-trap frames: a frame with a `person` detection at or above the threshold is not public (Camtrap
DP filePublic=false), and what someone who is not logged in sees of it follows the setting hide_people:
'blur' (each person's box, with a margin, pixelated and blurred so that no face or figure can be made out),
'hide' (the frame withheld) or 'show' (as it is). The page applies `for_public` to what it hands out."""
from __future__ import annotations

from typing import Iterable, Sequence

from PIL import Image, ImageFilter

MODES = ("blur", "hide", "show")
MARGIN = 0.15  # share of the box's width and height added on each side: a detector's box can cut a limb off
BLOCKS = 6  # the blurred box keeps at most this many blocks across its longer side


def person_boxes(detections: Iterable, threshold: float) -> list:
    """The `person` detections at or above `threshold` (core.contracts.camtrap.Detection or alike)."""
    return [d for d in detections if getattr(d, "category", "") == "person" and float(d.conf) >= threshold]


def shows_people(detections: Iterable, threshold: float) -> bool:
    return bool(person_boxes(detections, threshold))


def _pixel_box(d, size: tuple[int, int]) -> tuple[int, int, int, int]:
    w, h = size
    x0, y0 = (d.x - d.w * MARGIN) * w, (d.y - d.h * MARGIN) * h
    x1, y1 = (d.x + d.w * (1 + MARGIN)) * w, (d.y + d.h * (1 + MARGIN)) * h
    return (max(0, int(x0)), max(0, int(y0)), min(w, int(round(x1 + 0.5))), min(h, int(round(y1 + 0.5))))


def blur_people(image: Image.Image, boxes: Sequence) -> Image.Image:
    """A copy of `image` with every box (normalised x, y, w, h from the top left) pixelated to at most BLOCKS
    blocks across and blurred over; the rest of the frame is unchanged."""
    out = image.copy()
    for d in boxes:
        box = _pixel_box(d, out.size)
        if box[2] - box[0] < 1 or box[3] - box[1] < 1:
            continue
        part = out.crop(box)
        side = max(part.size)
        small = (max(1, part.width * BLOCKS // side), max(1, part.height * BLOCKS // side))
        coarse = part.resize(small, Image.Resampling.BOX).resize(part.size, Image.Resampling.NEAREST)
        out.paste(coarse.filter(ImageFilter.GaussianBlur(max(2, side // (BLOCKS * 2)))), box[:2])
    return out


def for_public(image: Image.Image, detections: Iterable, mode: str, threshold: float) -> Image.Image | None:
    """What a viewer who is not logged in may see of a frame: the image itself when it shows no person (or
    `mode` is 'show'), None when `mode` is 'hide', else the people blurred (blur_people)."""
    if mode not in MODES:
        raise ValueError(f"hide_people must be one of {', '.join(MODES)}, not {mode!r}")
    boxes = person_boxes(detections, threshold)
    if not boxes or mode == "show":
        return image
    if mode == "hide":
        return None
    return blur_people(image, boxes)
