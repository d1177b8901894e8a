"""An offline captioner for field-guide pictures: writes a short note, in the same form as the world's own notes,
from what the judge network reads in the pixels (the most likely species, stage, view, behaviour, habitat and
visible part colours)."""
from __future__ import annotations

from PIL import Image

from fieldguide.species import PART_PHRASE, by_name

_VIEW = {"side": "seen from the side", "top": "seen from above", "underside": "seen from below"}
_HABITAT = {"water": "over water", "grass": "in grass", "sky": "against the sky", "bark": "on tree bark",
            "sand": "on sand"}


def _best(d: dict) -> tuple[object, float]:
    label = max(d, key=d.get)
    return label, d[label]


class FieldGuideCaptioner:
    """Captioner backend (stand-in). Register as 'fieldguide' to use it; `photo` metadata is not read."""

    model_id = "fieldguide-captioner@v2"
    is_standin = True

    def __init__(self, reader=None):
        if reader is None:
            from fieldguide.judge_net import JudgeReader

            reader = JudgeReader()
        self.reader = reader
        fingerprint = getattr(reader, "fingerprint", "")
        self.model_id = f"{type(self).model_id}:{fingerprint}" if fingerprint else type(self).model_id

    @classmethod
    def from_settings(cls, settings=None, spec: str = "fieldguide") -> "FieldGuideCaptioner":
        return cls()

    def caption(self, image: Image.Image, photo=None) -> str:
        from fieldguide.judge import species_probs

        p = self.reader.attribute_probs([image])[0]
        species, _ = _best(species_probs(p))
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
            if item and behaviour == "carrying":
                behaviour += f" a {item}"
            elif item and behaviour == "feeding":
                behaviour += " on nectar" if item == "nectar" else f" on a {item}"
            bits.append(behaviour)
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
