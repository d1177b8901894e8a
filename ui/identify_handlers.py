"""Identifications in the photo view and the API's /identify: a person confirms or corrects the species (and
count) of a camera-trap frame or of its whole event. Saved as a human observation through the camera-trap
door (core.camtrap.desk.CamtrapDesk.identify: classificationMethod human, classifiedBy the annotator, the
time); the photo view is drawn again so the new identification shows at once.

Keys (ui.lightbox.KEYS_JS): i this frame, e the whole event, c confirm the species shown; Enter in the
species box identifies the event when the frame has one (a burst is one sighting), else the frame."""
from __future__ import annotations

import logging
from typing import Any, Callable

from core.contracts import bounds
from core.contracts.errors import InputError
from ui import camtrap_present
from ui import strings_camtrap as SC
from ui.forms import note, shows_errors
from ui.forms import photo_id as read_photo_id

log = logging.getLogger(__name__)


class IdentifyHandlers:
    def __init__(self, lightbox: Any, names: Callable[[str], str] | None = None):
        """`lightbox`: ui.lightbox.LightboxHandlers (its camera-trap page and how it draws the photo view);
        `names(typed)`: the name an identification is saved under (ui.owned_log.OwnedLog.annotator: the
        logged-in person's, another refused; without logins the name as typed)."""
        self.lightbox = lightbox
        self.camtrap = lightbox.camtrap
        self.names = names if names is not None else bounds.name

    def _save(self, target: str, photo: Any, species: str, count: Any, annotator: str) -> str:
        """Store one identification of the frame `photo` ('frame') or its event ('event'); returns what the
        page says. `count` goes on as the box holds it (emptied: None, no count said), so the page and the API
        read it alike: 0 is refused but for 'blank' (core.camtrap.identifications)."""
        annotator = self.names(annotator)
        pid = read_photo_id(photo)
        if pid is None or self.camtrap.desk is None:
            raise InputError(SC.CT_ID_NOTHING.rstrip("."), "")
        facts = self.camtrap.facts([pid]).get(pid)
        if not facts:
            raise InputError(SC.CT_ID_NOTHING.rstrip("."), "")
        if not str(species or "").strip():
            raise InputError(SC.CT_ID_NO_SPECIES.rstrip("."), "")
        if target == "event":
            if not facts.get("event_id"):
                raise InputError(SC.CT_ID_NO_EVENT.rstrip("."), "")
            obs = self.camtrap.desk.identify(species, annotator, event=facts["event_id"], count=count)
            where = SC.CT_ID_TARGET_EVENT.format(event=facts["event_id"],
                                                frames=camtrap_present.frames_text(facts.get("event_frames") or 1))
        else:
            obs = self.camtrap.desk.identify(species, annotator, photo_id=pid, count=count)
            where = SC.CT_ID_TARGET_PHOTO.format(photo=pid)
        what = obs.scientific_name or SC.CT_OBS_TYPES.get(obs.type, obs.type)
        count_text = SC.CT_OBS_COUNT.format(n=obs.count) if obs.count is not None else ""
        return SC.CT_ID_SAVED.format(target=where, what=what, count=count_text, who=obs.classified_by)

    def _redrawn(self, message: str, view: dict[str, Any] | None, marks: Any):
        note(message)
        return self.lightbox.outputs(dict(view or {}), marks)

    @shows_errors
    def frame(self, photo: Any, species: str, count: Any, annotator: str, view: dict[str, Any] | None, marks: Any):
        return self._redrawn(self._save("frame", photo, species, count, annotator), view, marks)

    @shows_errors
    def event(self, photo: Any, species: str, count: Any, annotator: str, view: dict[str, Any] | None, marks: Any):
        return self._redrawn(self._save("event", photo, species, count, annotator), view, marks)

    @shows_errors
    def typed(self, photo: Any, species: str, count: Any, annotator: str, view: dict[str, Any] | None, marks: Any):
        """Enter in the species box: the event when the frame has one, else the frame."""
        pid = read_photo_id(photo)
        facts = self.camtrap.facts([pid]).get(pid) if pid is not None else None
        target = "event" if facts and facts.get("event_id") else "frame"
        return self._redrawn(self._save(target, photo, species, count, annotator), view, marks)

    @shows_errors
    def confirm(self, photo: Any, count: Any, annotator: str, view: dict[str, Any] | None, marks: Any):
        """The species shown (the newest identification, or the classifier's label) confirmed by this person,
        for the event when the frame has one."""
        pid = read_photo_id(photo)
        facts = self.camtrap.facts([pid]).get(pid) if pid is not None else None
        if not facts:
            raise InputError(SC.CT_ID_NOTHING.rstrip("."), "")
        species = camtrap_present.species_shown(facts)
        if not species:
            raise InputError(SC.CT_ID_NONE_TO_CONFIRM.rstrip("."), "type the species instead")
        target = "event" if facts.get("event_id") else "frame"
        return self._redrawn(self._save(target, photo, species, count, annotator), view, marks)

    @shows_errors
    def identify_api(self, species: str, annotator: str, photo: float | None = None, event: str | None = None,
                     count: float | None = None) -> dict:
        """Scriptable identification: `photo` (a photo id) or `event` (an event_id from the search results) shows
        `species` (a scientific name; 'blank' for no animal), `count` individuals (optional), identified by
        `annotator`. Returns the stored observation."""
        if self.camtrap.desk is None:
            raise InputError("This catalog has no camera-trap data", "ingest a camera-trap folder or package first")
        annotator = self.names(annotator)
        pid = read_photo_id(photo)
        key = bounds.text("event id", event or "", 400).strip() or None
        obs = self.camtrap.desk.identify(species, annotator, photo_id=pid, event=key, count=count)
        return {"id": obs.id, "level": obs.level, "type": obs.type, "photo": obs.photo_id,
                "event": key, "scientific_name": obs.scientific_name, "count": obs.count,
                "classification_method": obs.method, "classified_by": obs.classified_by,
                "classified_at": obs.classified_at}


def wire(view: Any, h: IdentifyHandlers) -> None:
    """The photo view's identify buttons, keys and species box (ui.lightbox.LightboxView `view`)."""
    quick = dict(api_visibility="private", show_progress="hidden")
    ins = [view.photo_id, view.species, view.count, view.who, view.view, view.marks]
    view.id_frame.click(h.frame, ins, view.outputs, **quick)
    view.id_event.click(h.event, ins, view.outputs, **quick)
    view.species.submit(h.typed, ins, view.outputs, **quick)
    view.id_confirm.click(h.confirm, [view.photo_id, view.count, view.who, view.view, view.marks], view.outputs,
                          **quick)
