"""MegaDetector batch results (format 1.x; SpeciesNet writes the same format with `classifications`): read,
check and write.

The format (lila.science/megadetector-output-format): `info.format_version` "1.x" (required), `info.detector`
(the model file's name; absent in old MDv4 files), `detection_categories` {"1": "animal", ...},
`classification_categories` (optional), `images`: [{"file", "detections": [{"category", "conf", "bbox":
[x_min, y_min, width, height] normalised to 0-1 from the top left, "classifications": [[id, conf], ...]}],
"failure"}]. A file with pixel boxes, corner boxes ([x1, y1, x2, y2]) or another version is refused with
the reason, never guessed at; SpeciesNet's own predictions file is refused with the converter that turns it
into this format."""
from __future__ import annotations

import json
import logging
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Iterable, Sequence

from core.contracts.errors import InputError

log = logging.getLogger(__name__)

MAX_BYTES = 1 << 30  # a results file larger than this is refused (1M frames take ~300 MB)
VERSION = re.compile(r"^1\.\d+$")
WRITTEN_VERSION = "1.4"  # what write_megadetector writes (categories, classifications, detector, failures)
SLACK = 0.005  # rounding a writer may leave past the frame's edge (4 decimals, a box touching the edge)
NAMES = {"animal": "animal", "animals": "animal", "person": "person", "people": "person", "human": "person",
         "vehicle": "vehicle"}
CATEGORY_IDS = {"animal": "1", "person": "2", "vehicle": "3"}  # MegaDetector's own ids, used when writing
SPECIESNET_FIX = ("convert it to the MegaDetector format first with SpeciesNet's converter: "
                  "`python -m speciesnet.scripts.speciesnet_to_md predictions.json md_results.json "
                  "--base_folder FOLDER/`, then ingest FOLDER --detections md_results.json")
NO_DETECTOR = "megadetector (unnamed; MDv4 wrote no name)"


@dataclass(frozen=True)
class Box:
    """One detection of the file: normalised [x, y, w, h] from the top left."""

    x: float
    y: float
    w: float
    h: float
    category: str  # animal | person | vehicle
    conf: float
    label: str | None = None  # the classifier's best class (SpeciesNet), if any
    label_conf: float | None = None


@dataclass
class Entry:
    """One image of the file: its path as written, its boxes, or why the detector failed on it."""

    file: str
    boxes: list[Box] = field(default_factory=list)
    failure: str | None = None


@dataclass
class Results:
    format_version: str
    model: str  # detector (and classifier) name, as the detections' `model`
    entries: list[Entry]
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, reason): videos, unreadable entries
    notices: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[Entry]:
        return [e for e in self.entries if e.failure]


def read_results(path: str | Path) -> Results:
    """Read and check a results file; InputError says what is wrong with it and how to fix it."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"The detections file {path} cannot be read ({exc.strerror or exc})",
                         "check the path given to --detections") from None
    if size > MAX_BYTES:
        raise InputError(f"The detections file {path} is {size >> 20} MB, more than {MAX_BYTES >> 20} MB",
                         "split it by folder (MegaDetector's subset_json_detector_output does) and ingest each part")
    try:
        with open(path, "rb") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"The detections file {path} cannot be read ({exc})", "check the file") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"The detections file {path} is not JSON ({exc.msg} at line {exc.lineno})",
                         "give the .json file MegaDetector or SpeciesNet wrote, unchanged") from None
    return parse_results(data, str(path))


def parse_results(data: Any, source: str = "the detections file") -> Results:
    """Check the parsed JSON of a results file and turn it into Results."""
    if isinstance(data, dict) and "predictions" in data and "images" not in data:
        raise InputError(f"{source} is SpeciesNet's own predictions file, not the MegaDetector results format",
                         SPECIESNET_FIX)
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise InputError(f"{source} is not a MegaDetector results file (no \"images\" list)",
                         "give the .json file MegaDetector's run_detector_batch (or SpeciesNet via its "
                         "speciesnet_to_md converter) wrote")
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    version = info.get("format_version")
    if not isinstance(version, (str, int, float)) or not VERSION.match(str(version).strip()):
        said = "no info.format_version" if version is None else f"format_version {version!r}"
        raise InputError(f"{source} has {said}; only the MegaDetector results format 1.x is read",
                         "write the file with MegaDetector 5 or later (or its convert_output_format), "
                         "which records format_version 1.x")
    cats = data.get("detection_categories")
    if not isinstance(cats, dict) or not cats:
        raise InputError(f"{source} has no detection_categories", 'add {"1": "animal", "2": "person", "3": '
                         '"vehicle"} (MegaDetector\'s own) to the file')
    classes = data.get("classification_categories") if isinstance(data.get("classification_categories"), dict) else {}
    detector = str(info.get("detector") or "").strip() or NO_DETECTOR
    classifier = str(info.get("classifier") or "").strip()
    model = f"{detector} + {classifier}" if classifier else detector
    results = Results(str(version).strip(), model[:200], [])
    unknown: dict[str, int] = {}
    for n, item in enumerate(data["images"]):
        entry = _entry(item, n, cats, classes, source, results, unknown)
        if entry is not None:
            results.entries.append(entry)
    if unknown:
        named = ", ".join(f"{k!r} ({v})" for k, v in sorted(unknown.items()))
        results.notices.append(f"detections of categories other than animal, person and vehicle were left out: "
                               f"{named}")
    return results


def _entry(item: Any, n: int, cats: dict, classes: dict, source: str, results: Results,
           unknown: dict[str, int]) -> Entry | None:
    if not isinstance(item, dict) or not isinstance(item.get("file"), str) or not item["file"].strip():
        results.skipped.append((f"images[{n}]", "has no \"file\" path"))
        return None
    name = item["file"]
    if "frame_rate" in item or "frames_processed" in item:
        results.skipped.append((name, "is a video; videos are skipped for now"))
        return None
    failure = item.get("failure")
    if failure:
        return Entry(name, failure=str(failure)[:300])
    dets = item.get("detections")
    if dets is None:
        dets = []
    if not isinstance(dets, list):
        results.skipped.append((name, "its \"detections\" is not a list"))
        return None
    boxes = []
    for d in dets:
        box = _box(d, name, cats, classes, source)
        if box is None:
            key = str(d.get("category")) if isinstance(d, dict) else "?"
            label = str(cats.get(key, f"id {key}"))
            unknown[label] = unknown.get(label, 0) + 1
        else:
            boxes.append(box)
    boxes.sort(key=lambda b: -b.conf)
    return Entry(name, boxes)


def _box(d: Any, name: str, cats: dict, classes: dict, source: str) -> Box | None:
    """A detection as a Box; None when its category is not one of ours; InputError for a broken box."""
    where = f"{source}, image {name!r}"
    if not isinstance(d, dict):
        raise InputError(f"{where}: a detection is not an object", "give the file MegaDetector wrote, unchanged")
    key = str(d.get("category"))
    category = NAMES.get(str(cats.get(key, "")).strip().lower())
    if category is None:
        return None
    conf = d.get("conf")
    if not _number(conf) or not 0 <= conf <= 1:
        raise InputError(f"{where}: detection confidence {conf!r} is not a number from 0 to 1",
                         "give the file MegaDetector wrote, unchanged")
    bbox = d.get("bbox")
    if not isinstance(bbox, (list, tuple)) or len(bbox) != 4 or not all(_number(v) for v in bbox):
        raise InputError(f"{where}: bbox {bbox!r} is not four numbers [x, y, width, height]",
                         "give the file MegaDetector wrote, unchanged")
    x, y, w, h = (float(v) for v in bbox)
    if max(x, y, w, h) > 1 + SLACK:
        raise InputError(f"{where}: bbox {list(bbox)} holds pixel values (above 1); the format's boxes are "
                         "fractions of the image's width and height",
                         "divide x and width by the image's width and y and height by its height, or write "
                         "the file again with MegaDetector")
    if min(x, y) < -SLACK or w <= 0 or h <= 0 or x + w > 1 + SLACK or y + h > 1 + SLACK:
        raise InputError(f"{where}: bbox {list(bbox)} is not [x_min, y_min, width, height] inside the image "
                         "(corner boxes [x1, y1, x2, y2] or a box past the edge)",
                         "write boxes as [x_min, y_min, width, height], each a fraction 0-1 of the image")
    label = label_conf = None
    picks = d.get("classifications")
    if isinstance(picks, list) and picks:
        top = max((p for p in picks if isinstance(p, (list, tuple)) and len(p) == 2 and _number(p[1])),
                  key=lambda p: p[1], default=None)
        if top is not None:
            label = str(classes.get(str(top[0]), top[0]))[:200]
            label_conf = float(top[1])
    return Box(x, y, w, h, category, float(conf), label, label_conf)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# ---- matching entries to a folder --------------------------------------------------------------------
def relative_name(file: str, folder: str | Path) -> str | None:
    """The entry's path relative to `folder` ('/'-separated), or None for an absolute path outside it."""
    text = file.strip()
    windows = "\\" in text or re.match(r"^[A-Za-z]:", text)
    parts = PureWindowsPath(text).parts if windows else PurePosixPath(text).parts
    absolute = PureWindowsPath(text).is_absolute() if windows else text.startswith("/")
    if not absolute:
        clean = [p for p in parts if p not in (".", "")]
        return None if ".." in clean else "/".join(clean)
    try:
        rel = Path(*parts).resolve().relative_to(Path(folder).resolve())
    except (ValueError, OSError):
        return None
    return rel.as_posix()


def match_folder(results: Results, folder: str | Path) -> tuple[dict[str, Entry], list[str]]:
    """(relative name -> entry for the files that exist under `folder`, names of the entries that match no file)."""
    folder = Path(folder)
    found: dict[str, Entry] = {}
    missing: list[str] = []
    for entry in results.entries:
        rel = relative_name(entry.file, folder)
        if rel is None or not (folder / rel).is_file():
            missing.append(entry.file)
        else:
            found[rel] = entry
    return found, missing


# ---- writing ------------------------------------------------------------------------------------------
def write_megadetector(frames: Iterable[tuple[str, Sequence[Any] | None]], out: str | Path | None = None, *,
                       detector: str = "", classifier: str = "", failures: dict[str, str] | None = None
                       ) -> dict[str, Any]:
    """The MegaDetector results JSON (format 1.x) of `frames`: (file path as it should be written, the frame's
    detections or None when no detector looked at it). A detection is any object with x, y, w, h, category,
    conf and optionally label, label_conf, model (core.contracts.camtrap.Detection); without `detector`, the
    detections' most common model names the detector (and classifier). Frames with None are left out
    (the format cannot say "not looked at"); `failures` maps a file to the reason the detector failed on it.
    Written to `out` when given (atomically); the dict is returned either way."""
    classes: dict[str, str] = {}
    images: list[dict[str, Any]] = []
    models: dict[str, int] = {}
    for name, dets in frames:
        if dets is None:
            continue
        items = []
        for d in sorted(dets, key=lambda d: -float(d.conf)):
            if getattr(d, "model", None):
                models[d.model] = models.get(d.model, 0) + 1
            item = {"category": CATEGORY_IDS.get(d.category, "1"), "conf": round(float(d.conf), 4),
                    "bbox": [round(float(v), 4) for v in (d.x, d.y, d.w, d.h)]}
            label = getattr(d, "label", None)
            if label:
                cid = classes.setdefault(label, str(len(classes)))
                item["classifications"] = [[cid, round(float(getattr(d, "label_conf", None) or 0.0), 4)]]
            items.append(item)
        images.append({"file": name, "detections": items})
    for name, reason in (failures or {}).items():
        images.append({"file": name, "failure": reason, "detections": None})
    if not detector and models:  # the detections' own model ("detector + classifier" as read_results names it)
        detector, _, named = max(models, key=models.get).partition(" + ")
        classifier = classifier or named
    info: dict[str, Any] = {"format_version": WRITTEN_VERSION, "detector": detector or "unknown"}
    if classifier:
        info["classifier"] = classifier
    data: dict[str, Any] = {"info": info, "detection_categories": {v: k for k, v in CATEGORY_IDS.items()},
                            "images": images}
    if classes:
        data["classification_categories"] = {cid: label for label, cid in classes.items()}
    if out is not None:
        out = Path(out)
        tmp = out.with_name(out.name + ".part")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, out)
    return data
