"""One row of each Camtrap DP 1.0 table (deployments.csv, media.csv, observations.csv) from the camera-trap
shapes (core.contracts.camtrap), with the standard's column names, in its column order (read from the shipped
table schemas); each column's value comes from where the reader (core.camtrap.camtrapdp_columns) puts it, so
that whatever a package brought in goes out again.

Times: Camtrap DP wants ISO 8601 with an offset. A time kept as given that carries one is written unchanged; a
local wall time without one takes the deployment's UTC offset (else the setting default_utc_offset), and the
deployment's `timestampIssues` says so. Observations a person made in EcoLens are timed in UTC. Detections at
or above the threshold become machine observations of their frame (the detector, or a classifier such as
SpeciesNet, in classifiedBy with its confidence), and a frame a detector looked at without finding anything a
machine `blank`."""
from __future__ import annotations

import re
from typing import Any, Sequence

from core.camtrap import camtrapdp_columns as read_as
from core.camtrap.camtrapdp_validate import shipped
from core.contracts.camtrap import Capture, Deployment, Detection, Observation


def _columns(table: str) -> tuple[str, ...]:
    """The table's columns in the standard's order, from the shipped table schema."""
    return tuple(f["name"] for f in shipped(f"{table}-table-schema")["fields"])


DEPLOYMENT_COLUMNS, MEDIA_COLUMNS, OBSERVATION_COLUMNS = (_columns(t) for t in ("deployments", "media",
                                                                                 "observations"))
# a detector's category -> Camtrap DP observationType
CATEGORY_TYPES = {"animal": "animal", "person": "human", "vehicle": "vehicle"}
_OFFSET = re.compile(r"(Z|[+-]\d{2}:?\d{2})$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def has_offset(text: str | None) -> bool:
    return bool(text) and bool(_OFFSET.search(str(text).strip()))


def with_offset(text: str | None, offset: str) -> str | None:
    """`text` (ISO 8601) as it is when it carries an offset; a local time with `offset` appended (fractions of a
    second dropped: the schema's format has none); None when there is no time."""
    if not text:
        return None
    text = str(text).strip().replace(" ", "T", 1)
    if has_offset(text):
        return text
    match = _TIME.match(text)
    return (match.group(0) if match else text) + offset


def cell(value: Any) -> str:
    """A CSV cell as Camtrap DP reads it: '' for missing, true/false, numbers without a trailing .0 noise."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _as_read(obj: Any, columns: Sequence[str], fields: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """Each column's value as the reader (core.camtrap.camtrapdp_read) stored it: the field it fills, else
    the row's `extra` under the column's own name."""
    extra = getattr(obj, "extra", None) or {}
    return {c: getattr(obj, fields[c][0]) if c in fields else extra.get(c) for c in columns}


def deployment_row(d: Deployment, start: str | None, end: str | None, issues: bool,
                   place: tuple[float, float]) -> dict[str, Any]:
    """`start`, `end` with their offsets (deployment_span), `issues`: an offset was assumed for this deployment,
    `place`: the coordinates written (the deployment's, or the configured default)."""
    row = _as_read(d, DEPLOYMENT_COLUMNS, read_as.DEPLOYMENT_COLUMNS)
    row.update({"latitude": place[0], "longitude": place[1], "deploymentStart": start, "deploymentEnd": end,
                "timestampIssues": True if issues else d.timestamp_issues})
    return row


def media_row(media_id: str, deployment: str, capture: Capture, timestamp: str, file_path: str, public: bool,
              file_name: str, mediatype: str, comments: str | None) -> dict[str, Any]:
    row = _as_read(capture, MEDIA_COLUMNS, read_as.MEDIA_COLUMNS)
    row.update({"mediaID": media_id, "deploymentID": deployment, "timestamp": timestamp, "filePath": file_path,
                "filePublic": public, "fileName": file_name, "fileMediatype": mediatype, "mediaComments": comments})
    return row


def observation_row(o: Observation, key: str, deployment: str, media_id: str | None, event_id: str | None,
                    start: str | None, end: str | None, offset: str) -> dict[str, Any]:
    """A stored observation: its method kept; one a person made in EcoLens (annotator) is human, classified
    by that person."""
    row = _as_read(o, OBSERVATION_COLUMNS, read_as.OBSERVATION_COLUMNS)
    row.update({"observationID": key, "deploymentID": deployment, "mediaID": media_id, "eventID": event_id,
                "eventStart": start, "eventEnd": end,
                "classificationMethod": o.method or ("human" if o.annotator else None),
                "classifiedBy": o.classified_by or o.annotator,
                "classificationTimestamp": with_offset(o.classified_at, "Z" if o.annotator else offset)})
    return row


def machine_rows(media_id: str, deployment: str, event_id: str | None, timestamp: str,
                 detections: Sequence[Detection], threshold: float, looked: bool) -> list[dict[str, Any]]:
    """The detector's word on one frame as media-level machine observations: one per box at or above
    `threshold` (a classifier's species and confidence where it gave one, else the detector's category and
    confidence), or one `blank` when a detector looked and found nothing there. [] when no detector looked."""
    kept = [d for d in detections if d.conf >= threshold]
    base = {c: None for c in OBSERVATION_COLUMNS}
    base.update({"deploymentID": deployment, "mediaID": media_id, "eventID": event_id, "eventStart": timestamp,
                 "eventEnd": timestamp, "observationLevel": "media", "classificationMethod": "machine"})
    if not kept:
        if not looked and not detections:
            return []
        models = sorted({d.model for d in detections if d.model})
        return [{**base, "observationID": f"{media_id}-blank", "observationType": "blank",
                 "classifiedBy": ", ".join(models) or "detector",
                 "observationComments": f"no detection at or above {threshold:g}"}]
    rows = []
    for n, d in enumerate(kept, start=1):
        x, y = min(max(d.x, 0.0), 1.0), min(max(d.y, 0.0), 1.0)
        w, h = max(round(min(d.w, 1.0 - x), 6), 1e-6), max(round(min(d.h, 1.0 - y), 6), 1e-6)
        sure = d.label_conf if d.label and d.label_conf is not None else d.conf
        rows.append({**base, "observationID": f"{media_id}-det{d.id if d.id is not None else n}",
                     "observationType": CATEGORY_TYPES.get(d.category, "unknown"),
                     "scientificName": d.label or None, "count": 1,
                     "bboxX": round(x, 6), "bboxY": round(y, 6), "bboxWidth": w, "bboxHeight": h,
                     "classifiedBy": d.model or "detector",
                     "classificationProbability": round(min(max(float(sure), 0.0), 1.0), 6)})
    return rows
