"""Deployments of a camera card: which folder of the card is which deployment (the deployment_pattern setting),
and what a deployments CSV says about each (place, times, UTC offset, clock correction).

The pattern language (setting `deployment_pattern`, default `{deployment}/{anything}`) is matched against a
photo's path relative to the folder given to `ingest`, one '/'-separated name at a time:
  {deployment}  one folder name, taken as the deployment's key; it may carry fixed text around it
                (`cam-{deployment}` takes `A1` from `cam-A1`)
  *             any one folder name
  {anything}    one or more names (sub-folders, then the file); only as the last part
  other text    a folder name that must be exactly that
A photo whose path does not match has no deployment and stays a plain photo; the value `none` makes no folder a
deployment (core.camtrap.card). So with the default,
`card/siteA/x.jpg` and `card/siteA/100RECNX/y.jpg` are deployment `siteA`, and `card/z.jpg` has none;
`*/{deployment}/{anything}` takes the second folder (`card/2024/siteA/x.jpg` -> siteA).

A deployments CSV has Camtrap DP 1.0's deployment columns (deploymentID required, the rest optional) plus
`clock_offset_s` (seconds to add to the camera's clock to get the true time: a camera 90 s slow has 90) and
`utc_offset` (+HH:MM; else the offset of deploymentStart is used when it has one). The correction changes the
catalog's times, never the files."""
from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path
from typing import Any

from core.camtrap.capture_time import offset_problem
from core.contracts.errors import InputError

DEFAULT_PATTERN = "{deployment}/{anything}"
MAX_CSV_BYTES = 20 * 1024 * 1024  # a deployments table is a few hundred rows; anything this big is not one

# Camtrap DP 1.0 deployments-table-schema field -> the deployments table's column
CAMTRAP_COLUMNS = {
    "deploymentID": "key", "locationID": "location_id", "locationName": "location_name", "latitude": "latitude",
    "longitude": "longitude", "coordinateUncertainty": "coordinate_uncertainty", "deploymentStart": "start",
    "deploymentEnd": "end", "setupBy": "setup_by", "cameraID": "camera_id", "cameraModel": "camera_model",
    "cameraDelay": "camera_delay", "cameraHeight": "camera_height", "cameraDepth": "camera_depth",
    "cameraTilt": "camera_tilt", "cameraHeading": "camera_heading", "detectionDistance": "detection_distance",
    "timestampIssues": "timestamp_issues", "baitUse": "bait_use", "featureType": "feature_type",
    "habitat": "habitat", "deploymentGroups": "deployment_group", "deploymentTags": "tags",
    "deploymentComments": "comments",
}
OWN_COLUMNS = {"clock_offset_s": "clock_offset_s", "utc_offset": "utc_offset"}
FLOATS = {"latitude", "longitude", "camera_height", "camera_depth", "detection_distance", "clock_offset_s"}
INTS = {"coordinate_uncertainty", "camera_delay", "camera_tilt", "camera_heading"}
BOOLS = {"timestamp_issues", "bait_use"}
LIMITS = {"latitude": (-90, 90), "longitude": (-180, 180), "camera_tilt": (-90, 90), "camera_heading": (0, 360),
          "clock_offset_s": (-10 * 365 * 86400, 10 * 365 * 86400)}
_ISO_OFFSET = re.compile(r".*T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})$")


class DeploymentPattern:
    """A compiled deployment_pattern: key_of(relative path) -> the deployment key, or None."""

    def __init__(self, text: str = DEFAULT_PATTERN):
        self.text = (text or DEFAULT_PATTERN).strip().strip("/")
        self.regex = re.compile(self._compile(self.text))

    @staticmethod
    def _compile(text: str) -> str:
        fix = "write it like {deployment}/{anything} or */{deployment}/{anything} (docs/reference/settings.md)"
        parts = text.split("/")
        if text.count("{deployment}") != 1:
            raise InputError(f"deployment_pattern {text!r} must name {{deployment}} exactly once", fix)
        out = []
        for i, part in enumerate(parts):
            if part == "{anything}":
                if i != len(parts) - 1:
                    raise InputError(f"deployment_pattern {text!r}: {{anything}} may only be the last part", fix)
                out.append(".+")
            elif part == "*":
                out.append("[^/]+")
            elif not part:
                raise InputError(f"deployment_pattern {text!r} has an empty part (two '/' in a row)", fix)
            else:
                pieces = re.split(r"(\{deployment\})", part)
                if any("{" in p or "}" in p or "*" in p for p in pieces if p != "{deployment}"):
                    raise InputError(f"deployment_pattern {text!r}: {part!r} is not a folder name, *, {{deployment}} "
                                     "or {anything}", fix)
                out.append("".join("(?P<deployment>[^/]+)" if p == "{deployment}" else re.escape(p) for p in pieces))
        if "{deployment}" in parts[-1]:
            raise InputError(f"deployment_pattern {text!r}: the last part is the file; {{deployment}} names a folder",
                             fix)
        return "/".join(out)

    def key_of(self, relative: str) -> str | None:
        m = self.regex.fullmatch(relative.replace("\\", "/").strip("/"))
        return m.group("deployment") if m else None


def deployment_keys(root: Path, paths: list[str], pattern: DeploymentPattern) -> dict[str, str]:
    """path -> deployment key for the photos under `root` the pattern gives one to."""
    out = {}
    base = root.resolve()
    for p in paths:
        try:
            rel = Path(p).resolve().relative_to(base).as_posix()
        except ValueError:
            continue
        key = pattern.key_of(rel)
        if key:
            out[p] = key
    return out


def read_deployments_csv(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a deployments CSV as the deployments table's columns (extra: none; unknown columns are
    refused). Raises InputError naming the file, row and column of the first problem."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise InputError(f"Deployments file {p} does not exist", "give the path of a CSV with a deploymentID column")
    if p.stat().st_size > MAX_CSV_BYTES:
        raise InputError(f"Deployments file {p.name} is larger than {MAX_CSV_BYTES >> 20} MB",
                         "give a deployments table (one row per deployment), not the media or observations")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"Deployments file {p.name} is not UTF-8 text", "save it as 'CSV UTF-8'") from None
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
        headers = csv.DictReader(io.StringIO(text)).fieldnames or []
    except csv.Error as exc:
        raise InputError(f"Deployments file {p.name} is not a readable CSV ({exc})",
                         "check that it is comma-separated text with a header row") from None
    known = {**CAMTRAP_COLUMNS, **OWN_COLUMNS}
    unknown = [h for h in headers if h not in known]
    if unknown:
        raise InputError(f"Deployments file {p.name} has columns EcoLens does not know: {', '.join(unknown)}",
                         f"rename or remove them; the known columns are {', '.join(known)} "
                         "(Camtrap DP's deployment columns plus clock_offset_s and utc_offset)")
    if "deploymentID" not in headers:
        raise InputError(f"Deployments file {p.name} has no deploymentID column",
                         "add deploymentID: the deployment's folder name on the card (or its Camtrap DP id)")
    out, seen = [], set()
    for line, row in enumerate(rows, start=2):
        if None in row:  # more cells than headers
            raise InputError(f"{p.name} line {line} has more cells than the header has columns",
                             "check the commas of that line (quote cells that contain a comma)")
        out.append(_row(p.name, line, row))
        if out[-1]["key"] in seen:
            raise InputError(f"{p.name} line {line}: deploymentID {out[-1]['key']!r} is given twice",
                             "give each deployment one row")
        seen.add(out[-1]["key"])
    return out


def _row(name: str, line: int, row: dict[str, str]) -> dict[str, Any]:
    known = {**CAMTRAP_COLUMNS, **OWN_COLUMNS}
    out: dict[str, Any] = {}
    for column, value in row.items():
        field, value = known[column], (value or "").strip()
        if not value:
            continue
        where = f"{name} line {line}, column {column}"
        if field in FLOATS or field in INTS:
            try:
                number = float(value)
            except ValueError:
                raise InputError(f"{where}: {value!r} is not a number", "write a plain number, e.g. 45.52") from None
            low, high = LIMITS.get(field, (float("-inf"), float("inf")))
            if math.isnan(number) or not low <= number <= high:
                raise InputError(f"{where}: {value} is outside {low:g} to {high:g}", f"give {column} in range")
            out[field] = round(number) if field in INTS else number
        elif field in BOOLS:
            if value.lower() not in ("true", "false"):
                raise InputError(f"{where}: {value!r} is not true or false", "write true or false")
            out[field] = value.lower() == "true"
        elif field == "utc_offset":
            problem = offset_problem(value)
            if problem:
                raise InputError(f"{where}: {problem}", "write the deployment's UTC offset like +02:00 or -05:00")
            out[field] = value
        else:
            out[field] = value
    if not out.get("key"):
        raise InputError(f"{name} line {line} has no deploymentID", "give every row its deployment's id")
    if "utc_offset" not in out and out.get("start"):
        m = _ISO_OFFSET.match(out["start"])
        if m:
            out["utc_offset"] = "+00:00" if m.group(1) == "Z" else m.group(1)
            if offset_problem(out["utc_offset"]):
                raise InputError(f"{name} line {line}, column deploymentStart: {offset_problem(out['utc_offset'])}",
                                 "write deploymentStart like 2024-05-01T12:00:00+02:00")
    return out
