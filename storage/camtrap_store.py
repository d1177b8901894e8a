"""The camera-trap data model in SQLite (migration 0010), implementing core.contracts.camtrap.CamtrapStore. It
shares the catalog's engine (the same database file); the rest of the code sees dataclasses, never rows."""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import numpy as np
from sqlalchemy import Connection, Engine, and_, bindparam, case, delete, insert, select, text, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from core.contracts.camtrap import CamtrapFilters, Capture, Deployment, Detection, Event, Observation
from storage import camtrap_filter_sql
from storage.camtrap_models import (
    CamtrapPackageRow,
    CaptureRow,
    CropVectorRow,
    DeploymentRow,
    DetectionRow,
    EventRow,
    ObservationRow,
)
from storage.db import chunks
from storage.fileless import FILELESS
from storage.filter_sql import id_array
from storage.models import IngestRunRow, PhotoRow

DEPLOYMENTS, EVENTS, CAPTURES = DeploymentRow.__table__, EventRow.__table__, CaptureRow.__table__
DETECTIONS, CROPS, OBSERVATIONS = DetectionRow.__table__, CropVectorRow.__table__, ObservationRow.__table__
PACKAGES = CamtrapPackageRow.__table__
PHOTOS, RUNS = PhotoRow.__table__, IngestRunRow.__table__
READ_ONLY = {"deployment_key", "event_key", "media_key"}  # dataclass fields that are not columns (resolved)


def _columns(table, obj, skip: Sequence[str] = ()) -> dict[str, Any]:
    """The dataclass's values for the table's columns (extra: None when empty)."""
    out = {c.name: getattr(obj, c.name) for c in table.columns if c.name not in skip and hasattr(obj, c.name)}
    if "extra" in out:
        out["extra"] = dict(out["extra"]) if out["extra"] else None
    return out


def _make(cls, row, **more):
    """A dataclass from a row's mapping (and `more`), extra as a dict."""
    names = {f.name for f in fields(cls)}
    data = {k: v for k, v in row._mapping.items() if k in names}
    if "extra" in data:
        data["extra"] = dict(data["extra"] or {})
    data.update(more)
    return cls(**data)


class _Writes:
    """The one-writer lock, counting the writes made through it (SqlCamtrapStore.version)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0

    def __enter__(self):
        self._lock.acquire()
        return self

    def __exit__(self, *exc):
        self.count += 1
        self._lock.release()


class SqlCamtrapStore:
    """Reads run concurrently; writes go through one lock (SQLite has one writer; other processes wait on its
    busy timeout)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._write = _Writes()

    # ---- keys -------------------------------------------------------------------------------------
    @staticmethod
    def _ids_for(conn: Connection, table, keys: set[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in chunks(sorted(k for k in keys if k is not None)):
            rows = conn.execute(select(table.c.key, table.c.id).where(table.c.key.in_(chunk)))
            out.update({k: int(i) for k, i in rows})
        return out

    def _resolve(self, conn: Connection, items: Sequence, *, deployment=True, event=True) -> None:
        """Fill deployment_id / event_id of items that name them by key only; an unknown key is an error."""
        for on, table, id_name, key_name in ((deployment, DEPLOYMENTS, "deployment_id", "deployment_key"),
                                             (event, EVENTS, "event_id", "event_key")):
            if not on:
                continue
            wanted = {getattr(i, key_name) for i in items if getattr(i, id_name) is None and getattr(i, key_name)}
            if not wanted:
                continue
            found = self._ids_for(conn, table, wanted)
            unknown = sorted(wanted - set(found))
            if unknown:
                raise ValueError(f"unknown {key_name.replace('_', ' ')}s: {', '.join(unknown[:5])}")
            for i in items:
                if getattr(i, id_name) is None and getattr(i, key_name):
                    setattr(i, id_name, found[getattr(i, key_name)])

    def _upsert_keyed(self, table, items: Sequence, skip: Sequence[str]) -> dict[str, int]:
        if not items:
            return {}
        with self._write, self.engine.begin() as conn:
            if table is EVENTS:
                self._resolve(conn, items, event=False)
            rows = [_columns(table, i, skip=("id", *skip)) for i in items]
            stmt = sqlite_insert(table)
            stmt = stmt.on_conflict_do_update(index_elements=["key"],
                                              set_={c: stmt.excluded[c] for c in rows[0] if c != "key"})
            conn.execute(stmt, rows)
            ids = self._ids_for(conn, table, {i.key for i in items})
        for i in items:
            i.id = ids[i.key]
        return ids

    # ---- deployments ------------------------------------------------------------------------------
    def upsert_deployments(self, deployments: Sequence[Deployment]) -> dict[str, int]:
        return self._upsert_keyed(DEPLOYMENTS, deployments, ())

    def deployment(self, key: str) -> Deployment | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(DEPLOYMENTS).where(DEPLOYMENTS.c.key == key)).first()
        return None if row is None else _make(Deployment, row)

    def deployments(self) -> list[Deployment]:
        with self.engine.connect() as conn:
            return [_make(Deployment, r) for r in conn.execute(select(DEPLOYMENTS).order_by(DEPLOYMENTS.c.key))]

    # ---- captures ---------------------------------------------------------------------------------
    def set_captures(self, captures: Sequence[Capture]) -> None:
        if not captures:
            return
        with self._write, self.engine.begin() as conn:
            self._resolve(conn, captures)
            rows = [_columns(CAPTURES, c) for c in captures]
            stmt = sqlite_insert(CAPTURES)
            stmt = stmt.on_conflict_do_update(index_elements=["photo_id"],
                                              set_={c: stmt.excluded[c] for c in rows[0] if c != "photo_id"})
            conn.execute(stmt, rows)

    def captures(self, photo_ids: Sequence[int]) -> dict[int, Capture]:
        out: dict[int, Capture] = {}
        q = (select(CAPTURES, DEPLOYMENTS.c.key.label("deployment_key"), EVENTS.c.key.label("event_key"))
             .outerjoin(DEPLOYMENTS, DEPLOYMENTS.c.id == CAPTURES.c.deployment_id)
             .outerjoin(EVENTS, EVENTS.c.id == CAPTURES.c.event_id))
        with self.engine.connect() as conn:
            for chunk in chunks([int(i) for i in photo_ids]):
                for r in conn.execute(q.where(CAPTURES.c.photo_id.in_(chunk))):
                    out[r.photo_id] = _make(Capture, r)
        return out

    def photo_ids_for_media(self, media_keys: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        with self.engine.connect() as conn:
            for chunk in chunks(sorted(set(media_keys))):
                out.update({k: int(p) for k, p in conn.execute(
                    select(CAPTURES.c.media_key, CAPTURES.c.photo_id).where(CAPTURES.c.media_key.in_(chunk)))})
        return out

    def remove_stand_ins(self, photo_ids: Sequence[int]) -> int:
        """Delete those of these photos that stand in for a medium kept without its file (content hash
        'media:...'), their camera-trap rows with them (their file was had since); other photos are never
        touched. Returns how many went."""
        gone = 0
        with self._write, self.engine.begin() as conn:
            for chunk in chunks(sorted({int(i) for i in photo_ids})):
                gone += conn.exec_driver_sql(
                    f"DELETE FROM photos WHERE id IN ({', '.join('?' * len(chunk))}) AND substr(sha256, 1, "
                    f"{len(FILELESS)}) = ?", (*chunk, FILELESS)).rowcount
        return gone

    def mark_looked(self, photo_ids: Sequence[int]) -> None:
        if not len(photo_ids):
            return
        with self._write, self.engine.begin() as conn:
            stmt = sqlite_insert(CAPTURES).on_conflict_do_update(index_elements=["photo_id"],
                                                                 set_={"detector_looked": True})
            conn.execute(stmt, [{"photo_id": int(i), "detector_looked": True} for i in photo_ids])

    def timed_places(self, photo_ids: Sequence[int] | None = None) -> list[tuple[int, float, float, float]]:
        # the deployment's place, else the photo's own (EXIF GPS, the source's coordinates)
        placed = and_(DEPLOYMENTS.c.latitude.is_not(None), DEPLOYMENTS.c.longitude.is_not(None))
        lat = case((placed, DEPLOYMENTS.c.latitude), else_=PHOTOS.c.latitude)
        lon = case((placed, DEPLOYMENTS.c.longitude), else_=PHOTOS.c.longitude)
        q = (select(CAPTURES.c.photo_id, CAPTURES.c.utc_epoch, lat, lon)
             .outerjoin(DEPLOYMENTS, DEPLOYMENTS.c.id == CAPTURES.c.deployment_id)
             .join(PHOTOS, PHOTOS.c.id == CAPTURES.c.photo_id)
             .where(CAPTURES.c.utc_epoch.is_not(None), CAPTURES.c.time_issue.is_(None), lat.is_not(None),
                    lon.is_not(None)))
        with self.engine.connect() as conn:
            if photo_ids is None:
                return [tuple(r) for r in conn.execute(q.order_by(CAPTURES.c.photo_id))]
            out = []
            for chunk in chunks(sorted({int(i) for i in photo_ids})):
                out += [tuple(r) for r in conn.execute(q.where(CAPTURES.c.photo_id.in_(chunk)))]
            return out

    # ---- events -----------------------------------------------------------------------------------
    def upsert_events(self, events: Sequence[Event]) -> dict[str, int]:
        return self._upsert_keyed(EVENTS, events, ())

    def assign_events(self, photo_events: dict[int, int]) -> None:
        if not photo_events:
            return
        stmt = update(CAPTURES).where(CAPTURES.c.photo_id == bindparam("pid")).values(event_id=bindparam("eid"))
        with self._write, self.engine.begin() as conn:
            conn.execute(stmt, [{"pid": int(p), "eid": int(e)} for p, e in photo_events.items()])

    def events(self, ids: Sequence[int] | None = None) -> list[Event]:
        q = (select(EVENTS, DEPLOYMENTS.c.key.label("deployment_key"))
             .outerjoin(DEPLOYMENTS, DEPLOYMENTS.c.id == EVENTS.c.deployment_id))
        with self.engine.connect() as conn:
            if ids is None:
                return [_make(Event, r) for r in conn.execute(q.order_by(EVENTS.c.id))]
            out = []
            for chunk in chunks(sorted({int(i) for i in ids})):
                out += [_make(Event, r) for r in conn.execute(q.where(EVENTS.c.id.in_(chunk)))]
            return sorted(out, key=lambda e: e.id)

    def event(self, key: str) -> Event | None:
        # events.key is UNIQUE (migration 0010): SQLite's index on it answers this in one lookup
        q = (select(EVENTS, DEPLOYMENTS.c.key.label("deployment_key"))
             .outerjoin(DEPLOYMENTS, DEPLOYMENTS.c.id == EVENTS.c.deployment_id).where(EVENTS.c.key == key))
        with self.engine.connect() as conn:
            row = conn.execute(q).first()
        return None if row is None else _make(Event, row)

    def event_photos(self, event_ids: Sequence[int]) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        with self.engine.connect() as conn:
            for chunk in chunks(sorted({int(i) for i in event_ids})):
                for e, p in conn.execute(select(CAPTURES.c.event_id, CAPTURES.c.photo_id)
                                         .where(CAPTURES.c.event_id.in_(chunk))
                                         .order_by(CAPTURES.c.event_id, CAPTURES.c.utc_epoch, CAPTURES.c.captured_at,
                                                   CAPTURES.c.photo_id)):
                    out.setdefault(int(e), []).append(int(p))
        return out

    # ---- detections -------------------------------------------------------------------------------
    def add_detections(self, detections: Sequence[Detection], replace_model: str | None = None) -> list[int]:
        with self._write, self.engine.begin() as conn:
            if replace_model is not None:
                photos = sorted({int(d.photo_id) for d in detections})
                for chunk in chunks(photos):
                    conn.execute(delete(DETECTIONS).where(DETECTIONS.c.photo_id.in_(chunk),
                                                          DETECTIONS.c.model == replace_model))
            if not detections:
                return []
            rows = [_columns(DETECTIONS, d, skip=("id",)) for d in detections]
            result = conn.execute(insert(DETECTIONS).returning(DETECTIONS.c.id, sort_by_parameter_order=True), rows)
            ids = [int(r[0]) for r in result]
        for d, i in zip(detections, ids):
            d.id = i
        return ids

    def detections(self, photo_ids: Sequence[int]) -> dict[int, list[Detection]]:
        out: dict[int, list[Detection]] = {}
        with self.engine.connect() as conn:
            for chunk in chunks(sorted({int(i) for i in photo_ids})):
                for r in conn.execute(select(DETECTIONS).where(DETECTIONS.c.photo_id.in_(chunk))
                                      .order_by(DETECTIONS.c.photo_id, DETECTIONS.c.conf.desc(), DETECTIONS.c.id)):
                    out.setdefault(r.photo_id, []).append(_make(Detection, r))
        return out

    def mark_crops_indexed(self, vector_set_id: int, detection_ids: Sequence[int]) -> None:
        if len(detection_ids):
            with self._write, self.engine.begin() as conn:
                conn.execute(sqlite_insert(CROPS).on_conflict_do_nothing(),
                             [{"vector_set_id": vector_set_id, "detection_id": int(i)} for i in detection_ids])

    def crop_ids(self, vector_set_id: int) -> np.ndarray:
        with self.engine.connect() as conn:
            return id_array(conn, select(CROPS.c.detection_id).where(CROPS.c.vector_set_id == vector_set_id))

    def unmark_crops(self, vector_set_id: int, detection_ids: Sequence[int]) -> None:
        with self._write, self.engine.begin() as conn:
            for chunk in chunks(sorted({int(i) for i in detection_ids})):
                conn.execute(delete(CROPS).where(CROPS.c.vector_set_id == vector_set_id,
                                                 CROPS.c.detection_id.in_(chunk)))

    def unindexed_detections(self, vector_set_id: int, threshold: float) -> list[Detection]:
        done = select(CROPS.c.detection_id).where(CROPS.c.vector_set_id == vector_set_id)
        with self.engine.connect() as conn:
            return [_make(Detection, r) for r in conn.execute(
                select(DETECTIONS).where(DETECTIONS.c.conf >= threshold, DETECTIONS.c.id.not_in(done))
                .order_by(DETECTIONS.c.id))]

    # ---- observations -----------------------------------------------------------------------------
    def add_observations(self, observations: Sequence[Observation]) -> list[int]:
        if not observations:
            return []
        with self._write, self.engine.begin() as conn:
            self._resolve(conn, observations)
            wanted = {o.media_key for o in observations if o.photo_id is None and o.media_key}
            if wanted:
                media = {}
                for chunk in chunks(sorted(wanted)):
                    media.update(dict(conn.execute(select(CAPTURES.c.media_key, CAPTURES.c.photo_id)
                                                   .where(CAPTURES.c.media_key.in_(chunk))).all()))
                unknown = sorted(wanted - set(media))
                if unknown:
                    raise ValueError(f"unknown media keys: {', '.join(unknown[:5])}")
                for o in observations:
                    if o.photo_id is None and o.media_key:
                        o.photo_id = int(media[o.media_key])
            for chunk in chunks(sorted({o.key for o in observations if o.key})):
                conn.execute(delete(OBSERVATIONS).where(OBSERVATIONS.c.key.in_(chunk)))
            rows = [_columns(OBSERVATIONS, o, skip=("id",)) for o in observations]
            result = conn.execute(insert(OBSERVATIONS).returning(OBSERVATIONS.c.id, sort_by_parameter_order=True), rows)
            ids = [int(r[0]) for r in result]
        for o, i in zip(observations, ids):
            o.id = i
        return ids

    def observations(self, photo_ids: Sequence[int] | None = None, event_ids: Sequence[int] | None = None
                     ) -> list[Observation]:
        q = (select(OBSERVATIONS, DEPLOYMENTS.c.key.label("deployment_key"), EVENTS.c.key.label("event_key"),
                    CAPTURES.c.media_key.label("media_key"))
             .outerjoin(DEPLOYMENTS, DEPLOYMENTS.c.id == OBSERVATIONS.c.deployment_id)
             .outerjoin(EVENTS, EVENTS.c.id == OBSERVATIONS.c.event_id)
             .outerjoin(CAPTURES, CAPTURES.c.photo_id == OBSERVATIONS.c.photo_id))
        found: dict[int, Observation] = {}
        with self.engine.connect() as conn:
            if photo_ids is None and event_ids is None:
                rows = list(conn.execute(q))
            else:
                rows = []
                for column, ids in ((OBSERVATIONS.c.photo_id, photo_ids), (OBSERVATIONS.c.event_id, event_ids)):
                    for chunk in chunks(sorted({int(i) for i in ids or ()})):
                        rows += list(conn.execute(q.where(column.in_(chunk))))
        for r in rows:
            found[r.id] = _make(Observation, r)
        return [found[i] for i in sorted(found)]

    def move_observations(self, moved: Sequence[Observation]) -> None:
        if not moved:
            return
        with self._write, self.engine.begin() as conn:
            for o in moved:  # in order: a later one taking a key deletes whoever held it
                if o.key:
                    conn.execute(delete(OBSERVATIONS).where(OBSERVATIONS.c.key == o.key,
                                                            OBSERVATIONS.c.id != int(o.id)))
                conn.execute(update(OBSERVATIONS).where(OBSERVATIONS.c.id == int(o.id))
                             .values(event_id=o.event_id, key=o.key))

    # ---- packages ---------------------------------------------------------------------------------
    def save_package(self, key: str, metadata: dict[str, Any]) -> None:
        with self._write, self.engine.begin() as conn:
            stmt = sqlite_insert(PACKAGES).values(key=key, metadata=dict(metadata))
            conn.execute(stmt.on_conflict_do_update(index_elements=["key"], set_={"metadata": stmt.excluded.metadata}))

    def packages(self) -> dict[str, dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(PACKAGES.c.key, PACKAGES.c.metadata).order_by(PACKAGES.c.id))
            return {k: dict(m) for k, m in rows}

    # ---- filters ---------------------------------------------------------------------------------
    def version(self) -> tuple:
        """Changes when what the camera-trap filters read may have changed: a write through this store, a
        detection added (the detections' AUTOINCREMENT sequence), an ingest started or finished in any process
        (the latest ingest run and its end). Cheap: three lookups by primary key."""
        with self.engine.connect() as conn:
            seq = conn.execute(text("SELECT seq FROM sqlite_sequence WHERE name = 'detections'")).scalar()
            run = conn.execute(select(RUNS.c.id, RUNS.c.finished_at).order_by(RUNS.c.id.desc()).limit(1)).first()
        return self._write.count, seq, tuple(run) if run else None

    def camtrap_ids(self, filters: CamtrapFilters, threshold: float) -> np.ndarray | None:
        with self.engine.connect() as conn:
            return camtrap_filter_sql.camtrap_ids(conn, filters, threshold)

    def empty_ids(self, threshold: float) -> np.ndarray:
        with self.engine.connect() as conn:
            return camtrap_filter_sql.empty_ids(conn, threshold)
