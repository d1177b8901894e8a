"""Events grouped by the gap between frames (the source's events winning), MaxN, and the time of day from
the sun's position (a published sunrise as the reference)."""
from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from core.camtrap.daylight import (
    CIVIL_TWILIGHT,
    parse_times_of_day,
    sun_elevation,
    time_of_day,
    times_of_day,
)
from core.camtrap.events import Frame, group
from core.contracts.errors import InputError


def _f(pid, t=None, n=0, event=None, at=None):
    return Frame(pid, t, at, event, n)


def test_frames_closer_than_the_gap_form_one_event():
    frames = [_f(1, 0.0, 1), _f(2, 30.0, 3), _f(3, 89.0, 2), _f(4, 149.0), _f(5, 1000.0, 1)]
    events = group("siteA", frames, 60)
    assert [(e.key, e.photo_ids, e.max_n) for e in events] == [("siteA#1", [1, 2, 3], 3), ("siteA#2", [4], 0),
                                                                 ("siteA#3", [5], 1)]


def test_the_gap_is_a_setting():
    frames = [_f(1, 0.0), _f(2, 100.0), _f(3, 250.0)]
    assert len(group("d", frames, 60)) == 3
    assert len(group("d", frames, 200)) == 1


def test_source_events_win_and_untimed_frames_stand_alone():
    frames = [_f(1, 0.0, event="ev-9", n=2), _f(2, 10.0), _f(3, 5000.0, event="ev-9", n=4), _f(4), _f(5, 20.0)]
    events = group("d", frames, 60)
    assert [(e.key, e.photo_ids, e.max_n, e.from_source) for e in events] == [
        ("ev-9", [1, 3], 4, True), ("d#1", [2, 5], 0, False), ("d#2", [4], 0, False)]


def test_adding_frames_later_regroups_consistently():
    first = [_f(1, 0.0), _f(2, 100.0)]
    assert len(group("d", first, 60)) == 2
    later = first + [_f(3, 50.0)]  # a second card fills the gap: one event now
    events = group("d", later, 60)
    assert [e.photo_ids for e in events] == [[1, 3, 2]]


def test_event_start_and_end_are_local_times():
    frames = [_f(1, 0.0, at="2024-05-31T14:00:00"), _f(2, 20.0, at="2024-05-31T14:00:20")]
    (e,) = group("d", frames, 60)
    assert (e.start, e.end, e.frames) == ("2024-05-31T14:00:00", "2024-05-31T14:00:20", 2)


# The Royal Observatory Greenwich (51.4779 N, 0.0015 W) on 21 June 2024: sunrise 04:43 BST (03:43 UTC), sunset
# 21:21 BST (20:21 UTC), as published by timeanddate.com's sun table for London and by HM Nautical Almanac
# Office's rise/set figures for Greenwich (rounded to the minute).
GREENWICH = (51.4779, -0.0015)
SUNRISE = datetime(2024, 6, 21, 3, 43, tzinfo=UTC).timestamp()
SUNSET = datetime(2024, 6, 21, 20, 21, tzinfo=UTC).timestamp()


def test_a_known_sunrise_and_sunset():
    # at a published sunrise the upper limb meets the horizon: the centre is 0.833 degrees below it (refraction 34',
    # semi-diameter 16'), geometrically
    assert sun_elevation(*GREENWICH, SUNRISE) == pytest.approx(-0.833, abs=0.2)
    assert sun_elevation(*GREENWICH, SUNSET) == pytest.approx(-0.833, abs=0.2)
    assert time_of_day(*GREENWICH, SUNRISE - 20 * 60) == "dawn"
    assert time_of_day(*GREENWICH, SUNRISE + 20 * 60) == "day"
    assert time_of_day(*GREENWICH, SUNSET + 20 * 60) == "dusk"
    assert time_of_day(*GREENWICH, SUNSET - 20 * 60) == "day"
    assert time_of_day(*GREENWICH, datetime(2024, 6, 21, 0, 30, tzinfo=UTC).timestamp()) == "night"
    assert time_of_day(*GREENWICH, datetime(2024, 6, 21, 12, 0, tzinfo=UTC).timestamp()) == "day"


def test_the_other_side_of_the_world_and_unknowns():
    # Sydney at 02:00 UTC is noon local time (day); at 12:00 UTC it is 22:00 (night)
    sydney = (-33.86, 151.21)
    assert time_of_day(*sydney, datetime(2024, 6, 21, 2, tzinfo=UTC).timestamp()) == "day"
    assert time_of_day(*sydney, datetime(2024, 6, 21, 12, tzinfo=UTC).timestamp()) == "night"
    assert time_of_day(None, 1.0, 0.0) is None and time_of_day(1.0, 1.0, None) is None


def test_time_of_day_words():
    assert parse_times_of_day("night, DAWN,night") == ("night", "dawn")
    assert parse_times_of_day("") == ()
    with pytest.raises(InputError) as err:
        parse_times_of_day("night,evening")
    assert "'evening'" in err.value.message and "dawn,dusk" in err.value.hint


@pytest.mark.parametrize("place", [(51.4779, -0.0015), (-33.86, 151.21), (0.5, -78.0), (35.0, 179.9), (-15.0, -179.9),
                                   (64.0, -21.9)])
def test_many_frames_at_one_place_agree_with_one_by_one(place):
    """times_of_day (the sun's crossings once per day) says what time_of_day says frame by frame, but for a
    frame within a hair of a boundary (the two search the crossing differently)."""
    rng = np.random.default_rng(7)
    epochs = 1.7e9 + rng.uniform(0, 86400 * 30, 600)
    many = times_of_day(*place, epochs)
    for epoch, word in zip(epochs, many):
        one = time_of_day(*place, float(epoch))
        if word != one:
            height = sun_elevation(*place, float(epoch))
            assert min(abs(height), abs(height - CIVIL_TWILIGHT)) < 0.01, (epoch, word, one, height)
    assert set(many) == {"day", "night", "dawn", "dusk"}


def test_polar_days_are_worked_out_frame_by_frame():
    # Longyearbyen in June: the sun never sets, so there is no crossing; every frame is day
    epochs = datetime(2024, 6, 21, tzinfo=UTC).timestamp() + np.arange(0, 86400, 600)
    assert set(times_of_day(78.22, 15.65, epochs)) == {"day"}
