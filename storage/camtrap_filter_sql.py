"""The SQL of the camera-trap filters (SqlCamtrapStore.camtrap_ids, empty_ids): deployments by key, a detection
category at or above the threshold, an observed species or classification of the frame or of its event, and
the frames a detector looked at and found nothing on."""
from __future__ import annotations

import numpy as np
from sqlalchemy import Connection, and_, exists, func, or_, select

from core.contracts.camtrap import CamtrapFilters
from storage.camtrap_models import CaptureRow, DeploymentRow, DetectionRow, ObservationRow
from storage.filter_sql import id_array

CAPTURES, DEPLOYMENTS = CaptureRow.__table__, DeploymentRow.__table__
DETECTIONS, OBSERVATIONS = DetectionRow.__table__, ObservationRow.__table__


def camtrap_ids(conn: Connection, filters: CamtrapFilters, threshold: float) -> np.ndarray | None:
    """Sorted ids of the captures passing the set parts of `filters` (None: no such part is set)."""
    clauses = []
    if filters.deployments:
        clauses.append(CAPTURES.c.deployment_id.in_(
            select(DEPLOYMENTS.c.id).where(DEPLOYMENTS.c.key.in_(list(filters.deployments)))))
    if filters.categories:
        clauses.append(CAPTURES.c.photo_id.in_(select(DETECTIONS.c.photo_id).where(
            DETECTIONS.c.category.in_(list(filters.categories)), DETECTIONS.c.conf >= threshold)))
    if filters.species:
        clauses.append(_observed(OBSERVATIONS.c.scientific_name.is_not(None),  # (the partial index's condition)
                                 func.lower(OBSERVATIONS.c.scientific_name) == filters.species.strip().lower()))
    if filters.classified in ("human", "machine"):
        clauses.append(_observed(OBSERVATIONS.c.method == filters.classified))
    elif filters.classified == "none":
        clauses.append(~_observed(OBSERVATIONS.c.method.in_(["human", "machine"])))
    if not clauses:
        return None
    return id_array(conn, select(CAPTURES.c.photo_id).where(*clauses))


def empty_ids(conn: Connection, threshold: float) -> np.ndarray:
    """Frames a detector looked at with no box at or above `threshold`."""
    found = exists().where(DETECTIONS.c.photo_id == CAPTURES.c.photo_id, DETECTIONS.c.conf >= threshold)
    return id_array(conn, select(CAPTURES.c.photo_id).where(CAPTURES.c.detector_looked.is_(True), ~found))


def _observed(*condition):
    """The frames an observation meeting `condition` is about: its photo (media level), or every frame of its
    event (event level), as a set (two index look-ups rather than a correlated test on every frame)."""
    media = select(OBSERVATIONS.c.photo_id).where(*condition, OBSERVATIONS.c.photo_id.is_not(None))
    events = select(OBSERVATIONS.c.event_id).where(*condition, OBSERVATIONS.c.level == "event",
                                                   OBSERVATIONS.c.event_id.is_not(None))
    return or_(CAPTURES.c.photo_id.in_(media), and_(CAPTURES.c.event_id.is_not(None), CAPTURES.c.event_id.in_(events)))
