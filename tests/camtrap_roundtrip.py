"""The Camtrap DP side of the round-trip tests: a package's three tables, and the camera-trap store's contents
rendered as those tables, both as comparable rows (typed values; an empty cell is None; a timestamp as its wall
time and offset, so '...Z' and '...+00:00' compare equal). An import is lossless when
`store_tables(store) == package_tables(folder)`; an export round-trips when
`package_tables(exported) == package_tables(original)` (filePath left out where media are copied).

The rendering here is the test's own reading of core.camtrap.camtrapdp_columns (which columns fill which
fields), not the exporter's code."""
from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

from core.camtrap.camtrapdp_columns import DEPLOYMENT_COLUMNS, MEDIA_COLUMNS, OBSERVATION_COLUMNS

TABLES = {"deployments": ("deploymentID", DEPLOYMENT_COLUMNS), "media": ("mediaID", MEDIA_COLUMNS),
          "observations": ("observationID", OBSERVATION_COLUMNS)}
TIMESTAMPS = {"deploymentStart", "deploymentEnd", "timestamp", "eventStart", "eventEnd", "classificationTimestamp"}


def cell(column: str, raw, kind: str = "text"):
    """A value as the comparison sees it."""
    if raw is None or raw == "":
        return None
    if column in TIMESTAMPS:
        moment = datetime.fromisoformat(str(raw))
        return moment.replace(tzinfo=None).isoformat(), moment.utcoffset()
    if kind == "float":
        return round(float(raw), 9)
    if kind == "int":
        return int(float(raw))
    if kind == "bool":
        return raw if isinstance(raw, bool) else str(raw).lower() in ("true", "1")
    return str(raw)


def package_tables(folder: Path, leave_out: tuple[str, ...] = ()) -> dict[str, dict[str, dict]]:
    """table -> row id -> column -> value, from the package's CSV files."""
    out = {}
    for table, (key, columns) in TABLES.items():
        with open(Path(folder) / f"{table}.csv", newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
        out[table] = {r[key]: {c: cell(c, v, columns.get(c, ("", "text"))[1]) for c, v in r.items()
                               if c not in leave_out and v not in ("", None)} for r in rows}
    return out


def _row(obj, columns: dict[str, tuple[str, str]]) -> dict:
    row = {c: cell(c, getattr(obj, f), kind) for c, (f, kind) in columns.items()}
    row.update({c: cell(c, v) for c, v in (obj.extra or {}).items()})
    return row


def store_tables(store, leave_out: tuple[str, ...] = ()) -> dict[str, dict[str, dict]]:
    """The same shape, read back from the camera-trap store."""
    deployments = {}
    for d in store.deployments():
        row = _row(d, DEPLOYMENT_COLUMNS)
        row.pop("package", None)  # the store's own note of where the deployment came from
        deployments[d.key] = row
    observations = [o for o in store.observations() if o.key]
    photo_ids = {o.photo_id for o in observations if o.photo_id} | set(_all_capture_ids(store))
    captures = store.captures(sorted(photo_ids))
    media = {}
    for c in captures.values():
        if not c.media_key:
            continue
        row = _row(c, MEDIA_COLUMNS)
        offset = c.utc_offset or ""
        row["timestamp"] = cell("timestamp", f"{c.captured_at}{offset}" if c.captured_at else None)
        media[c.media_key] = row
    obs = {o.key: _row(o, OBSERVATION_COLUMNS) for o in observations}
    out = {"deployments": deployments, "media": media, "observations": obs}
    return {t: {k: {c: v for c, v in r.items() if v is not None and c not in leave_out} for k, r in rows.items()}
            for t, rows in out.items()}


def _all_capture_ids(store) -> list[int]:
    """Every photo with a capture: the frames of every event (each imported frame has one)."""
    events = store.events()
    return [p for ps in store.event_photos([e.id for e in events]).values() for p in ps]
