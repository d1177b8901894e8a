"""How a Photo is stored in the catalog's rows and read back (storage.catalog): the fields as stored (names
normalised), the SQL texts of the bulk insert and the reads, and a row turned back into a Photo."""
from __future__ import annotations

import os
from dataclasses import fields
from operator import attrgetter
from typing import Any, Sequence

from sqlalchemy import func, select

from core.contracts import bounds
from core.contracts.records import Photo
from storage.models import HASH_PREFIX_BYTES, TAXON_FIELDS, LicenceRow, PathPrefixRow, PhotoRow, TaxonRow

PHOTO_FIELDS = [f.name for f in fields(Photo)]
# names stored Unicode-normalised (NFC, trimmed): the same name typed composed or decomposed is one name
NAME_FIELDS = TAXON_FIELDS + ("rights_holder",)
ROW_FIELDS = ("sha256", "width", "height", "bytes", "observed_on", "latitude", "longitude", "rights_holder", "caption",
               "source")
MIN_PREFIX = 12  # a shared path start shorter than this is not worth a row of its own


def stored(photo: Photo) -> dict[str, Any]:
    """The fields of a photo as stored: names normalised, the month derived (the licence is read by the
    catalog when it files the raw text under an id)."""
    data = {n: getattr(photo, n) for n in PHOTO_FIELDS if n != "id"}
    for n in NAME_FIELDS:
        data[n] = bounds.name(data[n])
    data["license"] = (data["license"] or "").strip()
    return data


TAXON_OF = attrgetter(*TAXON_FIELDS)  # a photo's names, in the order of the taxa table's columns
TAXON_COLUMNS = ", ".join(f'"{n}"' for n in TAXON_FIELDS)
INSERT_TAXON = (f"INSERT INTO taxa ({TAXON_COLUMNS}) VALUES ({', '.join('?' * len(TAXON_FIELDS))}) "
                "ON CONFLICT DO NOTHING")
TAXA_NAMED = f"SELECT id, {TAXON_COLUMNS} FROM taxa WHERE scientific_name IN ({{}})"
INSERT_PHOTO = ("INSERT INTO photos (id, prefix_id, path, sha256, width, height, bytes, taxon_id, observed_on, "
                "latitude, longitude, licence_id, rights_holder, caption, source, extra, ingest_run_id) "
                "VALUES (" + ", ".join("?" * 17) + ")")


# Why the prefix's length written into the SQL: SQLite uses the expression index ix_photos_hash_prefix only for
# the very expression it indexes; with the 1 and the 8 as bound parameters (as SQLAlchemy's func.substr sends
# them) every lookup scanned the whole table, and an ingest's deduplication grew with the square of the catalog.
HASH_LOOKUP = (f"SELECT sha256, id FROM photos WHERE substr(sha256, 1, {HASH_PREFIX_BYTES}) IN ({{}})")


def shared_prefix(paths: Sequence[str]) -> str:
    """What every path starts with, up to and including its last '/' (a folder, a URL's base), or ''."""
    common = os.path.commonprefix(list(paths)) if paths else ""
    common = common[:common.rfind("/") + 1]
    return common if len(common) >= MIN_PREFIX else ""


def json_value(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def photo_select():
    """Photos with their taxon's names, their licence text and their path's prefix (each may be absent)."""
    return (select(PhotoRow, TaxonRow, LicenceRow, PathPrefixRow.text)
            .outerjoin(TaxonRow, TaxonRow.id == PhotoRow.taxon_id)
            .outerjoin(LicenceRow, LicenceRow.id == PhotoRow.licence_id)
            .outerjoin(PathPrefixRow, PathPrefixRow.id == PhotoRow.prefix_id))


GET_PHOTOS = ("SELECT p.id, x.text, p.path, " + ", ".join(f"p.{n}" for n in ROW_FIELDS) + ", p.extra, l.text, "
               + ", ".join(f't."{n}"' for n in TAXON_FIELDS) + " FROM photos p LEFT JOIN taxa t ON t.id = p.taxon_id "
               "LEFT JOIN licences l ON l.id = p.licence_id LEFT JOIN path_prefixes x ON x.id = p.prefix_id "
               "WHERE p.id IN ({})")  # (get_photos: the columns of photo_select)
UNTAXED = ("SELECT p.id FROM photos p LEFT JOIN taxa t ON t.id = p.taxon_id WHERE p.id IN ({}) AND (t.id IS NULL OR ("
            + " AND ".join(f"coalesce(t.\"{n}\", '') = ''" for n in TAXON_FIELDS) + "))")  # Photo.taxon_names empty


def row_to_photo(row: PhotoRow, taxon: TaxonRow | None, licence: LicenceRow | None, prefix: str | None) -> Photo:
    names = {n: (getattr(taxon, n) if taxon is not None else "") or "" for n in TAXON_FIELDS}
    return Photo(id=row.id, path=(prefix or "") + row.path, **{n: getattr(row, n) for n in ROW_FIELDS}, **names,
                 license=licence.text if licence is not None else "", extra=dict(row.extra or {}))


def full_path():
    """A photo's whole path in SQL (its prefix, if any, then its own part)."""
    return func.coalesce(select(PathPrefixRow.text).where(PathPrefixRow.id == PhotoRow.prefix_id)
                         .scalar_subquery(), "") + PhotoRow.path
