"""How a source's metadata is merged onto a photo already in the catalog (storage.catalog's update_metadata):
an empty value never erases a stored one, a replaced value is kept in extra["history"], the source's extra keys
are merged in."""
from __future__ import annotations

from typing import Any

from core.contracts.catalog import METADATA_FIELDS
from core.contracts.records import Photo
from storage.photo_rows import json_value, stored

MAX_HISTORY = 50  # replaced values kept per photo in extra["history"] (the oldest are dropped)


def merge(data: dict[str, Any], photo: Photo, source: str, at: str) -> tuple[dict[str, Any], list[str]]:
    """(the stored fields `data` with the source's `photo` merged in, the fields that changed)."""
    new = stored(photo)
    extra = dict(data.get("extra") or {})
    history = list(extra.get("history") or [])
    changed = []
    for name in METADATA_FIELDS:
        value, old = new[name], data[name]
        if value in ("", None) or value == old:
            continue
        if old not in ("", None):
            history.append({"field": name, "old": json_value(old), "new": json_value(value), "at": at,
                            "source": source})
        data[name] = value
        changed.append(name)
    for name, note in (("observed_on", "observed_on_unparsed"), ("latitude", "latitude_invalid"),
                       ("longitude", "longitude_invalid")):
        if name in changed:  # a readable value now: the note about an unreadable one is stale
            extra.pop(note, None)
    for key, value in (photo.extra or {}).items():
        if key != "history" and value not in ("", None) and extra.get(key) != value:
            extra[key] = value
            if "extra" not in changed:
                changed.append("extra")
    if history:
        extra["history"] = history[-MAX_HISTORY:]
    data["extra"] = extra
    return data, changed
