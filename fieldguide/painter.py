"""The offline picture generator: reads species names and attribute words from free text and draws the scene
with the world's own renderer. Words it cannot draw are listed in GeneratedImage.ignored_words."""
from __future__ import annotations

import random

from PIL import Image

from core.backends.base import GeneratedImage, ReferenceImage
from fieldguide.reading import Reading, read_text
from fieldguide.render import SIZE, render
from fieldguide.scene import DEFAULT_COLOURS, Scene, sample_scene, visible_parts
from fieldguide.species import PLAN_PARTS, Species

MAIN_PART = {"bird": "back", "moth": "wings", "frog": "back", "beetle": "elytra", "flower": "petals"}
PART_PLAN = {"crest": "bird", "beak": "bird", "underside": "moth", "elytra": "beetle", "petals": "flower",
             "centre": "flower", "leaves": "flower", "larva body": "moth", "larva stripes": "moth"}
_BEHAVIOURS_OF = {"bird": {"perched", "flying", "feeding", "carrying"}, "moth": {"perched", "flying", "feeding"},
                  "frog": {"perched", "feeding", "swimming"}, "beetle": {"perched", "flying", "carrying", "feeding"},
                  "flower": {"none"}}


def _plan_for(r: Reading) -> str:
    if r.species:
        return r.species[0].plan
    if "plan" in r.attrs:
        return str(r.attrs["plan"])
    if r.attrs.get("stage") == "larva":
        return "moth"
    if r.attrs.get("stage") == "tadpole":
        return "frog"
    for part in r.parts:
        if part in PART_PLAN:
            return PART_PLAN[part]
    if r.attrs.get("pose") in ("open", "bud"):
        return "flower"
    return "bird"


def scene_from_text(prompt: str, seed: int) -> tuple[Scene, list[str]]:
    """The scene a prompt describes (unsaid attributes drawn from `seed`) and the words that were not used."""
    r = read_text(prompt)
    ignored = list(r.unknown)
    plan = _plan_for(r)
    rng = random.Random(f"fieldguide-painter:{seed}:{prompt}")
    sp = r.species[0] if r.species else None
    base = sp or Species("", "", plan, dict(DEFAULT_COLOURS[plan]))
    s = sample_scene(base, rng)
    s.species = sp.scientific_name if sp else ""
    a = r.attrs
    stage = a.get("stage")
    if stage in ("larva", "tadpole") and stage in base.stages:
        s.stage = stage
        s.pose, s.behaviour = ("stretched", "feeding") if stage == "larva" else ("swimming", "swimming")
        s.view = s.view if s.view in ("side", "top") else "side"
    elif stage == "adult" and s.stage != "adult":
        s = _adult(base, rng)
    elif stage and stage != "adult":
        ignored.append(stage)
    if s.stage != "adult" and any(k in a for k in ("pose", "view", "behaviour")) and stage is None:
        s = _adult(base, rng)  # a pose or behaviour word without a stage word means the adult
    _apply(s, a, ignored)
    wanted = [p for p in r.parts if p in visible_parts(s) or p in s.colours or p.startswith("larva ")]
    for part in r.parts:
        if "view" not in a and s.stage == "adult" and part not in visible_parts(s):
            for view in ("side", "top", "underside"):
                trial = Scene(**{**s.__dict__, "view": view})
                if part in visible_parts(trial):
                    s.view = view
                    break
        if part not in wanted:
            ignored.append(part)
    for part, colour in r.colours.items():
        if part == "any":
            s.colours[MAIN_PART[plan]] = colour
        elif part.startswith("larva "):
            s.larva[part.split()[1]] = colour
        elif part in PLAN_PARTS[plan]:
            s.colours[part] = colour
        else:
            ignored.append(colour)
    return s, ignored


def _adult(base: Species, rng: random.Random) -> Scene:
    for _ in range(50):
        s = sample_scene(base, rng)
        if s.stage == "adult":
            s.species = base.scientific_name
            return s
    return s


def _apply(s: Scene, a: dict, ignored: list[str]) -> None:
    """Put the attribute words into the scene where the body plan allows them."""
    plan = s.plan
    was_flying = s.behaviour == "flying"
    if "behaviour" in a:
        allowed = {"larva": {"feeding", "perched"}, "tadpole": {"swimming"}}.get(s.stage, _BEHAVIOURS_OF[plan])
        if a["behaviour"] in allowed:
            s.behaviour = a["behaviour"]
        else:
            ignored.append(str(a["behaviour"]))
    if "item" in a and plan != "flower":
        s.item = str(a["item"])
        if s.behaviour not in ("carrying", "feeding"):
            s.behaviour = "carrying" if "carrying" in _BEHAVIOURS_OF[plan] else "feeding"
    elif s.behaviour not in ("carrying", "feeding"):
        s.item = ""
    elif not s.item:
        s.item = "leaf"
    if "view" in a:
        if plan == "flower" and a["view"] == "underside":
            ignored.append("underside")
        else:
            s.view = str(a["view"])
    if "pose" in a:
        pose = a["pose"]
        ok = {"bird": ("spread", "folded"), "moth": ("spread", "folded"), "beetle": ("spread", "folded"),
              "frog": ("sitting", "leaping"), "flower": ("open", "bud")}[plan]
        if s.stage == "larva":
            ok = ("stretched", "curled")
        if pose in ok:
            s.pose = str(pose)
        else:
            ignored.append(str(pose))
    if s.behaviour == "flying":
        s.pose = "spread"
    elif was_flying and "pose" not in a and plan != "frog":
        s.pose = "folded"
    if plan == "moth" and s.stage == "adult" and s.view == "side":
        s.pose = "folded"
    if "habitat" in a:
        s.habitat = str(a["habitat"])
    elif s.behaviour == "swimming":
        s.habitat = "water"
    elif s.behaviour == "flying" and s.habitat not in ("sky", "water"):
        s.habitat = "sky"
    if "count" in a:
        s.count = int(a["count"])


class FieldGuideGenerator:
    """ImageGenerator backend for the synthetic world (a stand-in: it draws, it does not imagine)."""

    model_id = "fieldguide-painter@v1"
    is_standin = True

    @classmethod
    def from_settings(cls, settings=None, spec: str = "fieldguide") -> "FieldGuideGenerator":
        return cls()

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage:
        scene, ignored = scene_from_text(prompt, seed)
        img = render(scene)
        if size != SIZE:
            img = img.resize((int(size), int(size)), Image.BILINEAR)
        seen: list[str] = []
        for w in ignored:
            if w not in seen:
                seen.append(w)
        return GeneratedImage(image=img, prompt=prompt, seed=seed, model_id=self.model_id, ignored_words=seen)

    def generate_from_references(self, prompt: str, references: list[ReferenceImage], *, seed: int,
                                 size: int = 224) -> GeneratedImage:
        """Compose from reference photos: draw the scene the request and every reference's instruction (the
        parts that photo contributes) describe, and inset the references along the bottom edge, so the picture
        shows what it was composed from. Words the painter cannot draw are listed as ignored."""
        text = "; ".join([prompt.strip()] + [r.instruction.strip() for r in references if r.instruction.strip()])
        out = self.generate(text, seed=seed, size=size)
        img = out.image.copy()
        if references:
            side = max(1, img.width // max(4, len(references)))
            for i, ref in enumerate(references):
                img.paste(ref.image.convert("RGB").resize((side, side), Image.BILINEAR), (i * side, img.height - side))
        return GeneratedImage(image=img, prompt=text, seed=seed, model_id=self.model_id,
                              ignored_words=out.ignored_words)
