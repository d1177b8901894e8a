"""The catalog's vector sets (one per embedding model) and which photos each holds: a mixin of
storage.catalog.SqlCatalog, using its engine, its write lock (`_write`) and its write transaction (`_writing`)."""
from __future__ import annotations

import threading
from typing import Sequence

import numpy as np
from sqlalchemy import Engine, LargeBinary, delete, func, literal, select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.contracts.catalog import VectorSet
from storage import filter_sql
from storage.db import chunks
from storage.fileless import FILELESS
from storage.models import PhotoRow, PhotoVectorRow, VectorSetRow, utcnow


class VectorSets:
    engine: Engine
    _write: threading.Lock

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

    def indexed_id_array(self, vector_set_id: int) -> np.ndarray:
        with self.engine.connect() as conn:
            ids = select(PhotoVectorRow.photo_id).where(PhotoVectorRow.vector_set_id == vector_set_id)
            return filter_sql.id_array(conn, ids)

    def mark_indexed(self, vector_set_id: int, ids: Sequence[int]) -> None:
        if len(ids):
            with self._write, self._writing() as conn:  # one executemany: a checkpoint may mark 100k+ photos
                conn.exec_driver_sql("INSERT INTO photo_vectors (vector_set_id, photo_id) VALUES (?, ?)",
                                     [(vector_set_id, int(i)) for i in ids])

    def unmark_indexed(self, vector_set_id: int, ids: Sequence[int]) -> None:
        with self._write, Session(self.engine) as s, s.begin():
            for chunk in chunks([int(i) for i in ids]):
                s.execute(delete(PhotoVectorRow).where(PhotoVectorRow.vector_set_id == vector_set_id,
                                                       PhotoVectorRow.photo_id.in_(chunk)))

    def unindexed_ids(self, vector_set_id: int) -> list[int]:
        """Photos without a vector in this set, except the media kept without their file (a Camtrap DP medium whose
        file could not be had: content hash 'media:...', core.ingest.camtrapdp_source): nothing to embed."""
        done = select(PhotoVectorRow.photo_id).where(PhotoVectorRow.vector_set_id == vector_set_id)
        fileless = func.substr(PhotoRow.sha256, 1, len(FILELESS)) == literal(FILELESS, LargeBinary)
        with Session(self.engine) as s:
            return list(s.scalars(select(PhotoRow.id).where(PhotoRow.id.not_in(done), ~fileless).order_by(PhotoRow.id)))
