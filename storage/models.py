"""SQLAlchemy tables of the catalog (photos, their taxa and licences, vector sets, ingest runs). Only storage/
sees these classes.

The photo row is kept lean (migration 0007): a photo names its taxon and its licence by id (a catalog of
millions of photos holds some thousands of each), its content hash is 32 bytes rather than 64 hex characters,
its date an integer, the start of its path that it shares with others (a folder, a URL's base) is stored once,
and only the columns a filter reads are indexed. The view `photo_details` shows the rows
with every name written out, for people reading the database with the sqlite3 shell."""
from __future__ import annotations

from datetime import date, datetime, timezone

from sqlalchemy import (
    JSON,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

TAXON_FIELDS = ("scientific_name", "common_name", "kingdom", "phylum", "class_name", "order", "family", "genus")
HASH_PREFIX_BYTES = 8  # the hash index holds this many leading bytes; the full hash is compared on the row


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class HashBytes(TypeDecorator):
    """A content hash: 64 hex characters stored as their 32 bytes; any other text (a test's placeholder, a
    hash of another kind) is kept as a zero byte followed by its UTF-8 (never 32 bytes long), so every value
    reads back as written."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if len(value) == 64:
            try:
                return bytes.fromhex(value)
            except ValueError:
                pass
        raw = b"\0" + value.encode("utf-8")
        return raw + b"\0" if len(raw) == 32 else raw  # never 32 bytes: that length is a hash's

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        value = bytes(value)
        if len(value) == 32:
            return value.hex()
        return value[1:-1 if len(value) == 33 and value.endswith(b"\0") else None].decode("utf-8")


class DayNumber(TypeDecorator):
    """A date stored as the integer yyyymmdd (4 bytes in SQLite's record and in its index, against 10 for the
    ISO text); it orders as the dates do, so range filters compare it directly."""

    impl = Integer
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        return value.year * 10_000 + value.month * 100 + value.day

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        value = int(value)
        return date(value // 10_000, value // 100 % 100, value % 100)


class Base(DeclarativeBase):
    pass


class TaxonRow(Base):
    """One combination of names (species, common name, ranks) that photos share."""

    __tablename__ = "taxa"
    __table_args__ = (UniqueConstraint(*TAXON_FIELDS, name="uq_taxa_names"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    scientific_name: Mapped[str] = mapped_column(String(200), default="")
    common_name: Mapped[str] = mapped_column(String(200), default="")
    kingdom: Mapped[str] = mapped_column(String(100), default="")
    phylum: Mapped[str] = mapped_column(String(100), default="")
    class_name: Mapped[str] = mapped_column(String(100), default="")
    order: Mapped[str] = mapped_column(String(100), default="")
    family: Mapped[str] = mapped_column(String(100), default="")
    genus: Mapped[str] = mapped_column(String(100), default="")


class PathPrefixRow(Base):
    """The start that the paths of many photos share (a folder, a URL's base): a photo's path is this text
    followed by its own `path`."""

    __tablename__ = "path_prefixes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    text: Mapped[str] = mapped_column(Text, unique=True)


class LicenceRow(Base):
    """One licence text as a source wrote it, with core.licences' reading of it (what the filter compares)."""

    __tablename__ = "licences"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    text: Mapped[str] = mapped_column(String(100), unique=True)
    code: Mapped[str] = mapped_column(String(100), default="")
    version: Mapped[str] = mapped_column(String(20), default="")


class PhotoRow(Base):
    __tablename__ = "photos"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    prefix_id: Mapped[int | None] = mapped_column(ForeignKey("path_prefixes.id"), nullable=True)
    path: Mapped[str] = mapped_column(Text)  # what follows the prefix (the whole path when it has none)
    sha256: Mapped[str] = mapped_column(HashBytes)  # indexed by its first bytes (migration 0007)
    width: Mapped[int] = mapped_column(Integer, default=0)
    height: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(Integer, default=0)
    taxon_id: Mapped[int | None] = mapped_column(ForeignKey("taxa.id"), nullable=True, index=True)
    observed_on: Mapped[date | None] = mapped_column(DayNumber, nullable=True, index=True)
    latitude: Mapped[float | None] = mapped_column(Float, nullable=True)  # boxes: the place index (migration 0009)
    longitude: Mapped[float | None] = mapped_column(Float, nullable=True)
    licence_id: Mapped[int | None] = mapped_column(ForeignKey("licences.id"), nullable=True, index=True)
    rights_holder: Mapped[str] = mapped_column(String(200), default="")
    caption: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(String(50), default="")
    extra: Mapped[dict | None] = mapped_column(JSON(none_as_null=True), nullable=True)  # NULL when empty
    ingest_run_id: Mapped[int | None] = mapped_column(ForeignKey("ingest_runs.id"), nullable=True)


class VectorSetRow(Base):
    __tablename__ = "vector_sets"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[str] = mapped_column(String(300), unique=True)
    dim: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PhotoVectorRow(Base):
    """Membership: this photo has a vector in this set's FAISS index (a table without rowid since 0007)."""

    __tablename__ = "photo_vectors"
    __table_args__ = {"sqlite_with_rowid": False}
    vector_set_id: Mapped[int] = mapped_column(ForeignKey("vector_sets.id"), primary_key=True)
    photo_id: Mapped[int] = mapped_column(ForeignKey("photos.id"), primary_key=True)


class IngestRunRow(Base):
    __tablename__ = "ingest_runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    summary: Mapped[dict] = mapped_column(JSON, default=dict)
