"""One picture of the field-guide world as data: what is shown (species, stage, pose, view, behaviour, habitat,
count) plus nuisance (position, scale, lighting, noise). Sampling, part visibility and the naturalist's note."""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

from fieldguide.species import PART_PHRASE, PLAN_NOUN, Species

VIEWS = ("side", "top", "underside")
HABITATS = ("water", "grass", "sky", "bark", "sand")
BEHAVIOURS = ("perched", "flying", "feeding", "carrying", "swimming", "none")
POSES = ("spread", "folded", "open", "bud", "sitting", "leaping", "stretched", "curled")
STAGES = ("adult", "larva", "tadpole")
DEFAULT_COLOURS = {
    "bird": {"crest": "grey", "back": "brown", "wings": "brown", "belly": "white", "beak": "black"},
    "moth": {"wings": "brown", "underside": "grey", "body": "grey"},
    "frog": {"back": "green", "belly": "white", "markings": "black"},
    "beetle": {"elytra": "black", "markings": "black", "legs": "black"},
    "flower": {"petals": "white", "centre": "yellow", "leaves": "green"},
}
LARVA_DEFAULT = {"body": "green", "stripes": "yellow"}


@dataclass
class Scene:
    plan: str
    colours: dict[str, str]
    species: str = ""  # scientific name, empty for a generic drawing
    marking: str = "plain"
    larva: dict[str, str] = field(default_factory=lambda: dict(LARVA_DEFAULT))
    stage: str = "adult"
    pose: str = "folded"
    view: str = "side"
    behaviour: str = "perched"
    item: str = ""  # what is carried or eaten
    habitat: str = "grass"
    count: int = 1
    dx: float = 0.0
    dy: float = 0.0
    scale: float = 1.0
    light: float = 1.0
    noise: float = 0.0
    seed: int = 0

    def attributes(self) -> dict:
        """Ground truth as plain JSON-able data (visible parts included)."""
        d = asdict(self)
        d["visible_parts"] = visible_parts(self)
        return d


def scene_for(sp: Species | None, plan: str) -> Scene:
    """A neutral scene of a species (or a generic one of a body plan) before sampling."""
    if sp is None:
        return Scene(plan=plan, colours=dict(DEFAULT_COLOURS[plan]))
    return Scene(plan=sp.plan, colours=dict(sp.colours), species=sp.scientific_name, marking=sp.marking,
                 larva=dict(sp.larva or LARVA_DEFAULT))


def sample_scene(sp: Species, rng: random.Random) -> Scene:
    """Draw the per-picture attributes of one picture of `sp` (deterministic for a seeded `rng`)."""
    s = scene_for(sp, sp.plan)
    p = sp.plan
    s.stage = "adult"
    if p == "moth" and rng.random() < 0.3:
        s.stage = "larva"
    if p == "frog" and rng.random() < 0.25:
        s.stage = "tadpole"
    if p == "flower":
        s.view, s.pose, s.behaviour = rng.choice(("side", "top")), rng.choice(("open", "open", "bud")), "none"
    elif s.stage == "larva":
        s.view, s.pose = rng.choice(("side", "top")), rng.choice(("stretched", "curled"))
        s.behaviour = rng.choice(("feeding", "perched"))
    elif s.stage == "tadpole":
        s.view, s.pose, s.behaviour = rng.choice(("side", "top")), "swimming", "swimming"
    else:
        s.view = rng.choice(VIEWS)
        choices = {"bird": ("perched", "flying", "feeding", "carrying"), "moth": ("perched", "flying", "feeding"),
                   "frog": ("perched", "feeding", "swimming"),
                   "beetle": ("perched", "flying", "carrying", "feeding")}[p]
        s.behaviour = rng.choice(choices)
        if p == "frog":
            s.pose = "leaping" if rng.random() < 0.35 else "sitting"
        elif s.behaviour == "flying":
            s.pose = "spread"
        elif p == "moth":
            s.pose = "folded" if s.view == "side" else rng.choice(("spread", "spread", "folded"))
        else:
            s.pose = "spread" if rng.random() < 0.3 else "folded"
    s.item = {"feeding": {"bird": "berry", "moth": "nectar", "frog": "fly", "beetle": "leaf"}.get(p, "leaf"),
              "carrying": rng.choice(("twig", "berry", "leaf")) if p == "bird" else rng.choice(("seed", "leaf")),
              }.get(s.behaviour, "")
    if s.behaviour in ("swimming",):
        s.habitat = "water"
    elif s.behaviour == "flying":
        s.habitat = rng.choice(("sky", "sky", "water"))
    else:
        s.habitat = rng.choice(HABITATS)
    s.count = 2 if rng.random() < 0.25 else 1
    s.dx, s.dy = rng.uniform(-18, 18), rng.uniform(-14, 14)
    s.scale, s.light = rng.uniform(0.75, 1.12), rng.uniform(0.75, 1.2)
    s.noise, s.seed = rng.uniform(0.0, 10.0), rng.randrange(1 << 30)
    return s


def visible_parts(s: Scene) -> list[str]:
    """The parts whose colour can be read from the picture (this rule is also how the renderer draws)."""
    if s.stage == "larva":
        return ["larva body", "larva stripes"]
    if s.stage == "tadpole":
        return []
    v = s.view
    rules = {
        "bird": {"side": ["crest", "back", "wings", "beak"], "top": ["back", "wings"], "underside": ["belly", "wings"]},
        "moth": {"side": ["underside", "body"], "top": ["wings", "body"], "underside": ["underside", "body"]},
        "frog": {"side": ["back", "markings"], "top": ["back", "markings"], "underside": ["belly"]},
        "beetle": {"side": ["elytra", "legs"], "top": ["elytra", "markings"], "underside": ["legs"]},
    }
    if s.plan == "flower":
        if s.pose == "bud":
            return ["leaves"]
        return ["petals", "centre", "leaves"] if v == "top" else ["petals", "leaves"]
    return list(rules[s.plan][v])


_VIEW_WORDS = {"side": "seen from the side", "top": "seen from above, top view",
               "underside": "seen from below, underside view"}
_BEHAVIOUR_WORDS = {"perched": "perched on a branch", "flying": "flying", "swimming": "swimming",
                    "feeding": "feeding", "carrying": "carrying", "none": ""}
_POSE_WORDS = {"spread": "wings spread", "folded": "wings folded", "open": "flower open", "bud": "in bud",
               "sitting": "sitting", "leaping": "leaping", "stretched": "stretched out", "curled": "curled up",
               "swimming": ""}
_HABITAT_WORDS = {"water": "over water", "grass": "in grass", "sky": "against the sky", "bark": "on tree bark",
                  "sand": "on sand"}


def subject_words(s: Scene, common: str = "") -> str:
    """'two Gold-crested Tuftling larvae' style noun phrase."""
    noun = common or PLAN_NOUN[s.plan]
    if s.stage == "larva":
        noun = f"{noun} caterpillar larva"
    elif s.stage == "tadpole":
        noun = f"{noun} tadpole"
    return ("two " if s.count == 2 else "one ") + noun


def part_clauses(s: Scene) -> list[str]:
    """'red crest' style phrases for every visible part."""
    out = []
    for part in visible_parts(s):
        if part.startswith("larva "):
            key = part.split()[1]
            out.append(f"{s.larva[key]} caterpillar {key}")
        else:
            out.append(f"{s.colours[part]} {PART_PHRASE[part]}")
    return out


def caption(s: Scene, sp: Species | None, number: int) -> str:
    """A short naturalist's note in our own words: what, how it sits, where, and the colours one can see."""
    who = subject_words(s, sp.common_name if sp else "")
    if sp is not None:
        who += f" ({sp.scientific_name})"
    doing = _BEHAVIOUR_WORDS[s.behaviour]
    if s.item:
        doing += " on nectar at a flower" if s.item == "nectar" else f" on a {s.item}" if s.behaviour == "feeding" \
            else f" a {s.item}"
    bits = [b for b in (doing, _POSE_WORDS[s.pose], _VIEW_WORDS[s.view], _HABITAT_WORDS[s.habitat]) if b]
    parts = part_clauses(s)
    note = f"Note {number}: {who}, " + ", ".join(bits) + "."
    if parts:
        note += " Visible: " + ", ".join(parts) + "."
    return note
