"""How a camera-trap frame is drawn for a page: boxes outlined on it (core.camtrap.boxes: in a gallery the box
a match went through, in the photo view every detection at or above the threshold), and people kept from
visitors who are not logged in (setting hide_people: 'blur' the person's box, 'hide' the whole frame, 'show'
it as it is). Returns the edit core.served applies to its copy (a tag naming the edit, and the function), so
each kind of copy is made once and cached."""
from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, Callable, Sequence

from PIL import Image, ImageDraw

from core.camtrap import boxes
from core.camtrap.people import blur_people

Edit = tuple[str, Callable[[Image.Image], Image.Image]]
HIDDEN_TEXT = "hidden: a person was detected"


def people(facts: dict[str, Any] | None, threshold: float) -> list[tuple[float, float, float, float]]:
    """The person boxes at or above `threshold` of a frame's facts (core.camtrap.frame_facts)."""
    return [tuple(d["bbox"]) for d in (facts or {}).get("detections") or []
            if d.get("category") == "person" and float(d.get("conf") or 0) >= threshold]


def keeps_people_from(facts: dict[str, Any] | None, threshold: float, mode: str, logged_in: bool) -> str:
    """'blur' or 'hide' when this viewer must not see the people on this frame, else ''."""
    if logged_in or mode not in ("blur", "hide") or not people(facts, threshold):
        return ""
    return mode


def blur(image: Image.Image, regions: Sequence[tuple[float, float, float, float]]) -> Image.Image:
    """A copy with each normalised box blurred past recognition (core.camtrap.people.blur_people, the same
    blur the exports use)."""
    return blur_people(image.convert("RGB"), [SimpleNamespace(x=x, y=y, w=w, h=h) for x, y, w, h in regions])


def hidden(image: Image.Image) -> Image.Image:
    """A grey frame of the same size saying why nothing is shown."""
    out = Image.new("RGB", image.size, (200, 200, 200))
    ImageDraw.Draw(out).text((10, 10), HIDDEN_TEXT, fill=(60, 60, 60))
    return out


WITHHELD: Edit = ("withheld", hidden)


def edit(facts: dict[str, Any] | None, shown: Sequence[dict[str, Any]], *, threshold: float, mode: str,
         logged_in: bool, labels: Sequence[str] = ()) -> Edit | None:
    """The edit of a frame for this viewer: people blurred or the frame hidden (keeps_people_from), and the
    boxes of the detections `shown` outlined, each with its label; None when the plain copy is right."""
    keep = keeps_people_from(facts, threshold, mode, logged_in)
    drawn = [tuple(d["bbox"]) for d in shown if d and d.get("bbox")]
    if not keep and not drawn:
        return None
    regions = people(facts, threshold) if keep == "blur" else []
    categories = [d.get("category") or "animal" for d in shown if d and d.get("bbox")]
    labels = list(labels)[:len(drawn)]

    def apply(image: Image.Image) -> Image.Image:
        if keep == "hide":
            return hidden(image)
        out = blur(image, regions) if regions else image
        return boxes.draw(out, drawn, labels, categories) if drawn else out
    tag = json.dumps({"keep": keep, "regions": regions, "boxes": drawn, "labels": labels, "categories": categories})
    return tag, apply
