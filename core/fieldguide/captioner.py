"""An offline captioner for field-guide pictures: writes a short note from what the encoder's attribute heads
read in the pixels (the most likely species, stage, view, behaviour, habitat and visible part colours)."""
from __future__ import annotations

from PIL import Image

from core.fieldguide.species import PART_PHRASE, by_name

_VIEW = {"side": "seen from the side", "top": "seen from above", "underside": "seen from below"}
_HABITAT = {"water": "over water", "grass": "in grass", "sky": "against the sky", "bark": "on tree bark",
            "sand": "on sand"}


def _best(d: dict) -> tuple[object, float]:
    label = max(d, key=d.get)
    return label, d[label]


class FieldGuideCaptioner:
    """Captioner backend (stand-in). Register as 'fieldguide' to use it; `photo` metadata is not read."""

    model_id = "fieldguide-captioner@v1"
    is_standin = True

    def __init__(self, reader=None):
        if reader is None:
            from core.fieldguide.encoder import FieldGuideEmbedder

            reader = FieldGuideEmbedder()
        self.reader = reader

    @classmethod
    def from_settings(cls, settings=None, spec: str = "fieldguide") -> "FieldGuideCaptioner":
        return cls()

    def caption(self, image: Image.Image, photo=None) -> str:
        p = self.reader.attribute_probs([image])[0]
        species, _ = _best(p["species"])
        plan, _ = _best(p["plan"])
        who = plan if species == "none" else f"{by_name(str(species)).common_name} ({species})"
        stage, _ = _best(p["stage"])
        if stage != "adult":
            who += " caterpillar larva" if stage == "larva" else " tadpole"
        count, _ = _best(p["count"])
        bits = [("two " if count == 2 else "one ") + who]
        behaviour, _ = _best(p["behaviour"])
        if behaviour != "none":
            item, _ = _best(p["item"])
            bits.append(behaviour + (f" a {item}" if item and behaviour == "carrying" else ""))
        bits.append(_VIEW[_best(p["view"])[0]])
        bits.append(_HABITAT[_best(p["habitat"])[0]])
        parts = []
        for key, dist in p.items():
            if key.startswith("colour:"):
                colour, prob = _best(dist)
                part = key.split(":", 1)[1]
                if colour != "none" and prob >= 0.5:
                    parts.append(f"{colour} {PART_PHRASE.get(part, part)}")
        note = "Read from the picture: " + ", ".join(bits) + "."
        return note + (" Visible: " + ", ".join(parts) + "." if parts else "")
