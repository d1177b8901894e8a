"""Time of day of a frame from the sun's position at its place and UTC time (astral's solar elevation of the sun's
centre, geometric: without refraction, as the twilight definitions are): `day` with the sun at or above the horizon (0 degrees), `dawn` and `dusk` in
civil twilight (the sun between -6 and 0 degrees) before noon's climb and after it (the sun rising: dawn;
setting: dusk), `night` below -6 degrees. Night is where the sun is, never how dark the pixels are.

Frames without a place or a trusted time have no time of day; the filter leaves them out and says how many."""
from __future__ import annotations

from datetime import UTC, datetime

from astral import Observer
from astral.sun import elevation

from core.contracts.errors import InputError

TIMES_OF_DAY = ("day", "night", "dawn", "dusk")
CIVIL_TWILIGHT = -6.0  # degrees: the sun's centre this far below the horizon ends civil twilight
RISING_STEP_S = 300  # the sun is rising when it is higher this many seconds later


def sun_elevation(latitude: float, longitude: float, utc_epoch: float) -> float:
    """The geometric elevation of the sun's centre in degrees, seen from the place at that instant."""
    when = datetime.fromtimestamp(utc_epoch, tz=UTC)
    return float(elevation(Observer(latitude, longitude), when, with_refraction=False))


def time_of_day(latitude: float | None, longitude: float | None, utc_epoch: float | None) -> str | None:
    """'day', 'night', 'dawn' or 'dusk'; None when the place or the time is unknown."""
    if latitude is None or longitude is None or utc_epoch is None:
        return None
    now = sun_elevation(latitude, longitude, utc_epoch)
    if now >= 0.0:
        return "day"
    if now < CIVIL_TWILIGHT:
        return "night"
    later = sun_elevation(latitude, longitude, utc_epoch + RISING_STEP_S)
    return "dawn" if later > now else "dusk"


def parse_times_of_day(text: str | list | tuple | None) -> tuple[str, ...]:
    """'day,dusk' (or a list) as a tuple of known words; InputError naming what is not one."""
    if not text:
        return ()
    words = [w.strip().lower() for w in (text.split(",") if isinstance(text, str) else text) if str(w).strip()]
    wrong = [w for w in words if w not in TIMES_OF_DAY]
    if wrong:
        raise InputError(f"Time of day {', '.join(map(repr, wrong))} is not one of {', '.join(TIMES_OF_DAY)}",
                         "e.g. --time-of-day night or --time-of-day dawn,dusk")
    return tuple(dict.fromkeys(words))
