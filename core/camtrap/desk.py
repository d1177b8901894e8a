"""The web app's and the API's one door to camera-trap data (handed to the ui by app.py, so the ui never
imports core.camtrap or storage): the catalog's deployments, a frame's facts, an event's frames (how a label
given to an event reaches them), the boxes drawn on a frame in the photo view, and a person's
identification."""
from __future__ import annotations

from typing import Any, Sequence

from core.camtrap import event_labels, frame_facts, frame_pictures, identifications
from core.contracts.camtrap import CamtrapStore, Observation
from core.contracts.sessionlog import Label


class CamtrapDesk:
    def __init__(self, store: CamtrapStore | None, settings: Any):
        self.store, self.settings = store, settings

    @property
    def threshold(self) -> float:
        return float(self.settings.detection_threshold)

    def deployment_keys(self) -> list[str]:
        """The catalog's deployments by key ([] for a catalog without camera-trap data)."""
        return [] if self.store is None else [d.key for d in self.store.deployments()]

    def deployment_choices(self) -> list[tuple[str, str]]:
        """(what the menu shows, key) per deployment: the key with its place's name when it has one
        ('62c200a9 · B_DM_val 4_'t WAD'), for a Camtrap DP package's deploymentIDs say nothing to a person."""
        if self.store is None:
            return []
        out = []
        for d in self.store.deployments():
            place = (d.location_name or d.location_id or "").strip()
            out.append((f"{d.key} · {place}" if place and place != d.key else d.key, d.key))
        return out

    def facts(self, photo_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """photo id -> its camera-trap facts (core.camtrap.frame_facts.facts); plain photos left out."""
        return frame_facts.facts(self.store, photo_ids)

    def event_frames(self, photo_ids: Sequence[int]) -> dict[int, list[int]]:
        """photo id -> its event's frames (itself alone when it has no event)."""
        return frame_facts.event_frames(self.store, photo_ids)

    def event_labels(self, label: Label) -> list[Label]:
        """A label given to an event, for each of its frames (core.camtrap.event_labels.expand)."""
        return event_labels.expand(self.store, label)

    def identify(self, species: Any, annotator: Any, *, photo_id: int | None = None, event: str | None = None,
                 count: Any = None) -> Observation:
        """A person's identification of a frame or an event (core.camtrap.identifications.identify)."""
        if self.store is None:
            from core.contracts.errors import InputError
            raise InputError("This catalog has no camera-trap data", "ingest a camera-trap folder or package first")
        return identifications.identify(self.store, species, annotator, photo_id=photo_id, event=event, count=count)

    def picture_edit(self, shown: Sequence[dict[str, Any]], labels: Sequence[str] = ()):
        """What core.served draws on a frame's copy for the photo view: the boxes of the detections `shown`
        with their labels (core.camtrap.frame_pictures.boxes_edit); None when there are none."""
        return frame_pictures.boxes_edit(shown, labels)

    def boxes_worth_showing(self, facts: dict[str, Any] | None) -> list[dict[str, Any]]:
        """The detections of a frame at or above detection_threshold (the photo view draws them)."""
        return [d for d in (facts or {}).get("detections") or [] if float(d.get("conf") or 0) >= self.threshold]
