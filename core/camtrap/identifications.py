"""A person's identification made in EcoLens: "this photo (or this event) shows Vulpes vulpes, 2 of them",
kept as a human observation (Camtrap DP: classificationMethod human, classifiedBy the annotator, the time).

One identification per annotator and target: a second one by the same person replaces the first (the
observation's key names both), so correcting a slip never leaves two answers. An event identified as an animal
with a count takes that count as its MaxN (the newest person's count; a blank makes it 0), which the photo
view shows and the exports write (Camtrap DP's event-level count, Darwin Core's individualCount). The page (ui)
and the API's /identify both call `identify` with the camera-trap store (core.contracts.camtrap.CamtrapStore)."""
from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, Callable

from core.contracts import bounds
from core.contracts.camtrap import CamtrapStore, Event, Observation
from core.contracts.errors import InputError, NotFoundError

log = logging.getLogger(__name__)
MAX_COUNT = 10_000  # individuals in one frame or event
MAX_NAME_CHARS = 200
# what a person may type instead of a species (observationType blank / human)
BLANK_WORDS = ("blank", "empty", "nothing", "no animal")
HUMAN_WORDS = ("human", "person", "people", "homo sapiens")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def observation_type(species: str) -> tuple[str, str | None]:
    """(observationType, scientificName) for what a person typed: 'blank' and 'human' words name no species."""
    word = species.strip().lower()
    if word in BLANK_WORDS:
        return "blank", None
    if word in HUMAN_WORDS:
        return "human", "Homo sapiens"
    return "animal", species.strip()


def key_of(annotator: str, level: str, target: str) -> str:
    """The observation's key: one identification per (annotator, level, target)."""
    return f"ecolens:{bounds.name_key(annotator)}:{level}:{target}"


def _event(store: CamtrapStore, key: str) -> Event:
    found = store.event(key) if key else None  # one lookup by the key's unique index
    if found is None:
        raise NotFoundError(f"No event {key!r} in the catalog",
                            "use an event_id from the search results (search with one result per event)")
    return found


def identify(store: CamtrapStore, species: Any, annotator: Any, *, photo_id: int | None = None,
             event: str | None = None, count: Any = None, now: Callable[[], str] = _now) -> Observation:
    """Store a person's identification of one camera-trap photo (`photo_id`: a media-level observation) or of
    one event (`event`: its key, as search results give it: an event-level observation). `count`: how many
    individuals (None: not said; 1 or more, as Camtrap DP's count is; ignored for 'blank'). Returns the
    stored observation. InputError / NotFoundError say what was wrong and how to fix it; nothing is stored
    then."""
    name = bounds.name(bounds.text("annotator name", annotator, MAX_NAME_CHARS))
    if not name:
        raise InputError("The annotator name is empty", "type your name before identifying")
    said = bounds.name(bounds.text("species", species, MAX_NAME_CHARS))
    if not said:
        raise InputError("No species given", "type the scientific name (e.g. Vulpes vulpes), or 'blank' for no animal")
    if (photo_id is None) == (not event):
        raise InputError("Say which photo or which event is identified, not both and not neither",
                         "give a photo id, or an event id from the search results")
    number = None if count in (None, "") else bounds.whole_number("count", count, 0, MAX_COUNT,
                                                                  f"use a whole number from 0 to {MAX_COUNT}")
    kind, scientific = observation_type(said)
    if kind == "blank":
        number = None  # no individuals to count (Camtrap DP: a count is at least 1)
    elif number == 0:
        raise InputError(f"A count of 0 {scientific or kind} says nothing was seen",
                         "count 1 or more, type 'blank' as the species for a frame with no animal, or leave the "
                         "count empty when you did not count")
    if photo_id is not None:
        pid = bounds.whole_number("photo id", photo_id, 1, bounds.MAX_ID, "use a photo id shown in the results")
        capture = store.captures([pid]).get(pid)
        if capture is None:
            raise NotFoundError(f"Photo {pid} is not a camera-trap frame",
                                "identify photos that have a deployment (a camera-trap folder or package)")
        level, target, deployment_id, event_id, found = "media", str(pid), capture.deployment_id, None, None
    else:
        found = _event(store, str(event).strip())
        level, target, deployment_id, event_id, pid = "event", found.key, found.deployment_id, found.id, None
    obs = Observation(level=level, type=kind, key=key_of(name, level, target), deployment_id=deployment_id,
                      photo_id=pid, event_id=event_id, scientific_name=scientific, count=number, method="human",
                      classified_by=name, classified_at=now(), annotator=name)
    store.add_observations([obs])
    # the person's count is the event's MaxN from now on (the detector's count of boxes was a stand-in). A blank
    # sets it to 0, not back to the machine's boxes: Camtrap DP's observationType 'blank' says the event shows
    # no animal and its classificationMethod is the one used most recently, so the newest person's "nothing
    # here" replaces the machine's estimate as their count would (core.camtrap.carried keeps it on a regroup)
    max_n = 0 if kind == "blank" else number if kind == "animal" else None
    if found is not None and max_n is not None and max_n != found.max_n:
        store.upsert_events([replace(found, max_n=max_n)])
    log.info("identification by %s: %s %s is %s (count %s)", name, level, target, scientific or kind, number)
    return obs


def human_identifications(observations: list[Observation]) -> list[Observation]:
    """The identifications people made (in EcoLens or imported), newest first."""
    return sorted((o for o in observations if o.method == "human"), key=lambda o: o.classified_at or "",
                  reverse=True)
