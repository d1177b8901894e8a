"""Values of Darwin Core terms that need more than a copy of a catalog field (core.darwincore): countryCode,
modified, individualCount, and the names of the photos in the archive."""
from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Mapping, Sequence

from core.contracts.records import Photo
from core.exports import public_name

_COUNTRY = re.compile(r"[A-Za-z]{2}")
_ISO_MOMENT = re.compile(r"\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?)?( ?(UTC|Z|[+-]\d\d:?\d\d))?")


def country_code(photo: Photo) -> str:
    """The source's ISO 3166-1 alpha-2 country code, upper-cased; '' when it records none (GBIF then fills
    it from the coordinates) or writes something else (a country's name is not a code)."""
    extra = photo.extra or {}
    given = next((str(extra[k]).strip() for k in ("countryCode", "country_code") if str(extra.get(k) or "").strip()),
                 "")
    return given.upper() if _COUNTRY.fullmatch(given) else ""


def modified(photo: Photo) -> str:
    """When the source last changed the record (a column `modified`, iNaturalist's `updated_at`) in ISO 8601
    ('2024-05-02T10:11:12Z'); '' when it records none or writes no date."""
    extra = photo.extra or {}
    given = next((str(extra[k]).strip() for k in ("modified", "updated_at") if str(extra.get(k) or "").strip()), "")
    if not _ISO_MOMENT.fullmatch(given):
        return ""
    text = given.replace(" UTC", "Z").replace("UTC", "Z").replace(" ", "T", 1).replace("T+", "+").replace("T-", "-")
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return ""
    return text


def individual_count(photo: Photo, counts: Mapping[int, int]) -> object:
    """The source's individualCount when it is a whole number, else the camera-trap count of the photo
    (`counts`, by photo id), else ''."""
    given = str((photo.extra or {}).get("individualCount", (photo.extra or {}).get("individual_count", ""))).strip()
    if given.isdigit():
        return int(given)
    return counts.get(photo.id, "") if photo.id is not None else ""


def media_names(photos: Sequence[Photo], roots: Sequence[Path | str]) -> dict[int, str]:
    """How each photo is named in the archive (by its index in `photos`): its URL; its path relative to the
    first root that holds it (core.exports.public_name); else its path relative to the folder every such
    photo lies in, so two cameras' IMG_0001.JPG stay two names."""
    names = {i: public_name(p, roots) for i, p in enumerate(photos)}
    loose = {i: Path(p.path).resolve() for i, p in enumerate(photos)
             if p.path and "://" not in p.path and names[i] == Path(p.path).name and not _under(p.path, roots)}
    if len(loose) > 1:
        base = Path(os.path.commonpath([str(f.parent) for f in loose.values()]))
        names.update({i: f.relative_to(base).as_posix() for i, f in loose.items()})
    return names


def _under(path: str, roots: Sequence[Path | str]) -> bool:
    for root in roots:
        try:
            Path(path).resolve().relative_to(Path(root).expanduser().resolve())
            return True
        except (ValueError, OSError):
            continue
    return False
