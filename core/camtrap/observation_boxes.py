"""The boxes of a Camtrap DP package's media-level observations (bboxX, bboxY, bboxWidth, bboxHeight:
normalised, from the top left) as detections of their medium, so that the ingest embeds their crops and a
search can match inside the animal.

An observation with a box becomes one detection: category from observationType (animal -> animal, human ->
person, vehicle -> vehicle; other types are left out), conf = classificationProbability when given, else 1.0
for a human classification (a machine one without a probability is left out), model 'camtrap-dp: ' + the
classifiedBy (else the classification method), label = the scientificName. They ARE the imported
observations: the Camtrap DP and MegaDetector exports leave them out (`is_imported`), and they never mark a
frame as looked at by a detector (a person's boxes do not make the other frames empty). A re-import replaces a
frame's boxes of the same model when they changed, so nothing is added twice."""
from __future__ import annotations

import logging
from collections.abc import Sequence

from core.contracts.camtrap import IMPORTED_MODEL_PREFIX, Detection, Observation

log = logging.getLogger(__name__)

PREFIX = IMPORTED_MODEL_PREFIX  # the model of every detection made from an imported observation
CATEGORIES = {"animal": "animal", "human": "person", "vehicle": "vehicle"}


def is_imported(d: Detection) -> bool:
    """Whether the detection was made from an imported Camtrap DP observation (not a detector's result)."""
    return bool(d.model) and d.model.startswith(PREFIX)


def detection_of(o: Observation) -> Detection | None:
    """The detection an observation's box makes, or None (no box, not media-level, no photo yet, a type
    without a detection category, or a machine classification without a probability)."""
    box = (o.bbox_x, o.bbox_y, o.bbox_w, o.bbox_h)
    if o.level != "media" or o.photo_id is None or any(v is None for v in box):
        return None
    category = CATEGORIES.get((o.type or "").strip().lower())
    if category is None:
        return None
    if o.probability is not None:
        conf = float(o.probability)
    elif (o.method or "").strip().lower() == "human":
        conf = 1.0
    else:
        return None
    who = (o.classified_by or "").strip() or (o.method or "").strip() or "unknown"
    return Detection(x=float(o.bbox_x), y=float(o.bbox_y), w=float(o.bbox_w), h=float(o.bbox_h), category=category,
                     conf=conf, model=PREFIX + who, photo_id=int(o.photo_id), label=o.scientific_name or None,
                     label_conf=o.probability)


def _key(d: Detection) -> tuple:
    return (round(d.x, 6), round(d.y, 6), round(d.w, 6), round(d.h, 6), d.category, round(d.conf, 6), d.label,
            None if d.label_conf is None else round(d.label_conf, 6))


def store_boxes(store, observations: Sequence[Observation]) -> tuple[int, int]:
    """Write the observations' boxes as detections (store: core.contracts.camtrap.CamtrapStore); a frame whose
    boxes of a model are already stored unchanged is left alone (its crops are not embedded again). Returns
    (boxes written, boxes made)."""
    made = [d for d in (detection_of(o) for o in observations) if d is not None]
    if not made:
        return 0, 0
    stored = store.detections(sorted({int(d.photo_id) for d in made}))
    groups: dict[tuple[str, int], list[Detection]] = {}
    for d in made:
        groups.setdefault((d.model, int(d.photo_id)), []).append(d)
    by_model: dict[str, list[Detection]] = {}
    for (model, pid), boxes in groups.items():
        old = sorted(_key(d) for d in stored.get(pid, []) if d.model == model)
        if old != sorted(_key(d) for d in boxes):
            by_model.setdefault(model, []).extend(boxes)
    written = 0
    for model, boxes in sorted(by_model.items()):
        store.add_detections(boxes, replace_model=model)
        written += len(boxes)
    log.info("camtrap-dp observation boxes: %d made, %d written (the rest unchanged)", len(made), written)
    return written, len(made)
