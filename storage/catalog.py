"""The photo catalog in SQLite, implementing core.contracts.catalog.Catalog. The rest of the code sees Photo
dataclasses, never rows."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, Iterator, Sequence

import numpy as np
from sqlalchemy import Connection, Engine, func, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.contracts import bounds
from core.contracts.catalog import CatalogState, FilterRows
from core.contracts.records import Filters, Photo
from core.licences import parse_licence
from storage import catalog_text, filter_sql, near_hashes
from storage import filter_rows as bulk_columns
from storage.db import chunks
from storage.fileless import count_fileless
from storage.metadata_merge import merge
from storage.models import (
    HASH_PREFIX_BYTES,
    TAXON_FIELDS,
    DayNumber,
    HashBytes,
    IngestRunRow,
    LicenceRow,
    PathPrefixRow,
    PhotoRow,
    TaxonRow,
)
from storage.photo_rows import (
    GET_PHOTOS,
    HASH_LOOKUP,
    INSERT_PHOTO,
    INSERT_TAXON,
    ROW_FIELDS,
    TAXA_NAMED,
    TAXON_OF,
    UNTAXED,
    full_path,
    photo_select,
    row_to_photo,
    shared_prefix,
    stored,
)
from storage.vector_sets import VectorSets

SQLITE_DEFAULT_CACHE = -2000  # SQLite's own default page cache (2 MB)
MAX_STORED_TAXA = 200_000  # taxa whose stored names are remembered (then forgotten all at once)
MIN_PREFIX_BATCH = 32  # a new prefix is made for a batch of at least this many photos (else only reused)


class SqlCatalog(VectorSets):
    """Reads run concurrently; every write goes through one lock (one writer), as SQLite wants. The vector sets
    and the photos each holds: storage.vector_sets."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._write = threading.Lock()
        # taxa and licences are never deleted, so an id once read stays right (also across processes)
        self._taxon_ids: dict[tuple[str, ...], int] = {}
        self._licence_ids: dict[str, int] = {}
        self._prefix_ids: dict[str, int] = {}
        self._stored_taxa: dict[tuple, tuple[str, ...]] = {}  # a photo's names as given -> as stored (bounds.name)
        self._bulk: Connection | None = None  # the writes' own connection during bulk_writes

    @contextmanager
    def bulk_writes(self, cache_mb: int):
        """Within the block, add_photos and mark_indexed share one connection whose page cache holds `cache_mb`
        (SQLite's default is 2 MB: an ingest writes the photo indexes at random places,
        and with a small cache each batch read their pages again, about a third of the insert's time at 200k
        photos). Every write is still its own transaction; the connection goes back to the pool with the
        default cache."""
        with self._write:
            conn = self.engine.connect()
            conn.exec_driver_sql(f"PRAGMA cache_size = {-int(cache_mb) * 1024}")
            conn.commit()
            self._bulk = conn
        try:
            yield
        finally:
            with self._write:
                self._bulk = None
                try:
                    conn.rollback()
                    conn.exec_driver_sql(f"PRAGMA cache_size = {SQLITE_DEFAULT_CACHE}")
                    conn.commit()
                finally:
                    conn.close()

    @contextmanager
    def _writing(self):
        """A write transaction (the caller holds self._write): on the bulk connection during bulk_writes."""
        if self._bulk is None:
            with self.engine.begin() as conn:
                yield conn
        else:
            with self._bulk.begin():
                yield self._bulk

    # ---- taxa and licences ------------------------------------------------------------------------
    def _taxon_ids_for(self, conn, wanted: set[tuple[str, ...]]) -> None:
        """Make sure every name combination in `wanted` has a row in taxa, its id cached (inside the caller's
        write transaction)."""
        missing = [t for t in wanted if t not in self._taxon_ids and any(t)]
        if not missing:
            return
        conn.exec_driver_sql(INSERT_TAXON, missing)  # (the driver's executemany: 50,000 species at 1M photos)
        # one query per chunk of species names: the rows named like these, matched here
        for chunk in chunks(sorted({t[0] for t in missing})):
            for row in conn.exec_driver_sql(TAXA_NAMED.format(", ".join("?" * len(chunk))), tuple(chunk)):
                self._taxon_ids[tuple(row[1:])] = int(row[0])
        if any(t not in self._taxon_ids for t in missing):
            raise RuntimeError("a taxon row was not found after its insert")

    def _licence_ids_for(self, conn, wanted: set[str]) -> None:
        for raw in wanted:
            if raw and raw not in self._licence_ids:
                lic = parse_licence(raw)
                conn.execute(sqlite_insert(LicenceRow).values(text=raw, code=lic.code, version=lic.version)
                             .on_conflict_do_nothing(index_elements=["text"]))
                self._licence_ids[raw] = conn.execute(select(LicenceRow.id).where(LicenceRow.text == raw)).scalar_one()

    def _prefix_id_for(self, conn, prefix: str, create: bool) -> int | None:
        if not prefix:
            return None
        if prefix not in self._prefix_ids:
            if create:
                conn.execute(sqlite_insert(PathPrefixRow).values(text=prefix).on_conflict_do_nothing(
                    index_elements=["text"]))
            found = conn.execute(select(PathPrefixRow.id).where(PathPrefixRow.text == prefix)).scalar()
            if found is None:
                return None
            self._prefix_ids[prefix] = int(found)
        return self._prefix_ids[prefix]

    def _row_values(self, data: dict[str, Any]) -> dict[str, Any]:
        """A stored photo (photo_rows.stored) as the columns of its row, taxon and licence as ids (already made)."""
        names = tuple(data[n] for n in TAXON_FIELDS)
        extra = data.get("extra") or None
        return {**{n: data[n] for n in ROW_FIELDS}, "taxon_id": self._taxon_ids.get(names),
                "licence_id": self._licence_ids.get(data["license"]), "extra": dict(extra) if extra else None}

    # ---- photos -----------------------------------------------------------------------------------
    def add_photos(self, photos: Sequence[Photo], run_id: int | None = None) -> list[int]:
        if not photos:
            return []
        # the stored form of each photo's names (as photo_rows.stored gives them), worked out once per distinct
        # taxon: an ingest of millions of photos repeats some thousands of them
        taxa_of = self._stored_taxa
        if len(taxa_of) > MAX_STORED_TAXA:
            taxa_of.clear()
        batch_taxa: set[tuple[str, ...]] = set()
        holders: dict[str, str] = {}
        taxa, licences, holder_names = [], [], []
        raw_taxon = TAXON_OF
        for p in photos:
            raw = raw_taxon(p)
            taxon = taxa_of.get(raw)
            if taxon is None:
                taxon = taxa_of[raw] = tuple(bounds.name(v) for v in raw)
            taxa.append(taxon)
            batch_taxa.add(taxon)
            licences.append((p.license or "").strip())
            holder = holders.get(p.rights_holder)
            if holder is None:
                holder = holders[p.rights_holder] = bounds.name(p.rights_holder)
            holder_names.append(holder)
        with self._write, self._writing() as conn:
            self._taxon_ids_for(conn, batch_taxa)
            self._licence_ids_for(conn, set(licences))
            prefix = shared_prefix([p.path for p in photos])
            prefix_id = self._prefix_id_for(conn, prefix, create=len(photos) >= MIN_PREFIX_BATCH)
            cut = len(prefix) if prefix_id is not None else 0
            # Why explicit ids and the driver's executemany: at millions of photos SQLAlchemy's per-row work
            # (bind processing, RETURNING) cost more than SQLite's. The ids follow the largest in this
            # transaction; a writer that slipped in between would make the insert fail (primary key), never
            # mix rows up.
            first = int(conn.execute(select(func.coalesce(func.max(PhotoRow.id), 0))).scalar()) + 1
            ids = list(range(first, first + len(photos)))
            hashes, days = HashBytes().process_bind_param, DayNumber().process_bind_param
            as_json = PhotoRow.extra.type.bind_processor(conn.dialect)
            taxon_ids, licence_ids = self._taxon_ids, self._licence_ids
            rows = [(i, prefix_id, p.path[cut:], hashes(p.sha256, None), p.width, p.height, p.bytes,
                     taxon_ids.get(taxon), days(p.observed_on, None), p.latitude, p.longitude, licence_ids.get(lic),
                     holder, p.caption, p.source, as_json(dict(p.extra)) if p.extra else None, run_id)
                    for i, p, taxon, lic, holder in zip(ids, photos, taxa, licences, holder_names)]
            conn.exec_driver_sql(INSERT_PHOTO, rows)
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
            conn = s.connection()
            for chunk in chunks(list(updates)):
                current = {row.id: row_to_photo(row, taxon, lic, pre) for row, taxon, lic, pre in s.execute(
                    photo_select().where(PhotoRow.id.in_([int(i) for i, _ in chunk])))}
                merged: dict[int, dict[str, Any]] = {}
                for pid, photo in chunk:
                    old = current.get(int(pid))
                    if old is None:
                        continue
                    data, fields_ = merge(stored(old), photo, source, at)
                    if fields_:
                        merged[old.id] = data
                        changed.setdefault(old.id, [])
                        changed[old.id] += [f for f in fields_ if f not in changed[old.id]]
                if not merged:
                    continue
                self._taxon_ids_for(conn, {tuple(d[n] for n in TAXON_FIELDS) for d in merged.values()})
                self._licence_ids_for(conn, {d["license"] for d in merged.values()})
                for pid, data in merged.items():
                    conn.execute(update(PhotoRow).where(PhotoRow.id == pid).values(**self._row_values(data)))
        return changed

    def ids_for_hashes(self, hashes: Sequence[str]) -> dict[str, int]:
        """Looked up by the first bytes of each hash (the index), the whole hash compared on the rows found."""
        out: dict[str, int] = {}
        wanted = set(hashes)
        bind = HashBytes().process_bind_param
        with self.engine.connect() as conn:
            for chunk in chunks(sorted(wanted)):
                keys = [bind(h, None)[:HASH_PREFIX_BYTES] for h in chunk]
                for digest, pid in conn.exec_driver_sql(HASH_LOOKUP.format(", ".join("?" * len(keys))), tuple(keys)):
                    digest = HashBytes().process_result_value(digest, None)
                    if digest in wanted:
                        out[digest] = int(pid)
        return out

    def get_photos(self, ids: Sequence[int]) -> list[Photo]:
        """As photo_select and row_to_photo read them, in plain SQL: for the 10-100 photos of a result the ORM's
        work per row (entities, the identity map) took 10-30 times SQLite's own (bench/scale.py, "hits")."""
        found: dict[int, Photo] = {}
        hashes, days = HashBytes(), DayNumber()
        as_json = PhotoRow.extra.type.result_processor(self.engine.dialect, None)
        with self.engine.connect() as conn:
            for chunk in chunks([int(i) for i in ids]):
                for r in conn.exec_driver_sql(GET_PHOTOS.format(", ".join("?" * len(chunk))), tuple(chunk)):
                    row = dict(zip(ROW_FIELDS, r[3:3 + len(ROW_FIELDS)]))
                    row["sha256"] = hashes.process_result_value(row["sha256"], None)
                    row["observed_on"] = days.process_result_value(row["observed_on"], None)
                    extra, licence, names = r[3 + len(ROW_FIELDS)], r[4 + len(ROW_FIELDS)], r[5 + len(ROW_FIELDS):]
                    found[r[0]] = Photo(id=r[0], path=(r[1] or "") + r[2], **row,
                                        **{n: v or "" for n, v in zip(TAXON_FIELDS, names)}, license=licence or "",
                                        extra=dict((as_json(extra) if as_json and extra is not None else extra) or {}))
        return [found[int(i)] for i in ids if int(i) in found]

    def untaxed(self, ids: Sequence[int]) -> set[int]:
        """Ids only, for a search's 100+ candidates: reading whole photos to ask the same took 4.5 ms a search
        (py-spy, Fast searches with a group word)."""
        out: set[int] = set()
        with self.engine.connect() as conn:
            for chunk in chunks([int(i) for i in ids]):
                out.update(r[0] for r in conn.exec_driver_sql(UNTAXED.format(", ".join("?" * len(chunk))),
                                                              tuple(chunk)))
        return out

    def text_matches(self, words: Sequence[Sequence[str]], limit: int):
        """Per word (its forms), the taxa whose names hold it and the photos whose own text holds it, best first
        (storage.catalog_text)."""
        return catalog_text.text_matches(self.engine, words, limit)

    def taxon_photos(self, taxon_ids: Sequence[int]) -> np.ndarray:
        """The ids of the photos of these taxa, ascending."""
        return catalog_text.taxon_photos(self.engine, taxon_ids)

    def all_photos(self) -> list[Photo]:
        with Session(self.engine) as s:
            return [row_to_photo(*r) for r in s.execute(photo_select().order_by(PhotoRow.id)).tuples()]

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
            outside = func.substr(full_path(), 1, len(folder)) != folder
            return int(s.scalar(select(func.count()).select_from(PhotoRow).where(outside)) or 0)

    def count_fileless(self) -> int:
        """Photos kept without their file (storage.fileless)."""
        return count_fileless(self.engine)

    def taxon_known(self, name: str) -> bool:
        return filter_sql.taxon_known(self.engine, name)

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
        ranks = [("species", "scientific_name"), ("common name", "common_name"), ("genus", "genus"),
                 ("family", "family"), ("order", "order"), ("class", "class_name"), ("phylum", "phylum"),
                 ("kingdom", "kingdom")]
        counts: dict[str, list] = {}  # lower-cased name -> [name as first seen, rank, photos]
        per_taxon = (select(PhotoRow.taxon_id, func.count().label("n")).where(PhotoRow.taxon_id.is_not(None))
                     .group_by(PhotoRow.taxon_id).subquery())
        with Session(self.engine) as s:
            rows = s.execute(select(TaxonRow, per_taxon.c.n).join(per_taxon, per_taxon.c.taxon_id == TaxonRow.id)).all()
        for rank, attr in ranks:  # rank by rank, so a name's rank is the lowest it is used at
            for taxon, n in rows:
                name = getattr(taxon, attr)
                if name:
                    entry = counts.setdefault(bounds.name_key(name), [bounds.name(name), rank, 0])
                    entry[2] += int(n)
        top = sorted(counts.values(), key=lambda e: (-e[2], e[0].lower()))[:limit]
        return [(name, rank, n) for name, rank, n in top]

    def licence_ids(self, text_: str) -> np.ndarray:
        return filter_sql.licence_ids(self.engine, text_)

    def taxon_ids(self, name: str) -> np.ndarray:
        return filter_sql.taxon_ids(self.engine, name)

    def filter_ids(self, filters: Filters) -> np.ndarray:
        return filter_sql.filter_ids(self.engine, filters)

    # ---- the filtered columns in bulk (core.search.filter_columns keeps them as arrays) -----------
    def filter_state(self) -> CatalogState:
        return bulk_columns.filter_state(self.engine)

    def filter_rows(self, after_id: int, upto_id: int, chunk: int = 100_000) -> Iterator[FilterRows]:
        return bulk_columns.filter_rows(self.engine, after_id, upto_id, chunk)

    # ---- near-copies' perceptual hashes (storage.near_hashes, migration 0012) -------------------------
    def near_hashes(self, ids: Sequence[int]) -> dict[int, bytes]:
        return near_hashes.near_hashes(self.engine, ids)

    def unhashed_ids(self, limit: int | None = None) -> list[int]:
        return near_hashes.unhashed_ids(self.engine, limit)

    def all_near_hashes(self) -> dict[int, bytes]:
        return near_hashes.all_hashed(self.engine)

    def set_near_hashes(self, hashes: dict[int, bytes]) -> None:
        with self._write, self._writing() as conn:
            near_hashes.set_near_hashes(conn, hashes)

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
