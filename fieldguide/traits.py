"""What each kind of organism of the field-guide world can have, as data: its parts, and the values of every
attribute a picture of it can show, per body plan and life stage. The dialogue uses it never to ask about what
the named organism cannot have (wings for a frog), with the reason in plain words.
tests/unit/test_dialogue_meaning.py checks this table against the scenes the world samples.

It also tells when two questions ask the same thing about what is named: when, over a fixed sample of the
world's scenes of it, they are true of the same scenes or of exactly the opposite ones ("Is it alone?" and
"Are there two of them?"), which also catches what the world ties together (a feeding beetle always eats a
leaf, so "Is it feeding?" and "Is it feeding on a leaf?" are one question)."""
from __future__ import annotations

import functools
import hashlib
import random

from core.contracts.world import answer_word
from fieldguide.facts import question_facts, scene_facts, text_facts
from fieldguide.scene import DEFAULT_COLOURS, HABITATS, LARVA_DEFAULT, VIEWS, sample_scene
from fieldguide.species import PART_PHRASE, PLAN_PARTS, SPECIES, Species, by_name

LARVA_PARTS = ("larva body", "larva stripes")
_ALL = {"habitat": HABITATS, "count": (1, 2)}
# (body plan, life stage) -> attribute -> the values its pictures can show
CAN_HAVE: dict[tuple[str, str], dict[str, tuple]] = {
    ("bird", "adult"): {"view": VIEWS, "pose": ("spread", "folded"),
                        "behaviour": ("perched", "flying", "feeding", "carrying"), "item": ("berry", "twig", "leaf")},
    ("moth", "adult"): {"view": VIEWS, "pose": ("spread", "folded"), "behaviour": ("perched", "flying", "feeding"),
                        "item": ("nectar",)},
    ("moth", "larva"): {"view": ("side", "top"), "pose": ("stretched", "curled"), "behaviour": ("perched", "feeding"),
                        "item": ("nectar",)},
    ("frog", "adult"): {"view": VIEWS, "pose": ("sitting", "leaping"), "behaviour": ("perched", "feeding", "swimming"),
                        "item": ("fly",)},
    ("frog", "tadpole"): {"view": ("side", "top"), "pose": ("swimming",), "behaviour": ("swimming",), "item": ()},
    ("beetle", "adult"): {"view": VIEWS, "pose": ("spread", "folded"),
                          "behaviour": ("perched", "flying", "carrying", "feeding"), "item": ("leaf", "seed")},
    ("flower", "adult"): {"view": ("side", "top"), "pose": ("open", "bud"), "behaviour": ("none",), "item": ()},
}
ATTRIBUTES = ("stage", "view", "pose", "behaviour", "item", "habitat", "count")
PLAN_PLURAL = {"bird": "birds", "moth": "moths", "frog": "frogs", "beetle": "beetles", "flower": "flowers"}
YOUNG_SAY = {"larva": "caterpillars", "tadpole": "tadpoles"}


def kinds(plans: set[str], stage: str = "") -> list[tuple[str, str]]:
    """The (plan, stage) pairs in play: those of the named plans (every plan when none is named), of the named
    stage when one is named."""
    plans = plans or {p for p, _ in CAN_HAVE}
    return [(p, s) for p, s in CAN_HAVE if p in plans and (not stage or s == stage)]


def can_have(kind: tuple[str, str], key: str) -> tuple:
    if key == "stage":
        return (kind[1],)
    return {**_ALL, **CAN_HAVE[kind]}.get(key, ())


def parts_of(kind: tuple[str, str]) -> tuple[str, ...]:
    plan, stage = kind
    return {"adult": PLAN_PARTS[plan], "larva": LARVA_PARTS, "tadpole": ()}[stage]


def colours_of(kind: tuple[str, str], part: str, species: Species | None = None) -> set[str]:
    """The colours `part` can have on an organism of this kind (of `species` when one is named)."""
    plan = kind[0]
    pool = [species] if species is not None else [s for s in SPECIES if s.plan == plan]
    if part.startswith("larva "):
        key = part.split()[1]
        return {s.larva[key] for s in pool if s.larva.get(key)} | {LARVA_DEFAULT[key]}
    found = {s.colours[part] for s in pool if part in s.colours}
    return found if species is not None else found | {DEFAULT_COLOURS[plan][part]} if part in \
        DEFAULT_COLOURS.get(plan, {}) else found


def named(caption: str, turns) -> tuple[set[str], str, Species | None]:
    """The body plans the description and the yes answers name (empty: none named), the life stage they name
    ('' for none or several) and the one species they name, if exactly one."""
    facts = set(text_facts(caption, defaults=False))
    for q, ans in turns:
        word = answer_word(ans)
        if word == "yes":
            facts |= question_facts(q)
        elif word == "text":
            facts |= text_facts(ans, defaults=False)
    plans = {f.partition("=")[2] for f in facts if f.startswith("plan=")}
    if not plans:  # a caterpillar is a moth's young, a tadpole a frog's
        young = {"stage=larva": "moth", "stage=tadpole": "frog"}
        plans = {young[f] for f in facts if f in young}
    species = {f.partition("=")[2] for f in facts if f.startswith("species=") and " or " not in f}
    stages = {f.partition("=")[2] for f in facts if f.startswith("stage=")}
    return (plans & {p for p, _ in CAN_HAVE}, next(iter(stages)) if len(stages) == 1 else "",
            by_name(next(iter(species))) if len(species) == 1 else None)


def _values(key: str, plans: set[str], stage: str, species: Species | None) -> set:
    """Every value attribute `key` can take for what is named (everything in the world when nothing is)."""
    ks = kinds(plans, stage)
    if key == "plan":
        return {p for p, _ in ks}
    if key == "species":
        return {species.scientific_name} if species is not None else \
            {s.scientific_name for s in SPECIES if s.plan in {p for p, _ in ks}}
    if key.startswith("colour:"):
        part = key[7:]
        return set().union(*(colours_of(k, part, species) for k in ks if part in parts_of(k)))
    return set().union(*(can_have(k, key) for k in ks))


def _value(key: str, value: str):
    return int(value) if key == "count" and value.isdigit() else value


def _said(fact: str) -> str:
    """A fact in a few plain words ('wings', 'in bud', 'flying')."""
    from fieldguide.lexicon import SAY

    key, _, value = fact.partition("=")
    if key.startswith(("part:", "colour:")):
        part = key.split(":", 1)[1]
        return PART_PHRASE.get(part, part)
    if key == "species":
        return by_name(value).common_name
    said = SAY.get(key, {}).get(_value(key, value))
    return said[0] if said else value


def impossible(question: str, caption: str, turns) -> str | None:
    """Why `question` cannot apply to what the description and the yes answers name, or is settled by the
    name, in plain words ('frogs have no wings'; 'a Slate Reedpiper's wings are black'), or None (possible,
    or nothing named)."""
    plans, stage, species = named(caption, turns)
    if not plans and not stage:
        return None
    ks = kinds(plans, stage)
    who = " or ".join(sorted({YOUNG_SAY.get(stage) or PLAN_PLURAL[p] for p, _ in ks}))
    for fact in sorted(question_facts(question)):
        key, _, value = fact.partition("=")
        if key.startswith(("part:", "colour:")):
            part = key.split(":", 1)[1]
            if part == "any":
                continue
            if not any(part in parts_of(k) for k in ks):
                return f"{who} have no {PART_PHRASE.get(part, part)}"
            if key.startswith("colour:") and species is not None and part in species.colours and stage != "larva":
                verb = "are" if part.endswith("s") else "is"
                said = f"a {species.common_name}'s {PART_PHRASE.get(part, part)} {verb} {species.colours[part]}"
                return said if species.colours[part] != value else f"the name says it: {said}"
            continue
        if not value or " or " in value or key not in ("species", "plan", *ATTRIBUTES):
            continue
        if _value(key, value) not in _values(key, plans, stage, species if key == "species" else None):
            if key == "species":
                return f"it is named as {'a ' + species.common_name if species else 'one of the ' + who}, not " \
                       f"as a {_said(fact)}"
            if key == "plan":
                return f"it is named as one of the {who}, not the {PLAN_PLURAL.get(value, value)}"
            if key == "item":
                return f"{who} never carry or eat {_said(fact)}"
            if key == "stage":
                return f"{who} have no {_said(fact)} stage"
            return f"{who} are never {_said(fact)}"
    return None


MEANING_SAMPLE = 150  # scenes per species the meaning of a question is read over (fixed seed)


@functools.lru_cache(maxsize=1)
def _scenes() -> tuple[tuple[str, str, str, frozenset[str]], ...]:
    """(species, plan, stage, facts) of a fixed sample of the world's scenes: what its pictures can show,
    together (a feeding beetle always eats a leaf; a tadpole always swims)."""
    out = []
    for sp in SPECIES:
        rng = random.Random(f"meaning:{sp.scientific_name}")
        for _ in range(MEANING_SAMPLE):
            scene = sample_scene(sp, rng)
            out.append((sp.scientific_name, sp.plan, scene.stage, frozenset(scene_facts(sp, scene))))
    return tuple(out)


def _holds(fact: str, facts: frozenset[str]) -> bool:
    key, _, value = fact.partition("=")
    return any(f"{key}={v}" in facts for v in value.split(" or ")) if " or " in value else fact in facts


def meaning_key(question: str, caption: str, turns) -> str | None:
    """What `question` asks about what is named, as a key two questions share when they ask the same thing:
    over the world's pictures of what the description and the yes answers name, they are true of the same
    pictures, or of exactly the opposite ones ("Is it alone?" and "Are there two of them?"; "Is it feeding?"
    and "Is it feeding on a leaf?" about a beetle, which eats nothing else). None outside the world's terms."""
    facts = question_facts(question)
    if not facts:
        return None
    plans, stage, species = named(caption, turns)
    asked = [f for f in facts if not f.startswith("part:")] or list(facts)
    truth = [all(_holds(f, fs) for f in asked) for sp, plan, st, fs in _scenes()
             if (species is None or sp == species.scientific_name) and (not plans or plan in plans)
             and (not stage or st == stage)]
    if not truth:
        return "|".join(sorted(asked))
    if truth[0]:  # a question and its opposite ask the same thing
        truth = [not t for t in truth]
    return "scenes:" + hashlib.blake2b(bytes(truth), digest_size=8).hexdigest()
