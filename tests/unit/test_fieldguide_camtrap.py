"""The field-guide world's camera-trap side: the card it writes carries what it says it does (EXIF times that
are truthful by the sun at the deployment's place, grey night frames, boxes on the drawn animals, a valid
MegaDetector 1.x file and a Camtrap DP deployments CSV), the same bytes for the same seed."""
from __future__ import annotations

import csv
import hashlib
import json
from datetime import UTC, datetime, timedelta, timezone
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from astral import Observer
from astral.sun import elevation
from PIL import Image

from fieldguide.camtrap_card import DEPLOYMENT_COLUMNS, build_camtrap_demo
from fieldguide.camtrap_draw import draw_frame
from fieldguide.camtrap_plan import BAR, plan_card

CAMTRAP_DP_REQUIRED = ("deploymentID", "latitude", "longitude", "deploymentStart", "deploymentEnd")


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    return build_camtrap_demo(tmp_path_factory.mktemp("fg-camtrap"), seed=0)


@pytest.fixture(scope="module")
def truth(card):
    return {t["file"]: t for t in json.loads((Path(card.folder) / "truth.json").read_text())}


@pytest.fixture(scope="module")
def results(card):
    return json.loads(Path(card.detections).read_text())


@pytest.fixture(scope="module")
def deployments(card):
    with open(card.deployments, newline="", encoding="utf-8") as fh:
        return {r["deploymentID"]: r for r in csv.DictReader(fh)}


def _jpegs(card) -> list[str]:
    root = Path(card.folder)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.jpg"))


def _exif(path: Path) -> tuple[dict, dict, dict]:
    exif = Image.open(path).getexif()
    return dict(exif), dict(exif.get_ifd(0x8769)), dict(exif.get_ifd(0x8825))


def _offset(text: str) -> timezone:
    sign = -1 if text[0] == "-" else 1
    return timezone(sign * timedelta(hours=int(text[1:3]), minutes=int(text[4:6])))


def test_a_small_card_of_deployments_with_bursts(card, truth):
    files = _jpegs(card)
    assert 40 <= len(files) <= 60
    assert card.frames == len(files) == len(truth)
    assert {f.split("/")[0] for f in files} == {t["deployment"] for t in truth.values()}
    assert 3 <= len({f.split("/")[0] for f in files}) <= 4
    assert any(len(f.split("/")) == 3 for f in files)  # a camera's own folder under the deployment's
    events: dict[str, list[datetime]] = {}
    for t in truth.values():
        events.setdefault(t["event"], []).append(datetime.fromisoformat(t["time"]))
    for times in events.values():
        times.sort()
        assert all(timedelta(0) < b - a <= timedelta(seconds=3) for a, b in pairwise(times))
    starts = sorted((k.split("#")[0], min(v), max(v)) for k, v in events.items())
    for (dep_a, _, end_a), (dep_b, start_b, _) in pairwise(starts):
        assert dep_a != dep_b or start_b - end_a > timedelta(minutes=10)  # apart by more than any event gap
    assert any(len(v) == 1 for v in events.values()) and max(len(v) for v in events.values()) >= 3
    shown = [len(t["shown"]) for t in truth.values()]
    assert shown.count(0) >= 8 and max(shown) == 2  # empty frames, and two animals in one frame (MaxN 2)
    areas = [s["bbox"][2] * s["bbox"][3] for t in truth.values() for s in t["shown"] if s["category"] == "animal"]
    assert np.median(areas) < 0.02 and max(areas) < 0.1  # small animals
    assert any(s["category"] == "person" for t in truth.values() for s in t["shown"])


def test_jpegs_carry_the_exif_a_trail_camera_writes(card, truth, deployments):
    for rel in _jpegs(card):
        main, sub, gps = _exif(Path(card.folder) / rel)
        t, dep = truth[rel], deployments[rel.split("/")[0]]
        assert main[0x010F] == "Fieldguide Optics" and dep["cameraModel"] == f"{main[0x010F]}-{main[0x0110]}"
        assert sub[0xA431] == dep["cameraID"]
        recorded = datetime.strptime(sub[0x9003], "%Y:%m:%d %H:%M:%S")
        assert recorded.isoformat() == t["recorded"]
        offset = _offset(sub[0x9011])
        true = recorded.replace(tzinfo=offset) + timedelta(seconds=float(dep["clock_offset_s"]))
        assert true == datetime.fromisoformat(t["time"])
        assert datetime.fromisoformat(dep["deploymentStart"]) < true < datetime.fromisoformat(dep["deploymentEnd"])
        if gps:  # the camera that writes its place writes the deployment's
            lat = (gps[2][0] + gps[2][1] / 60 + gps[2][2] / 3600) * (-1 if gps[1] == "S" else 1)
            lon = (gps[4][0] + gps[4][1] / 60 + gps[4][2] / 3600) * (-1 if gps[3] == "W" else 1)
            assert abs(lat - float(dep["latitude"])) < 1e-4 and abs(lon - float(dep["longitude"])) < 1e-4
    assert sum(1 for rel in _jpegs(card) if _exif(Path(card.folder) / rel)[2]) >= 1


def test_day_night_and_dusk_are_true_by_the_sun_at_the_place(card, truth, deployments):
    """From the files alone (EXIF time + the CSV's clock offset and place), the sun says what the frame shows."""
    seen = set()
    for rel in _jpegs(card):
        _, sub, _ = _exif(Path(card.folder) / rel)
        dep = deployments[rel.split("/")[0]]
        true = datetime.strptime(sub[0x9003], "%Y:%m:%d %H:%M:%S").replace(tzinfo=_offset(sub[0x9011])) \
            + timedelta(seconds=float(dep["clock_offset_s"]))
        sun = elevation(Observer(float(dep["latitude"]), float(dep["longitude"])), true.astimezone(UTC))
        light = truth[rel]["light"]
        seen.add(light)
        assert {"day": sun > 0, "night": sun < -6, "dusk": -6 <= sun <= 0 and true.hour >= 12}[light], (rel, sun)
    assert seen == {"day", "night", "dusk"}
    offsets = {r["clock_offset_s"] for r in deployments.values()}
    assert len(offsets - {"0"}) == 1  # one camera whose clock was wrong
    assert len({_exif(Path(card.folder) / rel)[1][0x9011] for rel in _jpegs(card)}) >= 3


def test_night_frames_are_grey_and_day_frames_are_not(card, truth):
    for rel, t in truth.items():
        px = np.asarray(Image.open(Path(card.folder) / rel).convert("RGB"), dtype=np.int16)[:-BAR]
        spread = np.abs(px - px.mean(axis=2, keepdims=True)).mean()
        if t["light"] == "night":
            assert spread < 1.0, rel
        else:
            assert spread > 4.0, rel


def test_boxes_lie_exactly_on_the_drawn_individuals():
    """Draw each frame with and without its individuals: every changed pixel lies inside a box, and every box's
    edges touch changed pixels."""
    frames = [f for f in plan_card(seed=0) if f.individuals]
    assert frames
    for f in frames:
        full, shown = draw_frame(f)
        empty, none = draw_frame(f, with_individuals=False)
        assert none == [] and len(shown) == len(f.individuals)
        changed = np.abs(np.asarray(full, np.int16) - np.asarray(empty, np.int16)).max(axis=2) > 0
        inside = np.zeros_like(changed)
        h, w = changed.shape
        for d in shown:
            x0, y0 = round(d.bbox[0] * w), round(d.bbox[1] * h)
            x1, y1 = round((d.bbox[0] + d.bbox[2]) * w), round((d.bbox[1] + d.bbox[3]) * h)
            inside[y0:y1, x0:x1] = True
            region = changed[y0:y1, x0:x1]
            assert region.mean() > 0.15, (f.path, d)  # mostly animal, not background
            for edge in (region[:2], region[-2:], region[:, :2], region[:, -2:]):
                assert edge.any(), (f.path, d)  # tight: nothing of the box is empty margin
        assert not (changed & ~inside).any(), f.path


def test_megadetector_results_are_valid_1x_and_match_the_drawing(card, results, truth):
    info = results["info"]
    assert info["format_version"].startswith("1.") and "stand-in" in info["detector"]
    assert "MegaDetector" in info["detector"] and "not" in info["detector"]
    assert results["detection_categories"] == {"1": "animal", "2": "person", "3": "vehicle"}
    classes = results["classification_categories"]
    files = [im["file"] for im in results["images"]]
    assert sorted(files) == _jpegs(card)  # every frame, once, relative to the card folder
    for im in results["images"]:
        t = truth[im["file"]]
        for det in im["detections"]:
            assert set(det) <= {"category", "conf", "bbox", "classifications"}
            assert det["category"] in results["detection_categories"] and 0 <= det["conf"] <= 1
            x, y, w, h = det["bbox"]
            assert 0 <= x <= 1 and 0 <= y <= 1 and 0 < w and 0 < h and x + w <= 1 + 1e-9 and y + h <= 1 + 1e-9
            for cls, p in det.get("classifications", []):
                assert cls in classes and 0 <= p <= 1
        sure = [d for d in im["detections"] if d["conf"] >= 0.2]
        assert len(sure) == len(t["shown"])  # an empty frame has nothing at or above 0.2
        for det, s in zip(sure, t["shown"]):
            assert np.allclose(det["bbox"], s["bbox"], atol=1e-4)
            assert results["detection_categories"][det["category"]] == s["category"]
            if s["species"]:
                assert classes[det["classifications"][0][0]] == s["species"]
    assert any(d["conf"] < 0.2 for im in results["images"] for d in im["detections"])  # a weak false alarm


def test_deployments_csv_has_camtrap_dp_columns(deployments, card):
    with open(card.deployments, newline="", encoding="utf-8") as fh:
        assert tuple(csv.DictReader(fh).fieldnames) == DEPLOYMENT_COLUMNS
    for row in deployments.values():
        assert all(row[c] for c in CAMTRAP_DP_REQUIRED)
        assert -90 <= float(row["latitude"]) <= 90 and -180 <= float(row["longitude"]) <= 180
        start, end = (datetime.fromisoformat(row[c]) for c in ("deploymentStart", "deploymentEnd"))
        assert start.utcoffset() is not None and start < end
        assert row["timestampIssues"] in ("true", "false") and row["baitUse"] in ("true", "false")
    assert len({datetime.fromisoformat(r["deploymentStart"]).utcoffset() for r in deployments.values()}) >= 3


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes(card, tmp_path):
    again = build_camtrap_demo(tmp_path / "again", seed=0)
    assert _hashes(Path(card.folder)) == _hashes(Path(again.folder))
    other = plan_card(seed=1)
    assert [f.when for f in other] != [f.when for f in plan_card(seed=0)]


def test_the_generic_megadetector_reader_reads_it_whole(card, truth):
    """The project's own reader of the format (core.camtrap.megadetector) takes the file without a notice:
    every frame, every box, the species as the classifier's label."""
    from core.camtrap.megadetector import read_results

    read = read_results(card.detections)
    assert read.format_version == "1.4" and "stand-in" in read.model and not read.skipped and not read.notices
    assert sorted(e.file for e in read.entries) == _jpegs(card) and not read.failures
    for e in read.entries:
        sure = [b for b in e.boxes if b.conf >= 0.2]
        assert [(b.category, b.label) for b in sure] == [(s["category"], s["species"]) for s in truth[e.file]["shown"]]
