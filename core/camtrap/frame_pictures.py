"""How the photo view draws a camera-trap frame: every detection at or above the threshold outlined with its
label (core.camtrap.boxes). Returns the edit core.served applies to its copy (a tag naming the edit, and the
function), so each drawn copy is made once and cached. (People are kept from visitors by ui.photos with
core.camtrap.people, before this is drawn.)"""
from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from PIL import Image

from core.camtrap import boxes

Edit = tuple[str, Callable[[Image.Image], Image.Image]]


def boxes_edit(shown: Sequence[dict[str, Any]], labels: Sequence[str] = ()) -> Edit | None:
    """The edit that outlines the boxes of the detections `shown` ({"bbox", "category", ...}), each with its
    label; None when there is nothing to draw."""
    kept = [d for d in shown if d and d.get("bbox")]
    if not kept:
        return None
    drawn = [tuple(float(v) for v in d["bbox"]) for d in kept]
    categories = [str(d.get("category") or "animal") for d in kept]
    labels = list(labels)[:len(drawn)]

    def apply(image: Image.Image) -> Image.Image:
        return boxes.draw(image, drawn, labels, categories)
    return json.dumps({"boxes": drawn, "labels": labels, "categories": categories}), apply
