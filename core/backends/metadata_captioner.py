"""Offline captioner (captioner='metadata'): a short note built from what the catalog knows about a photo
(names, date, place, an existing caption). It does not look at the pixels, so it is a stand-in."""
from __future__ import annotations

from typing import Any

from PIL import Image

from core.contracts.records import Photo


def _place(lat: float | None, lon: float | None) -> str:
    if lat is None or lon is None:
        return ""
    ns = "N" if lat >= 0 else "S"
    ew = "E" if lon >= 0 else "W"
    return f"{abs(lat):.2f}°{ns}, {abs(lon):.2f}°{ew}"


def _subject(photo: Photo) -> str:
    common, sci = photo.common_name.strip(), photo.scientific_name.strip()
    if common and sci and common.lower() != sci.lower():
        return f"{common} ({sci})"
    if common or sci:
        return common or sci
    for rank in ("genus", "family", "order", "class_name", "phylum", "kingdom"):
        value = getattr(photo, rank, "").strip()
        if value:
            return f"an organism of the {rank.replace('_name', '')} {value}"
    return ""


def describe(photo: Photo | None, image: Image.Image | None = None) -> str:
    """One or two sentences about the photo from its metadata alone."""
    if photo is None:
        size = f" of {image.width}x{image.height} pixels" if image is not None else ""
        return f"Photo{size} with no catalog information."
    subject = _subject(photo)
    sentence = f"Photo of {subject}" if subject else "Photo of an unidentified subject"
    if photo.observed_on is not None:
        sentence += f", taken on {photo.observed_on.day} {photo.observed_on:%B %Y}"
    place = _place(photo.latitude, photo.longitude)
    if place:
        sentence += f" near {place}"
    sentence += "."
    if photo.caption.strip():
        note = photo.caption.strip()
        sentence += " Observer's note: " + note + ("" if note.endswith((".", "!", "?")) else ".")
    return sentence


class MetadataCaptioner:
    model_id = "metadata-captioner@v1"
    is_standin = True

    @classmethod
    def from_settings(cls, settings: Any = None, spec: str = "metadata") -> "MetadataCaptioner":
        return cls()

    def caption(self, image: Image.Image, photo: Photo | None = None) -> str:
        return describe(photo, image)
