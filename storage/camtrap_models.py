"""SQLAlchemy tables of the camera-trap data model (migration 0010): deployments, captures, events,
detections, crop_vectors and observations. Every one is optional: a plain photo has no row in any of them.
Only storage/ sees these classes; core sees core.contracts.camtrap's dataclasses."""
from __future__ import annotations

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.models import Base

PHOTO_FK = "photos.id"


class DeploymentRow(Base):
    __tablename__ = "deployments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(Text, unique=True)
    location_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    location_name: Mapped[str | None] = mapped_column(Text, nullable=True)
    latitude: Mapped[float | None] = mapped_column(Float, nullable=True)
    longitude: Mapped[float | None] = mapped_column(Float, nullable=True)
    coordinate_uncertainty: Mapped[int | None] = mapped_column(Integer, nullable=True)
    start: Mapped[str | None] = mapped_column(Text, nullable=True)
    end: Mapped[str | None] = mapped_column(Text, nullable=True)
    setup_by: Mapped[str | None] = mapped_column(Text, nullable=True)
    camera_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    camera_model: Mapped[str | None] = mapped_column(Text, nullable=True)
    camera_delay: Mapped[int | None] = mapped_column(Integer, nullable=True)
    camera_height: Mapped[float | None] = mapped_column(Float, nullable=True)
    camera_depth: Mapped[float | None] = mapped_column(Float, nullable=True)
    camera_tilt: Mapped[int | None] = mapped_column(Integer, nullable=True)
    camera_heading: Mapped[int | None] = mapped_column(Integer, nullable=True)
    detection_distance: Mapped[float | None] = mapped_column(Float, nullable=True)
    timestamp_issues: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    bait_use: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    feature_type: Mapped[str | None] = mapped_column(Text, nullable=True)
    habitat: Mapped[str | None] = mapped_column(Text, nullable=True)
    deployment_group: Mapped[str | None] = mapped_column(Text, nullable=True)
    tags: Mapped[str | None] = mapped_column(Text, nullable=True)
    comments: Mapped[str | None] = mapped_column(Text, nullable=True)
    utc_offset: Mapped[str | None] = mapped_column(Text, nullable=True)
    clock_offset_s: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    extra: Mapped[dict | None] = mapped_column(JSON(none_as_null=True), nullable=True)


class EventRow(Base):
    __tablename__ = "events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(Text, unique=True)
    deployment_id: Mapped[int | None] = mapped_column(ForeignKey("deployments.id", ondelete="SET NULL"),
                                                      nullable=True, index=True)
    start: Mapped[str | None] = mapped_column(Text, nullable=True)
    end: Mapped[str | None] = mapped_column(Text, nullable=True)
    frames: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    max_n: Mapped[int | None] = mapped_column(Integer, nullable=True)


class CaptureRow(Base):
    __tablename__ = "captures"
    photo_id: Mapped[int] = mapped_column(ForeignKey(PHOTO_FK, ondelete="CASCADE"), primary_key=True)
    deployment_id: Mapped[int | None] = mapped_column(ForeignKey("deployments.id", ondelete="SET NULL"),
                                                      nullable=True, index=True)
    media_key: Mapped[str | None] = mapped_column(Text, nullable=True, index=True)
    captured_at: Mapped[str | None] = mapped_column(Text, nullable=True)
    utc_offset: Mapped[str | None] = mapped_column(Text, nullable=True)
    utc_epoch: Mapped[float | None] = mapped_column(Float, nullable=True)
    time_source: Mapped[str | None] = mapped_column(Text, nullable=True)
    time_issue: Mapped[str | None] = mapped_column(Text, nullable=True)
    capture_method: Mapped[str | None] = mapped_column(Text, nullable=True)
    event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id", ondelete="SET NULL"), nullable=True,
                                                 index=True)
    file_public: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    file_name: Mapped[str | None] = mapped_column(Text, nullable=True)
    media_type: Mapped[str | None] = mapped_column(Text, nullable=True)
    camera_make: Mapped[str | None] = mapped_column(Text, nullable=True)
    camera_model: Mapped[str | None] = mapped_column(Text, nullable=True)
    camera_serial: Mapped[str | None] = mapped_column(Text, nullable=True)
    comments: Mapped[str | None] = mapped_column(Text, nullable=True)
    extra: Mapped[dict | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    detector_looked: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")


class DetectionRow(Base):
    __tablename__ = "detections"
    __table_args__ = {"sqlite_autoincrement": True}  # an id is a crop's id in the crop index: never reused
    id: Mapped[int] = mapped_column(Integer, primary_key=True)  # = the crop's id in the crop index
    photo_id: Mapped[int] = mapped_column(ForeignKey(PHOTO_FK, ondelete="CASCADE"), index=True)
    x: Mapped[float] = mapped_column(Float)
    y: Mapped[float] = mapped_column(Float)
    w: Mapped[float] = mapped_column(Float)
    h: Mapped[float] = mapped_column(Float)
    category: Mapped[str] = mapped_column(Text)
    conf: Mapped[float] = mapped_column(Float)
    model: Mapped[str] = mapped_column(Text)
    label: Mapped[str | None] = mapped_column(Text, nullable=True)
    label_conf: Mapped[float | None] = mapped_column(Float, nullable=True)


class CropVectorRow(Base):
    """Membership: this detection's crop has a vector in this set's crop index (as photo_vectors)."""

    __tablename__ = "crop_vectors"
    __table_args__ = {"sqlite_with_rowid": False}
    vector_set_id: Mapped[int] = mapped_column(ForeignKey("vector_sets.id"), primary_key=True)
    detection_id: Mapped[int] = mapped_column(ForeignKey("detections.id", ondelete="CASCADE"), primary_key=True)


class ObservationRow(Base):
    __tablename__ = "observations"
    __table_args__ = (Index("ix_observations_key", "key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str | None] = mapped_column(Text, nullable=True)
    deployment_id: Mapped[int | None] = mapped_column(ForeignKey("deployments.id", ondelete="SET NULL"),
                                                      nullable=True, index=True)
    photo_id: Mapped[int | None] = mapped_column(ForeignKey(PHOTO_FK, ondelete="CASCADE"), nullable=True, index=True)
    event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id", ondelete="SET NULL"), nullable=True,
                                                 index=True)
    level: Mapped[str] = mapped_column(Text)
    type: Mapped[str] = mapped_column(Text)
    scientific_name: Mapped[str | None] = mapped_column(Text, nullable=True)
    count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    life_stage: Mapped[str | None] = mapped_column(Text, nullable=True)
    sex: Mapped[str | None] = mapped_column(Text, nullable=True)
    behavior: Mapped[str | None] = mapped_column(Text, nullable=True)
    individual_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    bbox_x: Mapped[float | None] = mapped_column(Float, nullable=True)
    bbox_y: Mapped[float | None] = mapped_column(Float, nullable=True)
    bbox_w: Mapped[float | None] = mapped_column(Float, nullable=True)
    bbox_h: Mapped[float | None] = mapped_column(Float, nullable=True)
    method: Mapped[str | None] = mapped_column(Text, nullable=True)
    classified_by: Mapped[str | None] = mapped_column(Text, nullable=True)
    probability: Mapped[float | None] = mapped_column(Float, nullable=True)
    classified_at: Mapped[str | None] = mapped_column(Text, nullable=True)
    event_start: Mapped[str | None] = mapped_column(Text, nullable=True)
    event_end: Mapped[str | None] = mapped_column(Text, nullable=True)
    comments: Mapped[str | None] = mapped_column(Text, nullable=True)
    extra: Mapped[dict | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    annotator: Mapped[str | None] = mapped_column(Text, nullable=True)


class CamtrapPackageRow(Base):
    """An imported Camtrap DP package's metadata (datapackage.json without its resources; migration 0011)."""

    __tablename__ = "camtrap_packages"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(Text, unique=True)
    metadata_: Mapped[dict] = mapped_column("metadata", JSON)
