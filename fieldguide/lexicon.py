"""The world's vocabulary: how each attribute value may be said (used to vary training captions) and how free
text is read back into attribute values (used by the painter and the judge)."""
from __future__ import annotations

import random
import re

from fieldguide.scene import Scene, visible_parts
from fieldguide.species import COLOURS, PART_PHRASE, PLAN_NOUN, SPECIES, Species

WORD_RE = re.compile(r"[a-z]+")
STOPWORDS = frozenset("a an the of in on at to and with its it is are by from as this that their over seen view "
                      "showing photo picture".split())

SAY = {
    "view": {"side": ["seen from the side", "side view", "in profile"], "top": ["seen from above", "top view"],
             "underside": ["seen from below", "underside view", "view from below"]},
    "pose": {"spread": ["wings spread", "wings open", "wings outstretched"], "folded": ["wings folded", "wings closed"],
             "open": ["open flower", "in full bloom", "flower open"], "bud": ["in bud", "closed bud"],
             "sitting": ["sitting"], "leaping": ["leaping", "jumping"], "stretched": ["stretched out"],
             "curled": ["curled up", "curled"], "swimming": ["swimming"]},
    "behaviour": {"perched": ["perched on a branch", "perched", "resting"], "flying": ["flying", "in flight"],
                  "feeding": ["feeding", "eating"], "carrying": ["carrying", "holding"],
                  "swimming": ["swimming in water", "swimming"], "none": ["growing"]},
    "habitat": {"water": ["over water", "by the water", "pond water"], "grass": ["in grass", "grassy meadow"],
                "sky": ["against the sky", "sky"], "bark": ["on tree bark", "tree bark"],
                "sand": ["on sand", "sandy beach"]},
    "count": {1: ["one", "single", "alone"], 2: ["two", "a pair", "two together side by side"]},
    "item": {"twig": ["a twig"], "berry": ["a berry"], "leaf": ["a leaf", "a green leaf"], "seed": ["a seed"],
             "fly": ["a fly", "catching a fly"], "nectar": ["nectar at a flower", "nectar"], "": [""]},
    "stage": {"adult": ["adult"], "larva": ["caterpillar larva", "caterpillar", "larva", "larvae"],
              "tadpole": ["tadpole", "young tadpole"]},
}
PLAN_SAY = {"bird": ["bird"], "moth": ["moth", "butterfly"], "frog": ["frog"], "beetle": ["beetle", "bug"],
            "flower": ["flower", "plant", "bloom"]}


def tokens(text: str) -> list[str]:
    """Lower-case words of `text` (hyphens and punctuation split words)."""
    return WORD_RE.findall(text.lower())


def training_caption(s: Scene, sp: Species | None, rng: random.Random) -> str:
    """A random rewording of what scene `s` shows (parts, names and context in random subsets)."""
    bits: list[str] = []
    if sp is not None and rng.random() < 0.9:
        bits.append(rng.choice([sp.common_name, sp.scientific_name, f"{sp.common_name} {sp.scientific_name}"]))
    if rng.random() < 0.7:
        bits.append(rng.choice(PLAN_SAY[s.plan]))
    if s.stage != "adult" or rng.random() < 0.3:
        bits.append(rng.choice(SAY["stage"][s.stage]))
    for key in ("view", "pose", "behaviour", "habitat", "count"):
        if rng.random() < 0.6:
            bits.append(rng.choice(SAY[key][getattr(s, key)]))
    if s.item and rng.random() < 0.8:
        bits.append(rng.choice(SAY["item"][s.item]))
    for part in visible_parts(s):
        if rng.random() < 0.7:
            if part.startswith("larva "):
                key = part.split()[1]
                bits.append(f"{s.larva[key]} caterpillar {key}")
            else:
                phrase = rng.choice(["wing cases", "elytra"]) if part == "elytra" else PART_PHRASE[part]
                bits.append(f"{s.colours[part]} {phrase}")
    rng.shuffle(bits)
    return " ".join(b for b in bits if b) or PLAN_NOUN[s.plan]


def all_training_words() -> set[str]:
    """Every word training captions can use (the encoder's vocabulary)."""
    words: set[str] = set()
    for table in SAY.values():
        for options in table.values():
            for o in options:
                words.update(tokens(o))
    for options in PLAN_SAY.values():
        for o in options:
            words.update(tokens(o))
    for sp in SPECIES:
        words.update(tokens(sp.common_name + " " + sp.scientific_name))
    for phrase in PART_PHRASE.values():
        words.update(tokens(phrase))
    words.update(COLOURS)
    words.update(["elytra", "caterpillar", "body", "stripes"])
    return words


# Reading free text back: word -> (attribute, value). Multi-word cues are matched first.
CUES: list[tuple[str, str, object]] = [
    ("wing cases open", "pose", "spread"), ("wings open", "pose", "spread"), ("wings closed", "pose", "folded"),
    ("underside of the wings", "part", "underside"), ("underside of its wings", "part", "underside"),
    ("underside of their wings", "part", "underside"), ("wing cases", "part", "elytra"),
    ("flower centre", "part", "centre"), ("from below", "view", "underside"), ("from above", "view", "top"),
    ("from the side", "view", "side"), ("in flight", "behaviour", "flying"), ("in bud", "pose", "bud"),
    ("full bloom", "pose", "open"), ("curled up", "pose", "curled"), ("stretched out", "pose", "stretched"),
    ("a pair", "count", 2), ("wings spread", "pose", "spread"), ("spread wings", "pose", "spread"),
    ("wings outstretched", "pose", "spread"), ("open wings", "pose", "spread"), ("wings folded", "pose", "folded"),
    ("folded wings", "pose", "folded"), ("closed wings", "pose", "folded"), ("wing cases closed", "pose", "folded"),
    ("side by side", "count", 2), ("more than one", "count", 2),
]
WORD_CUES: dict[str, tuple[str, object]] = {
    "side": ("view", "side"), "profile": ("view", "side"), "above": ("view", "top"), "top": ("view", "top"),
    "below": ("view", "underside"), "underneath": ("view", "underside"), "underside": ("view", "underside"),
    "branch": ("behaviour", "perched"),
    "spread": ("pose", "spread"), "outstretched": ("pose", "spread"), "folded": ("pose", "folded"),
    "closed": ("pose", "folded"), "open": ("pose", "open"), "bloom": ("pose", "open"), "bud": ("pose", "bud"),
    "sitting": ("pose", "sitting"), "leaping": ("pose", "leaping"), "jumping": ("pose", "leaping"),
    "curled": ("pose", "curled"), "perched": ("behaviour", "perched"), "perching": ("behaviour", "perched"),
    "resting": ("behaviour", "perched"), "flying": ("behaviour", "flying"), "flight": ("behaviour", "flying"),
    "feeding": ("behaviour", "feeding"), "eating": ("behaviour", "feeding"), "catching": ("behaviour", "feeding"),
    "carrying": ("behaviour", "carrying"), "holding": ("behaviour", "carrying"),
    "swimming": ("behaviour", "swimming"),
    "water": ("habitat", "water"), "pond": ("habitat", "water"), "grass": ("habitat", "grass"),
    "meadow": ("habitat", "grass"), "sky": ("habitat", "sky"), "bark": ("habitat", "bark"),
    "tree": ("habitat", "bark"), "sand": ("habitat", "sand"), "beach": ("habitat", "sand"),
    "two": ("count", 2), "pair": ("count", 2), "together": ("count", 2), "couple": ("count", 2),
    # the world draws one organism or two: 'several' and 'multiple' are read as more than one (count 2)
    "several": ("count", 2), "multiple": ("count", 2),
    "single": ("count", 1), "alone": ("count", 1),
    "twig": ("item", "twig"), "berry": ("item", "berry"), "leaf": ("item", "leaf"), "seed": ("item", "seed"),
    "fly": ("item", "fly"), "nectar": ("item", "nectar"),
    "adult": ("stage", "adult"), "caterpillar": ("stage", "larva"), "larva": ("stage", "larva"),
    "larvae": ("stage", "larva"), "caterpillars": ("stage", "larva"), "tadpole": ("stage", "tadpole"),
    "tadpoles": ("stage", "tadpole"),
    "bird": ("plan", "bird"), "birds": ("plan", "bird"), "moth": ("plan", "moth"), "moths": ("plan", "moth"),
    "butterfly": ("plan", "moth"), "butterflies": ("plan", "moth"), "frog": ("plan", "frog"),
    "frogs": ("plan", "frog"), "beetle": ("plan", "beetle"), "beetles": ("plan", "beetle"),
    "bug": ("plan", "beetle"), "bugs": ("plan", "beetle"), "flower": ("plan", "flower"),
    "flowers": ("plan", "flower"), "plant": ("plan", "flower"), "plants": ("plan", "flower"),
}
PART_WORDS = {"crest": "crest", "back": "back", "wings": "wings", "wing": "wings", "belly": "belly",
              "beak": "beak", "body": "body", "markings": "markings", "spots": "markings", "stripes": "markings",
              "elytra": "elytra", "legs": "legs", "petals": "petals", "centre": "centre", "center": "centre",
              "leaves": "leaves", "underwing": "underside",
              "underwings": "underside"}
