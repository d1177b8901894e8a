"""A relevance label given to an event applies to its frames: the label as given (on the frame shown, the
event's best) plus the same judgement, by the same person for the same query, on each other frame of the
event. The label board (ui) and the API's /label (whole_event) both expand through `expand`."""
from __future__ import annotations

from dataclasses import replace

from core.camtrap.frame_facts import event_frames
from core.contracts.camtrap import CamtrapStore
from core.contracts.sessionlog import Label


def expand(store: CamtrapStore | None, label: Label) -> list[Label]:
    """[the label itself, then one per other frame of its photo's event in time order] (the seconds spent
    stay on the frame judged); a photo without an event gives [label]."""
    frames = event_frames(store, [label.photo_id])[label.photo_id]
    return [label] + [replace(label, photo_id=int(f), seconds=0.0, id=None) for f in frames if f != label.photo_id]
