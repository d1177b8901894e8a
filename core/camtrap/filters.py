"""The camera-trap filters from what a person typed (the command line's flags, the API's /search parameters):
comma-separated lists checked against the words each part takes, or None when none is set."""
from __future__ import annotations

from core.camtrap.daylight import parse_times_of_day
from core.camtrap.pool import check
from core.contracts.camtrap import CamtrapFilters


def _words(text) -> tuple[str, ...]:
    if not text:
        return ()
    items = text.split(",") if isinstance(text, str) else list(text)
    return tuple(dict.fromkeys(str(w).strip() for w in items if str(w).strip()))


def camtrap_filters(deployment=None, time_of_day=None, include_empty: bool = False, by_event: bool = False,
                    category=None, species: str | None = None, classified: str | None = None) -> CamtrapFilters | None:
    """CamtrapFilters from the typed values (lists as 'a,b' or a list); InputError naming a wrong value."""
    out = CamtrapFilters(deployments=_words(deployment), times_of_day=parse_times_of_day(time_of_day),
                         include_empty=bool(include_empty), by_event=bool(by_event),
                         categories=tuple(w.lower() for w in _words(category)), species=(species or "").strip(),
                         classified=(classified or "").strip().lower())
    check(out)
    return None if out == CamtrapFilters() else out
