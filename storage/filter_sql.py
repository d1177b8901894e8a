"""The SQL of the search filters on the catalog (SqlCatalog.filter_ids and the taxon and licence look-ups): a
taxon name at any rank through the taxa table's partial indexes, months as day ranges of the date index, a box
from the place index, a licence by the rule of core.licences."""
from __future__ import annotations

import functools
from datetime import date, timedelta
from typing import Sequence

import numpy as np
from sqlalchemy import Engine, and_, bindparam, false, func, literal, or_, select, text, union, union_all

from core.contracts import bounds
from core.contracts.records import Filters
from core.licences import like_escape, parse_licence_filter
from storage.db import NAME_KEY_SQL, chunks
from storage.models import TAXON_FIELDS, DayNumber, LicenceRow, PhotoRow, TaxonRow


def month_ranges(first: date | None, last: date | None, months: Sequence[int]) -> list:
    """The month filter on the date index: for every year from the first date to the last, the range of days
    of each month asked (why not a month column with its own index: its bytes on every photo)."""
    if first is None or last is None:
        return []
    return [PhotoRow.observed_on.between(date(y, m, 1), last_day(y, m))
            for y in range(first.year, last.year + 1) for m in sorted(set(months)) if 1 <= m <= 12]


def selected(conn, clauses: list, ranges: list | None) -> np.ndarray:
    """The ids passing `clauses`, sorted; with month `ranges`, one query (a range scan of the date index) per
    range, the ranges sharing no day. Why not one query: an OR of the ranges is planned as a multi-index OR that
    collects row ids and then reads every row, and a UNION ALL of them is read through a co-routine; at 1M
    photos two months (163k) took 73-95 ms either way, one query per range 33 ms."""
    if ranges is None:
        return id_array(conn, select(PhotoRow.id).where(*clauses))
    parts = [id_array(conn, select(PhotoRow.id).where(r, *clauses)) for r in ranges]
    out = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    out.sort()
    return out


def last_day(year: int, month: int) -> date:
    return date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)


def places_in(west: float, south: float, east: float, north: float):
    """Ids of the photos inside a box (edges included), from the place index (latitude, longitude; migration
    0009): a band of latitudes, its longitudes compared on the index entries. A box crossing 180 degrees is two
    boxes, which share no photo (west > east: one ends at 180, the other at east < 180), so UNION ALL, not a
    UNION's temporary B-tree."""
    def box(w: float, e: float):
        return select(PhotoRow.id).where(PhotoRow.latitude >= south, PhotoRow.latitude <= north,
                                         PhotoRow.longitude >= w, PhotoRow.longitude <= e)
    return box(west, east) if west <= east else union_all(box(west, 180.0), box(-180.0, east))


def taxon_key(name: str) -> tuple[bool, str]:
    """(whether the name is ASCII, the key taxa_statement compares it by)."""
    typed = bounds.name(name)
    return (True, typed.lower()) if typed.isascii() else (False, bounds.name_key(typed))


@functools.lru_cache(maxsize=2)
def taxa_statement(ascii_: bool):
    """Ids of the taxa having the name `:key` at any rank. Why a UNION of one lookup per rank rather than an OR:
    SQLite plans an OR over eight expressions as a scan; each lower(rank) = name part uses its own partial
    expression index on the taxa table (migration 0007; empty ranks are not indexed). Built once, the name a
    parameter: building the eight parts took several times SQLite's lookup."""
    cols = [getattr(TaxonRow, n) for n in TAXON_FIELDS]
    key = bindparam("key")
    # `c != ''` written as SQL text so that SQLite can match it to the partial indexes' WHERE clause
    if ascii_:  # SQLite's lower() is the case fold for ASCII text: the indexed lookup (an ASCII name so misses
        # only names that fold to ASCII from other letters: "strasse" for "Straße")
        return union(*[select(TaxonRow.id).where(c.op("!=")(text("''")), func.lower(c) == key) for c in cols])
    # a name with non-ASCII letters ("Renée", "Ähre"): lower() would not fold them, so every name is compared
    # NFC + case-folded by the function storage.db registers (a scan of the taxa, not of the photos)
    return union(*[select(TaxonRow.id).where(c.op("!=")(text("''")), getattr(func, NAME_KEY_SQL)(c) == key)
                   for c in cols])


def id_array(conn, stmt) -> np.ndarray:
    """The ids `stmt` selects (its one column), sorted, as an int64 array. Why one group_concat string
    rather than rows: a month or place filter at a million photos selects 100k+ ids, and turning each row
    into Python objects (SQLAlchemy's row processing, or even the DB-API's tuples) cost more than the query
    and the FAISS search together; SQLite joins the ids into one text that numpy parses in C. (SQLite caps a
    string at a billion bytes, about a hundred million ids.) Sorted here, by numpy, rather than by an ORDER
    BY that would undo the covering index's scan."""
    sub = stmt.subquery()
    joined = conn.execute(select(func.group_concat(list(sub.c)[0])).select_from(sub)).scalar()
    ids = np.fromstring(joined or "", dtype=np.int64, sep=",")
    ids.sort()
    return ids


def taxa_named(name: str):
    """Ids of the taxa having this name at any rank (a statement: taxa_statement with the name's key)."""
    ascii_, key = taxon_key(name)
    return taxa_statement(ascii_).params(key=key)


def taxon_clause(name: str):
    """Photos with this name at any rank: the taxa named so, then their photos through the taxon index."""
    return PhotoRow.taxon_id.in_(taxa_named(name))


def taxon_known(engine: Engine, name: str) -> bool:
    with engine.connect() as conn:
        return conn.execute(select(PhotoRow.id).where(taxon_clause(name)).limit(1)).scalar() is not None


def licences_matching(text_: str):
    """The licence filter's rule (core.licences): an exact code (and version, if given) on the code of the
    photo's licence; `code*` that code and the codes extending it; bare CC elements (`nc`) every CC licence
    having them. The user's text reaches LIKE only escaped: % and _ are never wildcards. Compared in the
    small licences table (the photos then through their licence index)."""
    flt = parse_licence_filter(text_)
    code = LicenceRow.code
    if flt.elements:
        dashed = literal("-") + code + literal("-")
        clause = and_(code.like("cc-%"), *[dashed.like(f"%-{like_escape(e)}-%", escape="\\")
                                           for e in flt.elements])
    elif not flt.code:
        return None
    else:
        clause = (or_(code == flt.code, code.like(like_escape(flt.code) + "-%", escape="\\")) if flt.family
                  else code == flt.code)
        if flt.version:
            clause = and_(clause, LicenceRow.version == flt.version)
    return select(LicenceRow.id).where(clause)


def licence_clause(text_: str):
    matching = licences_matching(text_)
    return false() if matching is None else PhotoRow.licence_id.in_(matching)


def licence_ids(engine: Engine, text_: str) -> np.ndarray:
    matching = licences_matching(text_)
    if matching is None:
        return np.zeros(0, np.int64)
    with engine.connect() as conn:
        return np.array(sorted(int(i) for i in conn.execute(matching).scalars()), np.int64)


def taxon_ids(engine: Engine, name: str) -> np.ndarray:
    ascii_, key = taxon_key(name)
    with engine.connect() as conn:
        return np.array(sorted(int(i) for i in conn.execute(taxa_statement(ascii_), {"key": key}).scalars()),
                        np.int64)


def filter_ids(engine: Engine, filters: Filters) -> np.ndarray:
    """The ids of the photos passing `filters` (core.contracts.catalog.Catalog.filter_ids), sorted."""
    clauses = []
    if filters.taxon:
        clauses.append(taxon_clause(filters.taxon))
    if filters.date_from:
        clauses.append(PhotoRow.observed_on >= filters.date_from)
    if filters.date_to:
        clauses.append(PhotoRow.observed_on <= filters.date_to)
    if filters.license:
        clauses.append(licence_clause(filters.license))
    with engine.connect() as conn:
        ranges = None
        if filters.months:
            # (two queries: SQLite answers a lone min() or max() from the index, both at once by a scan)
            first = conn.execute(select(func.min(PhotoRow.observed_on, type_=DayNumber))).scalar()
            last = conn.execute(select(func.max(PhotoRow.observed_on, type_=DayNumber))).scalar()
            ranges = month_ranges(first, last, [int(m) for m in filters.months])
        out = None
        if filters.ids is not None:
            out = np.unique(np.concatenate([np.zeros(0, np.int64)] + [
                selected(conn, clauses + [PhotoRow.id.in_(chunk)], ranges)
                for chunk in chunks([int(i) for i in filters.ids])]))
        elif clauses or ranges is not None or not filters.bbox:
            out = selected(conn, clauses, ranges)
        if filters.bbox:  # why apart: the place index answers alone (it covers the query), beside the other
            # clauses SQLite would read one index and look every row up
            places = id_array(conn, places_in(*filters.bbox))
            return places if out is None else np.intersect1d(out, places, assume_unique=True)
        return out
