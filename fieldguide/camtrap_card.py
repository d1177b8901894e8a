"""Writes the field-guide world's camera-trap side as a camera card in the field's own formats, into
<world>/camtrap/: a folder per deployment of JPEGs with real EXIF (DateTimeOriginal, OffsetTimeOriginal, Make,
Model, BodySerialNumber; GPS from the one camera that has it), a deployments CSV (Camtrap DP's deployment
columns plus clock_offset_s), the detections the world knows it drew as a MegaDetector 1.x results file (its
detector named as the stand-in it is), and truth.json (what each frame shows, for tests). Deterministic from its
own seed, apart from the world's pictures; ~50 frames in a few seconds."""
from __future__ import annotations

import csv
import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from PIL import Image

from core.contracts.world import DemoCard
from fieldguide.camtrap_draw import Drawn, draw_frame
from fieldguide.camtrap_plan import MAKE, SITES, Frame, Site, plan_card, sun_elevation
from fieldguide.world import RIGHTS_HOLDER

CARD = "camtrap"
VERSION = "fieldguide-camtrap@v1"
DETECTOR = "fieldguide-drawn (stand-in, not MegaDetector)"
CLASSIFIER = "fieldguide-drawn (stand-in, not SpeciesNet)"
CATEGORIES = {"1": "animal", "2": "person", "3": "vehicle"}
GPS_CAMERAS = {"fg-dune-east"}  # a camera that writes its place into each photo
DEPLOYMENT_COLUMNS = ("deploymentID", "locationID", "locationName", "latitude", "longitude", "coordinateUncertainty",
                      "deploymentStart", "deploymentEnd", "setupBy", "cameraID", "cameraModel", "cameraDelay",
                      "cameraHeight", "cameraDepth", "cameraTilt", "cameraHeading", "detectionDistance",
                      "timestampIssues", "baitUse", "featureType", "habitat", "deploymentGroups", "deploymentTags",
                      "deploymentComments", "clock_offset_s")
EXIF_TIME = "%Y:%m:%d %H:%M:%S"
# EXIF tags written (numbers from the EXIF 2.32 standard)
MAKE_TAG, MODEL_TAG, SOFTWARE_TAG, DATETIME_TAG = 0x010F, 0x0110, 0x0131, 0x0132
EXIF_IFD, GPS_IFD = 0x8769, 0x8825
DATETIME_ORIGINAL, DATETIME_DIGITIZED, OFFSET_TIME, OFFSET_TIME_ORIGINAL = 0x9003, 0x9004, 0x9010, 0x9011
BODY_SERIAL = 0xA431


def _dms(value: float) -> tuple[float, float, float]:
    value = abs(value)
    degrees = int(value)
    minutes = int((value - degrees) * 60)
    return (float(degrees), float(minutes), round((value - degrees - minutes / 60) * 3600, 2))


def frame_exif(frame: Frame) -> Image.Exif:
    """The EXIF a trail camera writes: its make, model and serial, and its clock's time (which for a camera with
    a wrong clock is not the true time) with the offset it was set to."""
    site, stamp = frame.site, frame.recorded.strftime(EXIF_TIME)
    exif = Image.Exif()
    exif[MAKE_TAG], exif[MODEL_TAG], exif[SOFTWARE_TAG], exif[DATETIME_TAG] = MAKE, site.camera_model, VERSION, stamp
    sub = exif.get_ifd(EXIF_IFD)
    sub[DATETIME_ORIGINAL] = sub[DATETIME_DIGITIZED] = stamp
    sub[OFFSET_TIME_ORIGINAL] = sub[OFFSET_TIME] = site.utc_offset
    sub[BODY_SERIAL] = site.serial
    if site.key in GPS_CAMERAS:
        gps = exif.get_ifd(GPS_IFD)
        gps[1], gps[2] = ("S" if site.latitude < 0 else "N"), _dms(site.latitude)
        gps[3], gps[4] = ("W" if site.longitude < 0 else "E"), _dms(site.longitude)
    return exif


def _deployment_row(site: Site) -> dict[str, str]:
    start = datetime.combine(site.start, datetime.min.time(), site.tz) + timedelta(hours=10)
    end = start + timedelta(days=site.days, hours=2)
    clock = (f"camera clock {site.clock_offset_s} s slow: add clock_offset_s to its times for the true time"
             if site.clock_offset_s else "camera clock right")
    return {"deploymentID": site.key, "locationID": f"loc-{site.key}", "locationName": site.name,
            "latitude": f"{site.latitude:.5f}", "longitude": f"{site.longitude:.5f}", "coordinateUncertainty": "10",
            "deploymentStart": start.isoformat(), "deploymentEnd": end.isoformat(), "setupBy": RIGHTS_HOLDER,
            "cameraID": site.serial, "cameraModel": f"{MAKE}-{site.camera_model}", "cameraDelay": "30",
            "cameraHeight": f"{site.height:.2f}", "cameraDepth": "", "cameraTilt": str(site.tilt),
            "cameraHeading": str(site.heading), "detectionDistance": "8.0", "timestampIssues": "false",
            "baitUse": "false", "featureType": site.feature, "habitat": site.habitat,
            "deploymentGroups": "fieldguide-demo", "deploymentTags": "synthetic",
            "deploymentComments": f"SYNTHETIC deployment of the field-guide world; {clock}",
            "clock_offset_s": str(site.clock_offset_s)}


def _box(bbox) -> list[float]:
    x, y, w, h = (round(v, 4) for v in bbox)
    return [x, y, min(w, round(1 - x, 4)), min(h, round(1 - y, 4))]


def _detections(frame: Frame, shown: list[Drawn], rng: random.Random, classes: dict[str, str]) -> list[dict]:
    """The stand-in detector's output for a frame: each drawn individual at a confidence that grows with its
    size (lower at night); an empty frame it fires on weakly gets one box below 0.2 on the grass."""
    out = []
    for d in shown:
        size = (d.bbox[2] * d.bbox[3]) ** 0.5
        conf = 0.55 + 0.4 * min(1.0, size / 0.2) - (0.12 if frame.light == "night" else 0.0) + rng.uniform(-0.05, 0.05)
        det = {"category": "2" if d.category == "person" else "1", "conf": round(min(0.99, max(0.3, conf)), 3),
               "bbox": _box(d.bbox)}
        if d.species:
            det["classifications"] = [[classes[d.species], round(rng.uniform(0.7, 0.97), 3)]]
        out.append(det)
    if frame.false_alarm:
        w, h = rng.uniform(0.04, 0.09), rng.uniform(0.04, 0.08)
        out.append({"category": "1", "conf": round(rng.uniform(0.04, 0.17), 3),
                    "bbox": _box((rng.uniform(0.05, 0.85), rng.uniform(0.45, 0.8), w, h))})
    return out


def _readme(card: Path, seed: int, n: int) -> None:
    (card / "CAMTRAP.md").write_text(
        "# EcoLens field-guide camera traps (SYNTHETIC)\n\n"
        f"Every frame here was drawn by a program ({VERSION}, seed {seed}, {n} frames from {len(SITES)} invented "
        "deployments); the animals are the field-guide world's invented species. Nothing here is a real "
        "camera, place or observation.\n\n"
        "- <deployment>/.../IMG_nnnn.jpg: frames with EXIF as a trail camera writes it (its clock's time)\n"
        "- deployments.csv: Camtrap DP deployment columns plus clock_offset_s (seconds added to a camera's time "
        "give the true time)\n"
        f"- detections.json: MegaDetector 1.x results format; the detector is a stand-in ({DETECTOR}): the boxes "
        "are exactly where the animals were drawn\n"
        "- truth.json: what each frame shows and when it was really taken\n")


def build_camtrap_demo(out_dir: str | Path, seed: int = 0,
                       progress: Callable[[int, int], None] | None = None) -> DemoCard:
    """Draw the camera card into <out_dir>/camtrap/ and return where its parts are. Same seed -> same bytes."""
    card = Path(out_dir) / CARD
    frames = plan_card(seed)
    species = sorted({i.what for f in frames for i in f.individuals if i.scene is not None})
    classes = {name: str(n) for n, name in enumerate(species, start=1)}
    rng = random.Random(f"fieldguide-camtrap-detector:{seed}")
    burst = {}
    for f in frames:
        burst.setdefault((f.site.key, f.event), []).append(f)
    images, truth = [], []
    for n, f in enumerate(frames, start=1):
        members = burst[(f.site.key, f.event)]
        img, shown = draw_frame(f, members.index(f) + 1, len(members))
        (card / f.path).parent.mkdir(parents=True, exist_ok=True)
        img.save(card / f.path, format="JPEG", quality=85, exif=frame_exif(f))
        images.append({"file": f.path, "detections": _detections(f, shown, rng, classes)})
        truth.append({"file": f.path, "deployment": f.site.key, "event": f"{f.site.key}#{f.event}",
                      "time": f.when.isoformat(), "recorded": f.recorded.isoformat(), "light": f.light,
                      "sun_elevation": round(sun_elevation(f.site, f.when), 2),
                      "shown": [{"category": d.category, "species": d.species, "bbox": list(d.bbox)} for d in shown]})
        if progress is not None:
            progress(n, len(frames))
    with open(card / "deployments.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(DEPLOYMENT_COLUMNS))
        writer.writeheader()
        writer.writerows(_deployment_row(site) for site in SITES)
    finished = max(f.when for f in frames) + timedelta(days=7)
    results = {"info": {"format_version": "1.4", "detector": DETECTOR, "classifier": CLASSIFIER,
                        "detection_completion_time": finished.strftime("%Y-%m-%d %H:%M:%S"),
                        "detector_metadata": {"megadetector_version": "none: boxes drawn by the synthetic world",
                                              "typical_detection_threshold": 0.2,
                                              "conservative_detection_threshold": 0.1},
                        "comment": "SYNTHETIC: the EcoLens field-guide world's camera-trap demo"},
               "detection_categories": dict(CATEGORIES),
               "classification_categories": {v: k for k, v in classes.items()},
               "images": images}
    (card / "detections.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (card / "truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    _readme(card, seed, len(frames))
    return DemoCard(folder=str(card), detections=str(card / "detections.json"),
                    deployments=str(card / "deployments.csv"), frames=len(frames))
