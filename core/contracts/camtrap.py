"""Camera-trap shapes (issue 34): deployments, captures (a photo's camera-trap facts), events (sequences),
detections (a detector's boxes), observations (what a person or a machine said a medium or an event shows),
the camera-trap filters, and the `CamtrapStore` that keeps them (storage.camtrap_store on SQLite; fakes in
tests). Shapes only: no behaviour here.

Every field mirrors a column of migration 0010 (docs: notes/camtrap-design). A value not given is None. Ids
are the store's; a `*_key` is the source's own identifier (Camtrap DP deploymentID, mediaID, eventID,
observationID). On a write, a row that names a deployment or an event by key only (its id None) is resolved
by the store; on a read, both are filled."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

LEVELS = ("media", "event")  # Camtrap DP observationLevel
OBSERVATION_TYPES = ("animal", "human", "vehicle", "blank", "unknown", "unclassified")  # observationType
METHODS = ("human", "machine")  # classificationMethod
CATEGORIES = ("animal", "person", "vehicle")  # a detector's categories (MegaDetector)
IMPORTED_MODEL_PREFIX = "camtrap-dp: "  # Detection.model of a box made from a Camtrap DP package's observation
TIME_SOURCES = ("exif", "camtrap-dp", "file-time", "megadetector")
TIMES_OF_DAY = ("day", "night", "dawn", "dusk")
CLASSIFIED = ("", "human", "machine", "none")


@dataclass
class Deployment:
    """One camera at one place for one period (Camtrap DP deployments.csv)."""

    key: str  # deploymentID (Camtrap DP), or the folder name of a card
    id: int | None = None
    location_id: str | None = None
    location_name: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    coordinate_uncertainty: int | None = None  # metres
    start: str | None = None  # ISO 8601 as given (with its offset when known)
    end: str | None = None
    setup_by: str | None = None
    camera_id: str | None = None  # the camera's serial
    camera_model: str | None = None
    camera_delay: int | None = None  # seconds
    camera_height: float | None = None  # metres
    camera_depth: float | None = None
    camera_tilt: int | None = None  # degrees
    camera_heading: int | None = None
    detection_distance: float | None = None
    timestamp_issues: bool | None = None
    bait_use: bool | None = None
    feature_type: str | None = None
    habitat: str | None = None
    deployment_group: str | None = None  # deploymentGroups
    tags: str | None = None  # deploymentTags
    comments: str | None = None  # deploymentComments
    utc_offset: str | None = None  # '+02:00'; None: not known
    clock_offset_s: float = 0.0  # added to the camera's clock to get the true time
    extra: dict[str, Any] = field(default_factory=dict)  # any other column of the source (round trips)


@dataclass
class Capture:
    """The camera-trap facts of one photo (one row per photo that has any; plain photos have none)."""

    photo_id: int
    deployment_id: int | None = None
    deployment_key: str | None = None  # read: filled; write: resolved when deployment_id is None
    media_key: str | None = None  # Camtrap DP mediaID
    captured_at: str | None = None  # local wall time after the clock correction, 'YYYY-MM-DDTHH:MM:SS'
    utc_offset: str | None = None  # '+02:00' when known
    utc_epoch: float | None = None  # seconds since 1970 UTC (events, sorting, the sun)
    time_source: str | None = None  # TIME_SOURCES
    time_issue: str | None = None  # why the time is kept out of filters ('year 1970'); None when fine
    capture_method: str | None = None  # Camtrap DP captureMethod (activityDetection | timeLapse)
    event_id: int | None = None
    event_key: str | None = None  # read: filled; write: resolved when event_id is None
    file_public: bool = True
    file_name: str | None = None
    media_type: str | None = None  # fileMediatype, e.g. image/jpeg
    camera_make: str | None = None
    camera_model: str | None = None
    camera_serial: str | None = None
    comments: str | None = None  # mediaComments
    extra: dict[str, Any] = field(default_factory=dict)  # exifData, favorite, any other column
    detector_looked: bool = False  # a detector's results covered this frame (it may be called empty)


@dataclass
class Event:
    """A sequence: frames of one deployment close in time, or the event a source named."""

    key: str  # the source's eventID, else '<deploymentKey>#<n>'
    id: int | None = None
    deployment_id: int | None = None
    deployment_key: str | None = None
    start: str | None = None  # local wall time, as Capture.captured_at
    end: str | None = None
    frames: int = 0
    max_n: int | None = None  # the most individuals in one frame


@dataclass
class Detection:
    """One box a detector found on a photo: normalised [x, y, w, h] from the top left."""

    x: float
    y: float
    w: float
    h: float
    category: str  # CATEGORIES
    conf: float
    model: str  # name and version, e.g. 'MDV5a'
    photo_id: int | None = None
    id: int | None = None  # = the crop's id in the crop index
    label: str | None = None  # a classifier's species (SpeciesNet)
    label_conf: float | None = None


@dataclass
class Observation:
    """What a medium (level 'media') or an event (level 'event') shows, said by a person or a machine."""

    level: str  # LEVELS
    type: str  # OBSERVATION_TYPES
    key: str | None = None  # observationID
    id: int | None = None
    deployment_id: int | None = None
    deployment_key: str | None = None
    photo_id: int | None = None  # media-level: the medium
    media_key: str | None = None  # read: the medium's mediaID
    event_id: int | None = None
    event_key: str | None = None
    scientific_name: str | None = None
    count: int | None = None
    life_stage: str | None = None
    sex: str | None = None
    behavior: str | None = None
    individual_id: str | None = None
    bbox_x: float | None = None
    bbox_y: float | None = None
    bbox_w: float | None = None
    bbox_h: float | None = None
    method: str | None = None  # METHODS
    classified_by: str | None = None
    probability: float | None = None
    classified_at: str | None = None  # ISO 8601 as given
    event_start: str | None = None  # ISO 8601 as given
    event_end: str | None = None
    comments: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # cameraSetupType, observationTags, ...
    annotator: str | None = None  # the person who identified it in EcoLens


@dataclass(frozen=True)
class CamtrapFilters:
    """The camera-trap part of a search's filters (Filters.camtrap). Parts combine with AND."""

    deployments: tuple[str, ...] = ()  # deployment keys
    times_of_day: tuple[str, ...] = ()  # TIMES_OF_DAY
    include_empty: bool = False  # empty frames (a detector looked and found nothing) are hidden unless set
    by_event: bool = False  # one result per event
    categories: tuple[str, ...] = ()  # a detection of one of these categories at or above the threshold
    species: str = ""  # an observation of this scientific name (case-insensitive), of the frame or its event
    classified: str = ""  # CLASSIFIED: '' any; 'human'/'machine' an observation so classified; 'none' neither


class CamtrapStore(Protocol):
    # ---- deployments --------------------------------------------------------------------------------
    def upsert_deployments(self, deployments: Sequence[Deployment]) -> dict[str, int]:
        """Insert or replace by key (the id stays); returns key -> id."""

    def deployment(self, key: str) -> Deployment | None: ...

    def deployments(self) -> list[Deployment]:
        """Every deployment, by key."""

    # ---- captures -----------------------------------------------------------------------------------
    def set_captures(self, captures: Sequence[Capture]) -> None:
        """Insert or replace each photo's capture row (the whole row; a key is resolved to its id)."""

    def captures(self, photo_ids: Sequence[int]) -> dict[int, Capture]:
        """photo id -> its capture (photos without one left out)."""

    def photo_ids_for_media(self, media_keys: Sequence[str]) -> dict[str, int]:
        """mediaID -> photo id, for the media keys already in the catalog."""

    def remove_stand_ins(self, photo_ids: Sequence[int]) -> int:
        """Delete those of these photos that stand in for a medium kept without its file (sha256 'media:...'),
        with their camera-trap rows; other photos are never touched. Returns how many went."""

    def mark_looked(self, photo_ids: Sequence[int]) -> None:
        """A detector's results covered these frames (a capture row is made where there is none)."""

    def timed_places(self, photo_ids: Sequence[int] | None = None) -> list[tuple[int, float, float, float]]:
        """(photo id, utc_epoch, latitude, longitude) of the frames whose time (without a time_issue) and
        place (the deployment's, else the photo's own) are known (the time-of-day filter computes the sun from
        these); None: every frame."""

    # ---- events -------------------------------------------------------------------------------------
    def upsert_events(self, events: Sequence[Event]) -> dict[str, int]:
        """Insert or replace by key (the id stays); returns key -> id."""

    def assign_events(self, photo_events: dict[int, int]) -> None:
        """photo id -> event id, on photos that have a capture row."""

    def events(self, ids: Sequence[int] | None = None) -> list[Event]:
        """The events with these ids (None: all), by id."""

    def event(self, key: str) -> Event | None:
        """The event with this key (Camtrap DP eventID, or '<deploymentKey>#<n>'), None when there is none: one
        lookup through the key's unique index, however many events the catalog holds."""

    def event_photos(self, event_ids: Sequence[int]) -> dict[int, list[int]]:
        """event id -> its frames' photo ids, in time order."""

    # ---- detections ---------------------------------------------------------------------------------
    def add_detections(self, detections: Sequence[Detection], replace_model: str | None = None) -> list[int]:
        """Insert boxes (each names its photo_id); with replace_model, that model's earlier boxes on the
        same photos are removed first (their crop-vector membership goes with them). Returns the new ids."""

    def detections(self, photo_ids: Sequence[int]) -> dict[int, list[Detection]]:
        """photo id -> its boxes, most confident first (photos without any left out)."""

    def empty_ids(self, threshold: float) -> np.ndarray:
        """Frames a detector looked at with no box at or above `threshold` (sorted int64)."""

    def mark_crops_indexed(self, vector_set_id: int, detection_ids: Sequence[int]) -> None: ...

    def crop_ids(self, vector_set_id: int) -> np.ndarray:
        """Sorted ids of the detections recorded as having a crop vector in this set."""

    def unmark_crops(self, vector_set_id: int, detection_ids: Sequence[int]) -> None:
        """Forget these crop vectors (their file lost them): the next ingest embeds them again."""

    def unindexed_detections(self, vector_set_id: int, threshold: float) -> list[Detection]:
        """Boxes at or above `threshold` without a crop vector in this set, by id."""

    # ---- observations -------------------------------------------------------------------------------
    def add_observations(self, observations: Sequence[Observation]) -> list[int]:
        """Insert observations (keys resolved); one with the key of a stored one replaces it. Returns ids."""

    def observations(self, photo_ids: Sequence[int] | None = None, event_ids: Sequence[int] | None = None
                     ) -> list[Observation]:
        """Observations of these photos and/or these events (both None: every observation), by id."""

    def move_observations(self, moved: Sequence[Observation]) -> None:
        """Point each stored observation (by id), in the order given, at its `event_id` and `key` as they are now;
        another observation already holding that key is deleted (one observation a key, the last moved wins)."""

    # ---- imported packages --------------------------------------------------------------------------
    def save_package(self, key: str, metadata: dict[str, Any]) -> None:
        """Keep (or replace) a Camtrap DP package's metadata: datapackage.json without its resources."""

    def packages(self) -> dict[str, dict[str, Any]]:
        """package key (its id, else its name) -> its metadata, in import order."""

    # ---- filters ------------------------------------------------------------------------------------
    def version(self) -> tuple:
        """A token that changes whenever what the filters read (captures, detections, places) may have changed,
        in this process or another (an ingest): the filters' caches are kept while it stays the same."""

    def camtrap_ids(self, filters: CamtrapFilters, threshold: float) -> np.ndarray | None:
        """Sorted ids of the photos passing the deployment, category, species and classified parts of
        `filters`; None when none of those parts is set (every photo passes them). include_empty and
        times_of_day are applied by the caller (empty_ids, timed_places)."""
