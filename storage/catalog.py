"""The photo catalog in SQLite, implementing core.catalog.Catalog. The rest of the code sees Photo
dataclasses, never rows."""
from __future__ import annotations

import threading
from dataclasses import fields
from datetime import datetime, timezone
from typing import Any, Sequence

from sqlalchemy import Engine, and_, delete, func, or_, select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.catalog import VectorSet
from core.records import Filters, Photo
from storage.models import IngestRunRow, PhotoRow, PhotoVectorRow, VectorSetRow, utcnow

_PHOTO_FIELDS = [f.name for f in fields(Photo)]
_CHUNK = 500  # SQLite caps bound parameters; large id lists are queried in chunks


def _row_to_photo(row: PhotoRow) -> Photo:
    return Photo(**{name: getattr(row, name) for name in _PHOTO_FIELDS if name != "extra"},
                 extra=dict(row.extra or {}))


def _chunks(items: Sequence, size: int = _CHUNK):
    for i in range(0, len(items), size):
        yield items[i:i + size]


class SqlCatalog:
    """Reads run concurrently; every write goes through one lock (one writer), as SQLite wants."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._write = threading.Lock()

    # ---- photos -----------------------------------------------------------------------------------
    def add_photos(self, photos: Sequence[Photo], run_id: int | None = None) -> list[int]:
        with self._write, Session(self.engine) as s, s.begin():
            rows = []
            for p in photos:
                data = {n: getattr(p, n) for n in _PHOTO_FIELDS if n != "id"}
                rows.append(PhotoRow(**data, ingest_run_id=run_id))
            s.add_all(rows)
            s.flush()
            ids = [r.id for r in rows]
        for p, i in zip(photos, ids):
            p.id = i
        return ids

    def ids_for_hashes(self, hashes: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        with Session(self.engine) as s:
            for chunk in _chunks(list(hashes)):
                out.update(s.execute(select(PhotoRow.sha256, PhotoRow.id).where(PhotoRow.sha256.in_(chunk))).all())
        return out

    def get_photos(self, ids: Sequence[int]) -> list[Photo]:
        found: dict[int, Photo] = {}
        with Session(self.engine) as s:
            for chunk in _chunks([int(i) for i in ids]):
                for row in s.scalars(select(PhotoRow).where(PhotoRow.id.in_(chunk))):
                    found[row.id] = _row_to_photo(row)
        return [found[int(i)] for i in ids if int(i) in found]

    def all_photos(self) -> list[Photo]:
        with Session(self.engine) as s:
            return [_row_to_photo(r) for r in s.scalars(select(PhotoRow).order_by(PhotoRow.id))]

    def count(self) -> int:
        with Session(self.engine) as s:
            return int(s.scalar(select(func.count(PhotoRow.id))) or 0)

    def _taxon_clause(self, name: str):
        name = name.strip().lower()
        cols = [PhotoRow.scientific_name, PhotoRow.common_name, PhotoRow.genus, PhotoRow.family,
                PhotoRow.order, PhotoRow.class_name, PhotoRow.phylum, PhotoRow.kingdom]
        return or_(*[func.lower(c) == name for c in cols])

    def taxon_known(self, name: str) -> bool:
        with Session(self.engine) as s:
            return s.scalar(select(PhotoRow.id).where(self._taxon_clause(name)).limit(1)) is not None

    def filter_ids(self, filters: Filters) -> list[int]:
        clauses = []
        if filters.taxon:
            clauses.append(self._taxon_clause(filters.taxon))
        if filters.date_from:
            clauses.append(PhotoRow.observed_on >= filters.date_from)
        if filters.date_to:
            clauses.append(PhotoRow.observed_on <= filters.date_to)
        if filters.months:
            clauses.append(func.cast(func.strftime("%m", PhotoRow.observed_on), type_=PhotoRow.id.type)
                           .in_([int(m) for m in filters.months]))
        if filters.bbox:
            west, south, east, north = filters.bbox
            lon = (PhotoRow.longitude.between(west, east) if west <= east
                   else or_(PhotoRow.longitude >= west, PhotoRow.longitude <= east))  # crosses 180 degrees
            clauses.append(and_(PhotoRow.latitude.between(south, north), lon))
        if filters.license:
            clauses.append(func.lower(PhotoRow.license).contains(filters.license.lower()))
        with Session(self.engine) as s:
            if filters.ids is not None:
                out: list[int] = []
                for chunk in _chunks(list(filters.ids)):
                    out += s.scalars(select(PhotoRow.id).where(PhotoRow.id.in_(chunk), *clauses)).all()
                return sorted(out)
            return list(s.scalars(select(PhotoRow.id).where(*clauses).order_by(PhotoRow.id)))

    # ---- vector sets ------------------------------------------------------------------------------
    def vector_set(self, model_id: str, dim: int) -> VectorSet:
        with Session(self.engine) as s:  # the usual case reads only: a search never waits for the write lock
            row = s.scalar(select(VectorSetRow).where(VectorSetRow.model_id == model_id))
            if row is not None:
                count = s.scalar(select(func.count()).where(PhotoVectorRow.vector_set_id == row.id)) or 0
                return VectorSet(id=row.id, model_id=row.model_id, dim=row.dim, count=int(count))
        with self._write, Session(self.engine) as s, s.begin():
            # why ON CONFLICT: another process (the web app, a second ingest) may create the same set at once
            s.execute(sqlite_insert(VectorSetRow).values(model_id=model_id, dim=dim, created_at=utcnow())
                      .on_conflict_do_nothing(index_elements=["model_id"]))
            row = s.scalar(select(VectorSetRow).where(VectorSetRow.model_id == model_id))
            count = s.scalar(select(func.count()).where(PhotoVectorRow.vector_set_id == row.id)) or 0
            return VectorSet(id=row.id, model_id=row.model_id, dim=row.dim, count=int(count))

    def vector_sets(self) -> list[VectorSet]:
        with Session(self.engine) as s:
            rows = s.scalars(select(VectorSetRow)).all()
            return [VectorSet(r.id, r.model_id, r.dim, int(s.scalar(select(func.count()).where(
                PhotoVectorRow.vector_set_id == r.id)) or 0)) for r in rows]

    def indexed_ids(self, vector_set_id: int) -> set[int]:
        with Session(self.engine) as s:
            return set(s.scalars(select(PhotoVectorRow.photo_id).where(PhotoVectorRow.vector_set_id == vector_set_id)))

    def mark_indexed(self, vector_set_id: int, ids: Sequence[int]) -> None:
        with self._write, Session(self.engine) as s, s.begin():
            s.add_all([PhotoVectorRow(vector_set_id=vector_set_id, photo_id=int(i)) for i in ids])

    def unmark_indexed(self, vector_set_id: int, ids: Sequence[int]) -> None:
        with self._write, Session(self.engine) as s, s.begin():
            for chunk in _chunks([int(i) for i in ids]):
                s.execute(delete(PhotoVectorRow).where(PhotoVectorRow.vector_set_id == vector_set_id,
                                                       PhotoVectorRow.photo_id.in_(chunk)))

    def unindexed_ids(self, vector_set_id: int) -> list[int]:
        done = select(PhotoVectorRow.photo_id).where(PhotoVectorRow.vector_set_id == vector_set_id)
        with Session(self.engine) as s:
            return list(s.scalars(select(PhotoRow.id).where(PhotoRow.id.not_in(done)).order_by(PhotoRow.id)))

    # ---- ingest runs ------------------------------------------------------------------------------
    def start_ingest(self, source: str) -> int:
        with self._write, Session(self.engine) as s, s.begin():
            row = IngestRunRow(source=source, summary={})
            s.add(row)
            s.flush()
            return row.id

    def finish_ingest(self, run_id: int, summary: dict[str, Any]) -> None:
        with self._write, Session(self.engine) as s, s.begin():
            row = s.get(IngestRunRow, run_id)
            row.summary, row.finished_at = summary, datetime.now(timezone.utc)
