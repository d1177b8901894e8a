"""SQLAlchemy tables of the catalog (photos, vector sets, ingest runs). Only storage/ sees these classes."""
from __future__ import annotations

from datetime import date, datetime, timezone

from sqlalchemy import JSON, Date, DateTime, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    pass


class PhotoRow(Base):
    __tablename__ = "photos"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    width: Mapped[int] = mapped_column(Integer, default=0)
    height: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(Integer, default=0)
    scientific_name: Mapped[str] = mapped_column(String(200), default="", index=True)
    common_name: Mapped[str] = mapped_column(String(200), default="")
    kingdom: Mapped[str] = mapped_column(String(100), default="")
    phylum: Mapped[str] = mapped_column(String(100), default="")
    class_name: Mapped[str] = mapped_column(String(100), default="")
    order: Mapped[str] = mapped_column(String(100), default="")
    family: Mapped[str] = mapped_column(String(100), default="")
    genus: Mapped[str] = mapped_column(String(100), default="")
    observed_on: Mapped[date | None] = mapped_column(Date, nullable=True)
    observed_month: Mapped[int | None] = mapped_column(Integer, nullable=True)  # 1-12, indexed for month filters
    latitude: Mapped[float | None] = mapped_column(Float, nullable=True)
    longitude: Mapped[float | None] = mapped_column(Float, nullable=True)
    license: Mapped[str] = mapped_column(String(100), default="")  # as the source wrote it
    # core.licences' reading of `license` (migration 0006): what the licence filter compares
    license_code: Mapped[str] = mapped_column(String(100), default="", server_default="", index=True)
    license_version: Mapped[str] = mapped_column(String(20), default="", server_default="")
    rights_holder: Mapped[str] = mapped_column(String(200), default="")
    caption: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(String(50), default="")
    extra: Mapped[dict] = mapped_column(JSON, default=dict)
    ingest_run_id: Mapped[int | None] = mapped_column(ForeignKey("ingest_runs.id"), nullable=True)
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class VectorSetRow(Base):
    __tablename__ = "vector_sets"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[str] = mapped_column(String(300), unique=True)
    dim: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PhotoVectorRow(Base):
    """Membership: this photo has a vector in this set's FAISS index."""

    __tablename__ = "photo_vectors"
    vector_set_id: Mapped[int] = mapped_column(ForeignKey("vector_sets.id"), primary_key=True)
    photo_id: Mapped[int] = mapped_column(ForeignKey("photos.id"), primary_key=True)


class IngestRunRow(Base):
    __tablename__ = "ingest_runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    summary: Mapped[dict] = mapped_column(JSON, default=dict)
