"""A camera card end to end through the command line: a folder made here with EXIF times in two site folders,
a photo directly on the card, a video, a lying EXIF date and a deployments CSV with a clock offset; then
search --json with --deployment, --time-of-day and --by-event, and bad filter values."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.camtrap_photos import exif_jpeg, write

ROOT = Path(__file__).resolve().parents[2]
# Greenwich on 21 June 2024: sunrise 03:43 UTC, sunset 20:21 UTC (see tests/unit/test_camtrap_events_sun.py)
DEPLOYMENTS = ("deploymentID,latitude,longitude,deploymentStart,clock_offset_s,cameraModel\n"
               "siteA,51.4779,-0.0015,2024-06-01T12:00:00+01:00,60,HF2X\n"
               "siteB,51.4779,-0.0015,,,\n")


def _run(args, data_dir):
    env = dict(os.environ, ECOLENS_DATA_DIR=str(data_dir), ECOLENS_EMBEDDER="hash", CI="true")
    env.pop("ECOLENS_CONFIG", None)
    return subprocess.run([sys.executable, str(ROOT / "app.py"), *args], env=env, capture_output=True, text=True,
                          timeout=120, cwd=ROOT, check=False)


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    root = tmp_path_factory.mktemp("card")
    card = root / "card"
    # siteA (+01:00 from its deploymentStart, camera 60 s slow): a burst of two at noon, one frame at night
    write(card / "siteA" / "a1.jpg", exif_jpeg("2024:06:21 13:00:00", make="RECONYX", serial="H1", colour=(10, 20, 30)))
    write(card / "siteA" / "100RECNX" / "a2.jpg", exif_jpeg("2024:06:21 13:00:30", colour=(40, 20, 30)))
    write(card / "siteA" / "a3.jpg", exif_jpeg("2024:06:21 23:30:00", colour=(70, 20, 30)))
    # siteB: its own offset in EXIF, at dawn; and a camera whose clock says 1970
    write(card / "siteB" / "b1.jpg", exif_jpeg("2024:06:21 03:20:00", "+00:00", colour=(10, 90, 30)))
    write(card / "siteB" / "b2.jpg", exif_jpeg("1970:01:01 00:00:00", colour=(10, 120, 30)))
    write(card / "plain.jpg", exif_jpeg("2024:05:02 10:00:00", gps=(48.85, 2.35), colour=(200, 20, 30)))
    write(card / "siteB" / "clip.mp4", b"\x00\x00\x00\x18ftypmp42")
    csv = write(root / "deployments.csv", DEPLOYMENTS.encode())
    data = tmp_path_factory.mktemp("data")
    out = _run(["ingest", str(card), "--deployments", str(csv), "--json"], data)
    assert out.returncode == 0, out.stderr
    return data, json.loads(out.stdout)


def _search(data, *flags):
    out = _run(["search", "an animal", "--k", "20", "--json", *flags], data)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _by_name(result):
    return {Path(r["path"]).name: r for r in result["results"]}


def test_ingest_reports_video_and_lying_exif(card):
    _, report = card
    assert report["added"] == 6
    assert {"path": next(s["path"] for s in report["skipped"] if s["path"].endswith("clip.mp4")),
            "reason": "is a video: videos are not read yet (only its photos are ingested)"} in report["skipped"]
    lying = [n for n in report["notices"] if "cannot be true" in n]
    assert len(lying) == 1 and "b2.jpg (year 1970)" in lying[0] and lying[0].startswith("1 photo ")


def test_every_result_carries_the_camera_trap_facts(card):
    data, _ = card
    hits = _by_name(_search(data))
    assert set(hits) == {"a1.jpg", "a2.jpg", "a3.jpg", "b1.jpg", "b2.jpg", "plain.jpg"}
    for r in hits.values():
        assert {"deployment_id", "event_id", "timestamp", "detections", "matched_detection"} <= set(r)
        assert r["detections"] == [] and r["matched_detection"] is None
    # the clock correction (+60 s) changes the catalog's time; the offset comes from deploymentStart
    assert hits["a1.jpg"]["timestamp"] == "2024-06-21T13:01:00+01:00"
    assert hits["a1.jpg"]["deployment_id"] == "siteA" and hits["a2.jpg"]["deployment_id"] == "siteA"
    assert hits["a1.jpg"]["event_id"] == hits["a2.jpg"]["event_id"] != hits["a3.jpg"]["event_id"]
    assert hits["b1.jpg"]["timestamp"] == "2024-06-21T03:20:00+00:00"
    assert hits["b2.jpg"]["event_id"] is not None and hits["b2.jpg"]["timestamp"] == "1970-01-01T00:00:00"
    plain = hits["plain.jpg"]
    assert (plain["deployment_id"], plain["event_id"]) == (None, None)
    assert plain["observed_on"] == "2024-05-02" and plain["latitude"] == pytest.approx(48.85, abs=1e-4)
    assert hits["a1.jpg"]["observed_on"] == "2024-06-21" and hits["b2.jpg"]["observed_on"] is None


def test_the_catalog_changes_not_the_files(card):
    data, _ = card
    with sqlite3.connect(data / "ecolens.sqlite") as db:
        rows = dict(db.execute("select file_name, captured_at from captures"))
        serial = db.execute("select camera_serial from captures where file_name='a1.jpg'").fetchone()[0]
    assert rows["a1.jpg"] == "2024-06-21T13:01:00" and serial == "H1"


def test_deployment_filter(card):
    data, _ = card
    assert set(_by_name(_search(data, "--deployment", "siteA"))) == {"a1.jpg", "a2.jpg", "a3.jpg"}
    assert set(_by_name(_search(data, "--deployment", "siteA,siteB"))) == {"a1.jpg", "a2.jpg", "a3.jpg", "b1.jpg",
                                                                          "b2.jpg"}


def test_time_of_day_filter(card):
    data, _ = card
    night = _search(data, "--time-of-day", "night")
    assert set(_by_name(night)) == {"a3.jpg"}  # 22:31 UTC at Greenwich
    # b2.jpg's 1970 is not trusted; plain.jpg has no deployment but its own GPS (Paris, 10:00 UTC: day)
    assert any("1 photo without a known place or a trusted capture time left out" in n for n in night["notices"])
    assert set(_by_name(_search(data, "--time-of-day", "dawn"))) == {"b1.jpg"}  # 20 min before sunrise
    assert set(_by_name(_search(data, "--time-of-day", "day"))) == {"a1.jpg", "a2.jpg", "plain.jpg"}


def test_by_event(card):
    data, _ = card
    result = _search(data, "--by-event", "--deployment", "siteA")
    assert len(result["results"]) == 2
    burst = next(r for r in result["results"] if r["event_frames"] == 2)
    assert sorted(burst["event_frame_ids"]) == sorted(r["id"] for r in _search(data, "--deployment", "siteA")["results"]
                                                      if Path(r["path"]).name in ("a1.jpg", "a2.jpg"))
    assert result["filters"]["camtrap"] == {"deployments": ["siteA"], "by_event": True}


@pytest.mark.parametrize("flags,says", [
    (["--time-of-day", "evening"], "'evening' is not one of day, night, dawn, dusk"),
    (["--deployment", "siteZ"], "No deployment named 'siteZ'"),
    (["--category", "bird"], "'bird' is not one of animal, person, vehicle"),
])
def test_bad_filter_values(card, flags, says):
    data, _ = card
    out = _run(["search", "a fox", *flags], data)
    assert out.returncode != 0 and says in out.stderr and "how to fix" in out.stderr


def test_a_second_ingest_keeps_events_and_times(card):
    data, _ = card
    before = _by_name(_search(data))
    out = _run(["ingest", str(Path(before["a1.jpg"]["path"]).parents[1])], data)  # again, without the CSV
    assert out.returncode == 0, out.stderr
    after = _by_name(_search(data))
    for name in before:
        assert (after[name]["timestamp"], after[name]["event_id"]) == (before[name]["timestamp"],
                                                                        before[name]["event_id"]), name


def test_a_deployments_csv_with_unknown_columns_is_refused_before_anything_is_written(tmp_path):
    card = tmp_path / "card"
    write(card / "s1" / "x.jpg", exif_jpeg("2024:06:21 13:00:00"))
    bad = write(tmp_path / "d.csv", b"deploymentID,lattitude\ns1,51\n")
    data = tmp_path / "data"
    out = _run(["ingest", str(card), "--deployments", str(bad)], data)
    assert out.returncode != 0
    assert "lattitude" in out.stderr and "clock_offset_s" in out.stderr and "how to fix" in out.stderr
    with sqlite3.connect(data / "ecolens.sqlite") as db:
        assert db.execute("select count(*) from photos").fetchone()[0] == 0


def test_a_card_with_a_detections_file_counts_maxn_from_its_boxes(tmp_path):
    card = tmp_path / "card"
    write(card / "s1" / "a.jpg", exif_jpeg("2024:06:21 13:00:00", colour=(10, 20, 30)))
    write(card / "s1" / "b.jpg", exif_jpeg("2024:06:21 13:00:05", colour=(90, 20, 30)))
    boxes = [{"category": "1", "conf": 0.9, "bbox": [0.1 * k, 0.1, 0.05, 0.05]} for k in range(3)]
    results = {"info": {"format_version": "1.4", "detector": "MDV5a"}, "detection_categories": {"1": "animal"},
               "images": [{"file": "s1/a.jpg", "detections": boxes[:1]}, {"file": "s1/b.jpg", "detections": boxes}]}
    md = write(tmp_path / "md.json", json.dumps(results).encode())
    data = tmp_path / "data"
    out = _run(["ingest", str(card), "--detections", str(md)], data)
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(data / "ecolens.sqlite") as db:
        assert db.execute("select key, frames, max_n from events").fetchall() == [("s1#1", 2, 3)]
