"""SQLAlchemy tables of the session log (sessions, requests, stages, turns, labels, exports). Only storage/
sees these classes; the rest of the code sees core.contracts.sessionlog dataclasses."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.models import Base, utcnow


class SessionRow(Base):
    __tablename__ = "sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    title: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    token: Mapped[str | None] = mapped_column(String(40), unique=True, index=True, nullable=True)  # shown outside
    owner: Mapped[str] = mapped_column(String(200), default="", index=True)  # '' when nobody logs in


class RequestRow(Base):
    __tablename__ = "requests"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.id"), index=True)
    query: Mapped[str] = mapped_column(Text)
    method: Mapped[str] = mapped_column(String(100))
    settings: Mapped[dict] = mapped_column(JSON, default=dict)
    models: Mapped[dict] = mapped_column(JSON, default=dict)
    filters: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class StageRow(Base):
    __tablename__ = "stages"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    request_id: Mapped[int] = mapped_column(ForeignKey("requests.id"), index=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    name: Mapped[str] = mapped_column(String(100))
    ranking: Mapped[list] = mapped_column(JSON, default=list)  # [[photo_id, score], ...] best first
    artefacts: Mapped[dict] = mapped_column(JSON, default=dict)  # pictures as file paths


class TurnRow(Base):
    __tablename__ = "turns"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    question: Mapped[str] = mapped_column(Text, default="")
    answer: Mapped[str] = mapped_column(Text, default="")
    description: Mapped[str] = mapped_column(Text, default="")
    request_id: Mapped[int | None] = mapped_column(ForeignKey("requests.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LabelRow(Base):
    __tablename__ = "labels"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.id"), index=True)
    query: Mapped[str] = mapped_column(Text, index=True)
    photo_id: Mapped[int] = mapped_column(Integer)
    label: Mapped[int] = mapped_column(Integer)  # 1 relevant, 0 not relevant, -1 skipped
    annotator: Mapped[str] = mapped_column(String(100))
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ExportRow(Base):
    __tablename__ = "exports"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[int | None] = mapped_column(ForeignKey("sessions.id"), nullable=True)
    format: Mapped[str] = mapped_column(String(30))
    path: Mapped[str] = mapped_column(Text)
    rows: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class InstructionRow(Base):
    __tablename__ = "label_instructions"
    query: Mapped[str] = mapped_column(Text, primary_key=True)
    text: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ServedFileRow(Base):
    """A file the web app handed out from its upload folder, and to whom ('user:<name key>' or 'browser:...')."""

    __tablename__ = "served_files"
    path: Mapped[str] = mapped_column(Text, primary_key=True)
    owner: Mapped[str] = mapped_column(String(200), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LoginRow(Base):
    """A login of the web app: the SHA-256 of its cookie's token (never the token), whose it is, and until when."""

    __tablename__ = "logins"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class WebKeyRow(Base):
    """A value the web processes of one data directory share (the login cookie's name part, cookie_id)."""

    __tablename__ = "web_keys"
    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))
