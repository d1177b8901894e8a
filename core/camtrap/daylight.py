"""Time of day of a frame from the sun's position at its place and UTC time (astral's solar elevation of the sun's
centre, geometric: without refraction, as the twilight definitions are): `day` with the sun at or above the
horizon (0 degrees), `dawn` and `dusk` in civil twilight (the sun between -6 and 0 degrees), the sun rising
(dawn) or setting (dusk), `night` below -6 degrees. Night is where the sun is, never how dark the pixels are.

Frames without a place or a trusted time have no time of day; the filter leaves them out and says how many."""
from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
from astral import Observer
from astral.sun import SunDirection, elevation, time_at_elevation

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



PER_FRAME_UP_TO = 16  # fewer frames than this at one place are worked out one by one
# the sun crossing these elevations (degrees, geometric) going this way starts this time of day
_CROSSINGS = ((CIVIL_TWILIGHT, SunDirection.RISING, "dawn"), (0.0, SunDirection.RISING, "day"),
              (0.0, SunDirection.SETTING, "dusk"), (CIVIL_TWILIGHT, SunDirection.SETTING, "night"))
_EPOCH_DAY = date(1970, 1, 1).toordinal()


def _crossings(observer: Observer, day: int) -> list[tuple[float, str]] | None:
    """(UTC instant, the time of day it starts) of the sun's four crossings astral gives for one date; None
    where the sun does not reach one of the elevations that day (polar summer and winter)."""
    out = []
    for height, direction, starts in _CROSSINGS:
        try:
            when = time_at_elevation(observer, height, date.fromordinal(_EPOCH_DAY + day), direction,
                                     with_refraction=False)
        except ValueError:
            return None
        out.append((when.timestamp(), starts))
    return out


def times_of_day(latitude: float, longitude: float, epochs) -> list[str]:
    """time_of_day for many frames at one place: the sun's crossings of 0 and -6 degrees are worked out once
    for each UTC day with frames (and the days either side), and each frame takes the time of day that the
    last crossing before it started. Days on which the sun does not cross both (near the poles) are worked
    out frame by frame."""
    epochs = np.asarray(epochs, dtype=np.float64)
    if len(epochs) < PER_FRAME_UP_TO:
        return [time_of_day(latitude, longitude, float(e)) for e in epochs]
    observer = Observer(latitude, longitude)
    days = np.floor(epochs / 86400.0).astype(np.int64)
    out = np.empty(len(epochs), dtype=object)
    known: dict[int, list | None] = {}
    for day in np.unique(days):
        around = [known.setdefault(d, _crossings(observer, d)) if d not in known else known[d]
                  for d in (int(day) - 1, int(day), int(day) + 1)]
        chosen = np.nonzero(days == day)[0]
        if any(c is None for c in around):
            out[chosen] = [time_of_day(latitude, longitude, float(epochs[i])) for i in chosen]
            continue
        crossings = sorted(c for part in around for c in part)
        instants = np.array([c[0] for c in crossings])
        last = np.searchsorted(instants, epochs[chosen], side="right") - 1
        for i, at in zip(chosen, last):
            out[i] = crossings[at][1] if at >= 0 else time_of_day(latitude, longitude, float(epochs[i]))
    return out.tolist()
