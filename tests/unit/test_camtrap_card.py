"""A camera card's facts: EXIF read from JPEGs written here, capture times checked (lying EXIF kept out),
the deployment_pattern language and the deployments CSV."""
from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from core.camtrap.capture_time import offset_problem, resolve, timestamp
from core.camtrap.deployments import (
    DeploymentPattern,
    deployment_keys,
    read_deployments_csv,
)
from core.camtrap.exif import ExifFacts, read_exif
from core.contracts.errors import InputError
from tests.camtrap_photos import exif_jpeg, write

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


def test_exif_reads_time_offset_camera_and_place():
    facts = read_exif(exif_jpeg("2024:05:31 14:02:11", "+02:00", make="RECONYX", model="HF2X", serial="H500XY",
                                gps=(-33.86, 151.2085)))
    assert facts.taken == datetime(2024, 5, 31, 14, 2, 11)
    assert (facts.offset, facts.make, facts.model, facts.serial) == ("+02:00", "RECONYX", "HF2X", "H500XY")
    assert facts.latitude == pytest.approx(-33.86, abs=1e-5)
    assert facts.longitude == pytest.approx(151.2085, abs=1e-5)


def test_exif_without_tags_and_non_images_say_nothing():
    assert read_exif(exif_jpeg()).is_empty()
    assert read_exif(b"not an image at all").is_empty()
    assert read_exif(exif_jpeg("0000:00:00 00:00:00")).is_empty()  # EXIF's way of saying 'unknown'
    assert read_exif(exif_jpeg("    :  :     :  :  ", "   :  ")).is_empty()
    wrong = read_exif(exif_jpeg("2024:13:45 99:00:00"))
    assert wrong.taken is None and wrong.unreadable == "2024:13:45 99:00:00"
    assert resolve(wrong, now=NOW).time_issue == "unreadable date '2024:13:45 99:00:00'"


def test_gps_zeros_are_no_fix():
    facts = read_exif(exif_jpeg("2024:05:31 14:02:11", gps=(0.0, 0.0)))
    assert facts.latitude is None and facts.longitude is None


def test_capture_time_uses_own_offset_then_deployment_then_default():
    own = resolve(ExifFacts(taken=datetime(2024, 5, 31, 14, 0, 0), offset="+02:00"), now=NOW)
    assert own.utc_offset == "+02:00" and own.utc_epoch == datetime(2024, 5, 31, 12, tzinfo=UTC).timestamp()
    assert timestamp(own.captured_at, own.utc_offset) == "2024-05-31T14:00:00+02:00"
    dep = resolve(ExifFacts(taken=datetime(2024, 5, 31, 14, 0, 0)), deployment_offset="-05:00", now=NOW)
    assert dep.utc_offset == "-05:00" and dep.utc_epoch == datetime(2024, 5, 31, 19, tzinfo=UTC).timestamp()
    unknown = resolve(ExifFacts(taken=datetime(2024, 5, 31, 14, 0, 0)), default_offset="+01:00", now=NOW)
    assert unknown.utc_offset is None  # not known: the result shows no offset
    assert unknown.utc_epoch == datetime(2024, 5, 31, 13, tzinfo=UTC).timestamp()
    assert timestamp(unknown.captured_at, unknown.utc_offset) == "2024-05-31T14:00:00"
    assert unknown.observed_on == date(2024, 5, 31)


def test_clock_correction_moves_the_catalog_time():
    slow = resolve(ExifFacts(taken=datetime(2024, 5, 31, 23, 59, 30)), clock_offset_s=90, now=NOW)
    assert slow.captured_at == "2024-06-01T00:01:00" and slow.observed_on == date(2024, 6, 1)


@pytest.mark.parametrize("taken,offset,issue", [
    (datetime(1970, 1, 1, 0, 0, 5), "", "year 1970"),
    (datetime(1985, 3, 1, 8, 0, 0), "", "year 1985 (before 1990)"),
    (datetime(2031, 1, 1, 8, 0, 0), "", "date in the future (2031-01-01T08:00:00)"),
    (datetime(2024, 5, 31, 8, 0, 0), "+15:00", "impossible offset +15:00"),
    (datetime(2024, 5, 31, 8, 0, 0), "+05:17", "impossible offset +05:17"),
])
def test_lying_exif_is_kept_out_of_the_filters(taken, offset, issue):
    t = resolve(ExifFacts(taken=taken, offset=offset), now=NOW)
    assert t.time_issue == issue
    assert t.utc_epoch is None and t.observed_on is None
    assert t.captured_at == taken.strftime("%Y-%m-%dT%H:%M:%S")  # what the camera wrote is kept


def test_real_zone_offsets_are_accepted():
    for text in ("+05:45", "-09:30", "+14:00", "-12:00", "+00:00", "+08:45"):
        assert offset_problem(text) is None, text
    for text in ("+14:30", "-12:30", "+5:00", "0200", "+05:17"):
        assert offset_problem(text), text


@pytest.mark.parametrize("pattern,path,key", [
    ("{deployment}/{anything}", "siteA/x.jpg", "siteA"),
    ("{deployment}/{anything}", "siteA/100RECNX/y.jpg", "siteA"),
    ("{deployment}/{anything}", "z.jpg", None),
    ("*/{deployment}/{anything}", "2024/siteB/DCIM/a.jpg", "siteB"),
    ("*/{deployment}/{anything}", "siteB/a.jpg", None),
    ("cam-{deployment}/{anything}", "cam-A1/a.jpg", "A1"),
    ("cam-{deployment}/{anything}", "other/a.jpg", None),
    ("cards/{deployment}/*", "cards/S1/a.jpg", "S1"),
    ("cards/{deployment}/*", "cards/S1/sub/a.jpg", None),
])
def test_deployment_pattern(pattern, path, key):
    assert DeploymentPattern(pattern).key_of(path) == key


@pytest.mark.parametrize("bad", ["{anything}", "{deployment}/{deployment}/{anything}", "{anything}/{deployment}/x",
                                 "{deployment}", "{deployment}//{anything}", "{site}/{anything}", "a*b/{deployment}/x"])
def test_bad_patterns_are_refused_with_the_fix(bad):
    with pytest.raises(InputError) as err:
        DeploymentPattern(bad)
    assert "deployment_pattern" in err.value.message and "{deployment}/{anything}" in err.value.hint


def test_deployment_keys_relative_to_the_card(tmp_path):
    card = tmp_path / "card"
    paths = [write(card / "siteA" / "x.jpg", b"1"), write(card / "siteA" / "100RECNX" / "y.jpg", b"2"),
             write(card / "z.jpg", b"3")]
    keys = deployment_keys(card, [str(p) for p in paths], DeploymentPattern())
    assert keys == {str(paths[0]): "siteA", str(paths[1]): "siteA"}


def test_deployments_csv(tmp_path):
    f = tmp_path / "deployments.csv"
    f.write_text("deploymentID,latitude,longitude,deploymentStart,deploymentEnd,cameraModel,clock_offset_s,baitUse\n"
                 "siteA,51.5,-0.12,2024-05-01T12:00:00+01:00,2024-06-01T12:00:00+01:00,HF2X,90,false\n"
                 "siteB,,,,,,,\n")
    rows = read_deployments_csv(f)
    assert rows[0] == {"key": "siteA", "latitude": 51.5, "longitude": -0.12, "start": "2024-05-01T12:00:00+01:00",
                       "end": "2024-06-01T12:00:00+01:00", "camera_model": "HF2X", "clock_offset_s": 90.0,
                       "bait_use": False, "utc_offset": "+01:00"}
    assert rows[1] == {"key": "siteB"}


def test_deployment_pattern_none_makes_no_deployments(tmp_path):
    from types import SimpleNamespace

    from core.camtrap.card import begin
    from core.contracts.records import Photo
    from core.ingest.sources import SourceItem

    card = tmp_path / "card"
    f = write(card / "trip" / "x.jpg", exif_jpeg("2024:05:31 14:02:11", gps=(45.5, -73.6)))
    item = SourceItem(str(f), f.read_bytes, Photo(path=str(f)))
    settings = SimpleNamespace(deployment_pattern="none", default_utc_offset="+00:00")
    step = begin(None, settings, SimpleNamespace(kind="folder", items=[item]), card, None)
    assert step.keys == {}
    item.on_read(item, f.read_bytes(), "d1")  # the EXIF still fills the photo's date and place
    assert item.photo.observed_on == date(2024, 5, 31) and item.photo.latitude == pytest.approx(45.5, abs=1e-4)
    settings.deployment_pattern = "{deployment}/{anything}"
    assert begin(None, settings, SimpleNamespace(kind="folder", items=[item]), card, None).keys == {str(f): "trip"}
