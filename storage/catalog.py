"""The photo catalog in SQLite, implementing core.contracts.catalog.Catalog. The rest of the code sees Photo
dataclasses, never rows."""
from __future__ import annotations

import threading
from dataclasses import fields
from datetime import datetime, timezone
from typing import Any, Sequence

import numpy as np
from sqlalchemy import (Engine, and_, column, delete, false, func, literal, or_, select, table, text, union,
                        union_all)
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.contracts import bounds
from core.contracts.catalog import METADATA_FIELDS, VectorSet
from core.licences import like_escape, parse_licence, parse_licence_filter
from core.contracts.records import Filters, Photo
from storage.db import NAME_KEY_SQL
from storage.models import IngestRunRow, PhotoRow, PhotoVectorRow, VectorSetRow, utcnow

_PHOTO_FIELDS = [f.name for f in fields(Photo)]
# names stored Unicode-normalised (NFC, trimmed): the same name typed composed or decomposed is one name
_NAME_FIELDS = ("scientific_name", "common_name", "kingdom", "phylum", "class_name", "order", "family", "genus",
                "rights_holder")
MAX_HISTORY = 50  # replaced values kept per photo in extra["history"] (the oldest are dropped)
_CHUNK = 500  # SQLite caps bound parameters; large id lists are queried in chunks


def _stored(photo: Photo) -> dict[str, Any]:
    """The columns of a photo as stored: names normalised, the month and the licence code derived."""
    data = {n: getattr(photo, n) for n in _PHOTO_FIELDS if n != "id"}
    for n in _NAME_FIELDS:
        data[n] = bounds.name(data[n])
    data["license"] = (data["license"] or "").strip()
    lic = parse_licence(data["license"])
    data.update(observed_month=photo.observed_on.month if photo.observed_on else None, license_code=lic.code,
                license_version=lic.version)
    return data


def _json_value(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def _row_to_photo(row: PhotoRow) -> Photo:
    return Photo(**{name: getattr(row, name) for name in _PHOTO_FIELDS if name != "extra"},
                 extra=dict(row.extra or {}))


def _chunks(items: Sequence, size: int = _CHUNK):
    for i in range(0, len(items), size):
        yield items[i:i + size]


_PLACES = table("photo_places", column("id"), column("min_lat"), column("max_lat"), column("min_lon"),
                column("max_lon"))  # the R*Tree of migration 0004_place_rtree (kept by triggers)


def _places_in(west: float, south: float, east: float, north: float):
    """Ids of the photos inside a box, from the R*Tree; a box crossing 180 degrees is two boxes, which share
    no photo (west > east: one ends at 180, the other at east < 180), so UNION ALL, not a UNION's temporary
    B-tree. (The R*Tree keeps 32-bit coordinates: a photo within about a metre of the box's edge may fall
    either side.)"""
    def box(w: float, e: float):
        return select(_PLACES.c.id).where(_PLACES.c.min_lat >= south, _PLACES.c.max_lat <= north,
                                          _PLACES.c.min_lon >= w, _PLACES.c.max_lon <= e)
    return box(west, east) if west <= east else union_all(box(west, 180.0), box(-180.0, east))


def _ids(conn, stmt) -> np.ndarray:
    """The ids `stmt` selects (its one column), sorted, as an int64 array. Why one group_concat string
    rather than rows: a month or place filter at a million photos selects 100k+ ids, and turning each row
    into Python objects (SQLAlchemy's row processing, or even the DB-API's tuples) cost more than the query
    and the FAISS search together; SQLite joins the ids into one text that numpy parses in C. (SQLite caps a
    string at a billion bytes, about a hundred million ids.) Sorted here, by numpy, rather than by an ORDER
    BY that would undo the covering index or R*Tree scan."""
    sub = stmt.subquery()
    joined = conn.execute(select(func.group_concat(list(sub.c)[0])).select_from(sub)).scalar()
    ids = np.fromstring(joined or "", dtype=np.int64, sep=",")
    ids.sort()
    return ids


class SqlCatalog:
    """Reads run concurrently; every write goes through one lock (one writer), as SQLite wants."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._write = threading.Lock()

    # ---- photos -----------------------------------------------------------------------------------
    def add_photos(self, photos: Sequence[Photo], run_id: int | None = None) -> list[int]:
        with self._write, Session(self.engine) as s, s.begin():
            rows = [PhotoRow(**_stored(p), ingest_run_id=run_id) for p in photos]
            s.add_all(rows)
            s.flush()
            ids = [r.id for r in rows]
        for p, i in zip(photos, ids):
            p.id = i
        return ids

    def update_metadata(self, updates: Sequence[tuple[int, Photo]], source: str = "") -> dict[int, list[str]]:
        """Write the metadata a source carries onto photos already in the catalog; returns photo id -> the
        fields that changed (photos with no change left out). An empty value never erases a stored one; a
        replaced value is kept in extra["history"] (field, old, new, when, source), so a corrected
        identification can be traced; the source's extra keys are merged in. Path, content, size and vectors
        are not touched."""
        changed: dict[int, list[str]] = {}
        at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._write, Session(self.engine) as s, s.begin():
            for chunk in _chunks(list(updates)):
                rows = {r.id: r for r in s.scalars(select(PhotoRow).where(PhotoRow.id.in_([int(i) for i, _ in chunk])))}
                for pid, photo in chunk:
                    row = rows.get(int(pid))
                    if row is not None:
                        fields_ = self._merge(row, photo, source, at)
                        if fields_:
                            changed.setdefault(row.id, [])
                            changed[row.id] += [f for f in fields_ if f not in changed[row.id]]
        return changed

    @staticmethod
    def _merge(row: PhotoRow, photo: Photo, source: str, at: str) -> list[str]:
        new = _stored(photo)
        extra = dict(row.extra or {})
        history = list(extra.get("history") or [])
        changed = []
        for name in METADATA_FIELDS:
            value, old = new[name], getattr(row, name)
            if value in ("", None) or value == old:
                continue
            if old not in ("", None):
                history.append({"field": name, "old": _json_value(old), "new": _json_value(value), "at": at,
                                "source": source})
            setattr(row, name, value)
            changed.append(name)
        if "observed_on" in changed:
            row.observed_month = new["observed_month"]
        if "license" in changed:
            row.license_code, row.license_version = new["license_code"], new["license_version"]
        for name, note in (("observed_on", "observed_on_unparsed"), ("latitude", "latitude_invalid"),
                           ("longitude", "longitude_invalid")):
            if name in changed:  # a readable value now: the note about an unreadable one is stale
                extra.pop(note, None)
        for key, value in (photo.extra or {}).items():
            if key != "history" and value not in ("", None) and extra.get(key) != value:
                extra[key] = value
                if "extra" not in changed:
                    changed.append("extra")
        if history:
            extra["history"] = history[-MAX_HISTORY:]
        if extra != (row.extra or {}):
            row.extra = extra  # a new dict, so that the JSON column is written
        return changed

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

    def sources(self) -> set[str]:
        """The kinds of source the photos came from ("fieldguide", "folder", "inat-csv", ...)."""
        with Session(self.engine) as s:
            return {str(v or "") for v in s.scalars(select(PhotoRow.source).distinct())}

    def count_outside(self, folder: str) -> int:
        """Photos whose file does not lie under `folder` (compared as a string prefix, no LIKE wildcards)."""
        with Session(self.engine) as s:
            outside = func.substr(PhotoRow.path, 1, len(folder)) != folder
            return int(s.scalar(select(func.count()).select_from(PhotoRow).where(outside)) or 0)

    def _taxon_clause(self, name: str):
        """Photos with this name at any rank. Why a UNION of one lookup per rank rather than an OR: SQLite
        plans an OR over eight expressions as a full scan; each lower(rank) = name part uses its own
        partial expression index (migration 0003_filters; empty ranks are not indexed), which keeps the filter fast at a million photos."""
        typed = bounds.name(name)
        cols = [PhotoRow.scientific_name, PhotoRow.common_name, PhotoRow.genus, PhotoRow.family,
                PhotoRow.order, PhotoRow.class_name, PhotoRow.phylum, PhotoRow.kingdom]
        if typed.isascii():  # SQLite's lower() is the case fold for ASCII text: the indexed lookup (an ASCII
            # name so misses only names that fold to ASCII from other letters: "strasse" for "Straße")
            key = typed.lower()
            # `c != ''` written as SQL text so that SQLite can match it to the partial indexes' WHERE clause
            return PhotoRow.id.in_(union(*[select(PhotoRow.id).where(c.op("!=")(text("''")), func.lower(c) == key)
                                           for c in cols]))
        # a name with non-ASCII letters ("Renée", "Ähre"): lower() would not fold them, so every name is compared
        # NFC + case-folded by the function storage.db registers (a scan, not an index lookup)
        key = bounds.name_key(typed)
        return PhotoRow.id.in_(union(*[select(PhotoRow.id).where(c.op("!=")(text("''")),
                                                                 getattr(func, NAME_KEY_SQL)(c) == key)
                                       for c in cols]))

    def taxon_known(self, name: str) -> bool:
        with Session(self.engine) as s:
            return s.scalar(select(PhotoRow.id).where(self._taxon_clause(name)).limit(1)) is not None

    def places(self, limit: int = 2000) -> list[tuple[float, float]]:
        has = PhotoRow.latitude.is_not(None) & PhotoRow.longitude.is_not(None)
        with Session(self.engine) as s:
            n = int(s.scalar(select(func.count()).select_from(PhotoRow).where(has)) or 0)
            step = max(1, -(-n // max(1, limit)))  # every step-th row by id: a sample of the whole catalog
            query = select(PhotoRow.latitude, PhotoRow.longitude).where(has)
            if step > 1:
                query = query.where(PhotoRow.id % step == 0)
            return [(float(lat), float(lon)) for lat, lon in s.execute(query.order_by(PhotoRow.id).limit(limit))]

    def taxon_names(self, limit: int = 5000) -> list[tuple[str, str, int]]:
        ranks = [("species", PhotoRow.scientific_name), ("common name", PhotoRow.common_name),
                 ("genus", PhotoRow.genus), ("family", PhotoRow.family), ("order", PhotoRow.order),
                 ("class", PhotoRow.class_name), ("phylum", PhotoRow.phylum), ("kingdom", PhotoRow.kingdom)]
        counts: dict[str, list] = {}  # lower-cased name -> [name as first seen, rank, photos]
        with Session(self.engine) as s:
            for rank, col in ranks:
                for name, n in s.execute(select(col, func.count()).where(col != "").group_by(col)):
                    entry = counts.setdefault(bounds.name_key(name), [bounds.name(name), rank, 0])
                    entry[2] += int(n)
        top = sorted(counts.values(), key=lambda e: (-e[2], e[0].lower()))[:limit]
        return [(name, rank, n) for name, rank, n in top]

    @staticmethod
    def _licence_clause(text_: str):
        """The licence filter's rule (core.licences): an exact code (and version, if given) on the indexed
        code column; `code*` that code and the codes extending it; bare CC elements (`nc`) every CC licence
        having them. The user's text reaches LIKE only escaped: % and _ are never wildcards."""
        flt = parse_licence_filter(text_)
        code = PhotoRow.license_code
        if flt.elements:
            dashed = literal("-") + code + literal("-")
            return and_(code.like("cc-%"), *[dashed.like(f"%-{like_escape(e)}-%", escape="\\")
                                            for e in flt.elements])
        if not flt.code:
            return false()
        clause = (or_(code == flt.code, code.like(like_escape(flt.code) + "-%", escape="\\")) if flt.family
                  else code == flt.code)
        return and_(clause, PhotoRow.license_version == flt.version) if flt.version else clause

    def filter_ids(self, filters: Filters) -> np.ndarray:
        clauses = []
        if filters.taxon:
            clauses.append(self._taxon_clause(filters.taxon))
        if filters.date_from:
            clauses.append(PhotoRow.observed_on >= filters.date_from)
        if filters.date_to:
            clauses.append(PhotoRow.observed_on <= filters.date_to)
        if filters.months:
            clauses.append(PhotoRow.observed_month.in_([int(m) for m in filters.months]))
        if filters.license:
            clauses.append(self._licence_clause(filters.license))
        with self.engine.connect() as conn:
            out = None
            if filters.ids is not None:
                out = np.unique(np.concatenate([np.zeros(0, np.int64)] + [
                    _ids(conn, select(PhotoRow.id).where(PhotoRow.id.in_(chunk), *clauses))
                    for chunk in _chunks([int(i) for i in filters.ids])]))
            elif clauses or not filters.bbox:
                out = _ids(conn, select(PhotoRow.id).where(*clauses))
            if filters.bbox:  # why apart: the R*Tree answers alone; joined to photos it costs a lookup per id
                places = _ids(conn, _places_in(*filters.bbox))
                return places if out is None else np.intersect1d(out, places, assume_unique=True)
            return out

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
