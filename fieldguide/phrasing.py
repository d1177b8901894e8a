"""Short sentences in the world's language: yes/no questions about one organism ("Is this a Gold-crested
Tuftling?", "Is its crest yellow?"), noun phrases for decompositions ("Slate Reedpiper with a black crest"),
picture descriptions and field-guide notes. Every sentence is built from the lexicon; the judge, the painter
and the caption matcher read these sentences back into the same facts."""
from __future__ import annotations

import re

from fieldguide.facts import PLANS_OF_STAGE
from fieldguide.reading import plural_word
from fieldguide.request import PLURAL, Attr, Request, Target
from fieldguide.scene import Scene, visible_parts
from fieldguide.species import LOOKALIKE_PAIRS, PART_PHRASE, SPECIES, Species

_PLURAL_PARTS = {"wings", "legs", "petals", "markings", "leaves", "elytra", "larva stripes"}
_PART_NOUN = {"underside": "underwings", "elytra": "wing cases", "larva stripes": "stripes", "larva body": "body",
              "centre": "centre"}
_VIEW = {"side": "seen from the side", "top": "seen from above", "underside": "seen from below"}
_HABITAT = {"water": "by the water", "grass": "in grass", "sky": "against the sky", "bark": "on tree bark",
            "sand": "on sand"}
_POSE_PHRASE = {"spread": "with wings spread", "folded": "with folded wings", "open": "in full bloom",
                "bud": "in bud", "sitting": "sitting", "leaping": "leaping", "stretched": "stretched out",
                "curled": "curled up"}
_ITEM = {"twig": "a twig", "berry": "a berry", "leaf": "a leaf", "seed": "a seed", "fly": "a fly",
         "nectar": "nectar"}


def a(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def _behaviour_phrase(value: str, item: str) -> str:
    if value == "carrying":
        return f"carrying {_ITEM.get(item, 'something')}"
    if value == "feeding" and item:
        return "catching a fly" if item == "fly" else f"feeding on {_ITEM[item]}"
    return {"perched": "perched", "flying": "flying", "feeding": "feeding", "swimming": "swimming"}.get(value, value)


def modifier(attr: Attr, plan: str | None = None, behaviour: str = "") -> str:
    """The attribute as words that follow the organism's name: 'with a black crest', 'in bud', 'flying'
    (`behaviour` picks the fitting words for water: 'over water' in flight, 'in water' when swimming)."""
    if attr.kind == "colour":
        return "with " + coloured(attr.part, str(attr.value))
    if attr.kind == "part":
        noun = _PART_NOUN.get(attr.part, PART_PHRASE.get(attr.part, attr.part))
        return f"showing its {noun}"
    if attr.kind == "view":
        return _VIEW[str(attr.value)]
    if attr.kind == "pose":
        if plan == "beetle" and attr.value in ("spread", "folded"):
            return "with its wing cases open" if attr.value == "spread" else "with its wing cases closed"
        return _POSE_PHRASE.get(str(attr.value), str(attr.value))
    if attr.kind == "behaviour":
        return _behaviour_phrase(str(attr.value), attr.item)
    if attr.kind == "habitat":
        if attr.value == "water" and behaviour in ("flying", "swimming"):
            return "over water" if behaviour == "flying" else "in water"
        return _HABITAT[str(attr.value)]
    if attr.kind == "count":
        return "in a pair" if attr.value == 2 else "alone"
    return str(attr.value)


def entity(t: Target, article: bool = False) -> str:
    """'Slate Reedpiper', 'two birds', 'a caterpillar' (with an article when asked for)."""
    if t.plural:
        return f"{t.count_word or 'two'} {plural(t.noun)}"
    if t.named_plural:
        return plural(t.noun)
    return a(t.noun) if article else t.noun


# The nouns a description may name its organism with: noun -> (singular, body plan; None for a life stage).
_SUBJECT_NOUNS = {"bird": ("bird", "bird"), "birds": ("bird", "bird"), "moth": ("moth", "moth"),
                  "moths": ("moth", "moth"), "butterfly": ("butterfly", "moth"), "butterflies": ("butterfly", "moth"),
                  "frog": ("frog", "frog"), "frogs": ("frog", "frog"), "beetle": ("beetle", "beetle"),
                  "beetles": ("beetle", "beetle"), "bug": ("bug", "beetle"), "bugs": ("bug", "beetle"),
                  "flower": ("flower", "flower"), "flowers": ("flower", "flower"), "plant": ("plant", "flower"),
                  "plants": ("plant", "flower"), "caterpillar": ("caterpillar", "moth"),
                  "caterpillars": ("caterpillar", "moth"), "larva": ("caterpillar", "moth"),
                  "larvae": ("caterpillar", "moth"), "tadpole": ("tadpole", "frog"), "tadpoles": ("tadpole", "frog")}
_SUBJECT = re.compile(r"\b(?:(a|an|one|the|two)\s+)?(" + "|".join(sorted(_SUBJECT_NOUNS, key=len, reverse=True))
                      + r")\b", re.IGNORECASE)
_YOUNG = {"larva": "caterpillar", "tadpole": "tadpole"}


def plural(noun: str) -> str:
    """'birds', 'butterflies', 'moth caterpillars'."""
    head, _, last = noun.rpartition(" ")
    last = PLURAL.get(last, last if last.endswith("s") else plural_word(last))
    return f"{head} {last}".strip()


def renamed_subject(text: str, species: Species | None = None, count: int | None = None,
                    stage: str | None = None) -> str | None:
    """`text` with the noun that names its organism said anew, the rest of its words kept: 'a bird perched on a
    branch' -> 'a Slate Reedpiper perched on a branch' (species), 'two birds perched on a branch' (count 2), 'a
    moth caterpillar on bark' (stage). None when `text` names no organism by a plain noun, when the new name does
    not fit it (a moth species for 'a bird'), or when it would need a species name in the plural, which the
    world's readers (and the encoder) do not know."""
    m = _SUBJECT.search(text)
    if m is None:
        return None
    article, word = (m.group(1) or "").lower(), m.group(2).lower()
    noun, plan = _SUBJECT_NOUNS[word]
    young = noun in ("caterpillar", "tadpole")
    if (species is not None and species.plan != plan) or (stage in _YOUNG and plan != PLANS_OF_STAGE[stage]):
        return None
    if species is not None:
        noun = f"{species.common_name} {noun}" if young else species.common_name
    if stage in _YOUNG and not young:
        noun = f"{noun} {_YOUNG[stage]}"
    many = count == 2 or (count is None and (article == "two" or word.endswith(("s", "ae"))))
    if many and species is not None:
        return None
    if many:
        phrase = ("the " if article == "the" else "two " if article else "") + plural(noun)
    else:
        phrase = a(noun) if article in ("a", "an") else f"{article} {noun}".strip()
    if m.group(0)[:1].isupper():
        phrase = phrase[:1].upper() + phrase[1:]
    return text[:m.start()] + phrase + text[m.end():]


def part_with(t: Target, attr: Attr) -> str:
    """One decomposition part: the organism with exactly one of its attributes."""
    return f"{entity(t)} {modifier(attr, t.plan, behaviour_of(t))}"


def behaviour_of(t: Target | None) -> str:
    return next((str(x.value) for x in t.attrs if x.kind == "behaviour"), "") if t else ""


def identity_question(t: Target) -> str:
    """'Is this a Slate Reedpiper?'; in the plural when the request speaks of more than one ('Are these Cobalt
    Pondhoppers?')."""
    if t.many:
        return f"Are these {plural(t.noun)}?"
    return f"Is this {a(t.noun)}?"


def count_question(t: Target) -> str:
    """The question about how many there are, in the request's own word for more than one ('Are there several
    of them?'), else 'Are there two of them?' / 'Is it alone?'."""
    if t.plural and t.count_word:
        return f"Are there {t.count_word} of them?"
    return attr_question(Attr("count", t.count))


def identity_with(t: Target, attr: Attr) -> str:
    """One question naming the organism once with one of its attributes: 'Is this a Snowcup Bellwort in bud?',
    'Is this a Slate Reedpiper in flight?', 'Is this a feeding Emerald Rindbeetle?'."""
    if t.many:
        these = f"Are these {plural(t.noun)}"
        if attr.kind == "behaviour" and not attr.item:
            tail = {"perched": "on a branch", "flying": "in flight"}.get(str(attr.value), str(attr.value))
            return f"{these} {tail}?"
        return f"{these} {modifier(attr, t.plan, behaviour_of(t))}?"
    if attr.kind == "behaviour" and not attr.item:
        tail = {"perched": "on a branch", "flying": "in flight"}.get(str(attr.value))
        if tail is None:
            return f"Is this {a(f'{attr.value} {t.noun}')}?"
        return f"Is this {a(t.noun)} {tail}?"
    return f"Is this {a(t.noun)} {modifier(attr, t.plan, behaviour_of(t))}?"


def _be(plural: bool) -> str:
    return "Are" if plural else "Is"


def attr_question(attr: Attr, t: Target | None = None) -> str:
    """A yes/no question about one attribute of the organism in view ('it'; 'they' for a pair)."""
    plural = bool(t and t.many)
    it, its = ("they", "their") if plural else ("it", "its")
    plan = t.plan if t else None
    if attr.kind == "colour":
        if attr.part == "larva stripes":
            return f"Does the caterpillar have {attr.value} stripes?"
        if attr.part == "larva body":
            return f"Does the caterpillar have {a(str(attr.value) + ' body')}?"
        if attr.part == "underside":
            return f"Is the underside of {its} wings {attr.value}?"
        noun = _PART_NOUN.get(attr.part, PART_PHRASE.get(attr.part, attr.part))
        return f"{_be(attr.part in _PLURAL_PARTS)} {its} {noun} {attr.value}?"
    if attr.kind == "part":
        if attr.part.startswith("larva "):
            return f"Can you see {'stripes on' if attr.part.endswith('s') else 'the body of'} a caterpillar?"
        if attr.part == "underside":
            return f"Is the underside of {its} wings visible?"
        noun = _PART_NOUN.get(attr.part, PART_PHRASE.get(attr.part, attr.part))
        return f"{_be(attr.part in _PLURAL_PARTS)} {its} {noun} visible?"
    if attr.kind == "pose":
        if attr.value in ("spread", "folded"):
            noun = "wing cases" if plan == "beetle" else "wings"
            state = ("open" if attr.value == "spread" else "closed") if plan == "beetle" else attr.value
            return f"Are {its} {noun} {state}?"
        return f"{_be(plural)} {it} {_POSE_PHRASE[str(attr.value)]}?"
    if attr.kind == "count":
        return "Are there two of them?" if attr.value == 2 else "Is it alone?"
    if attr.kind == "stage":
        return f"{_be(plural)} {it} {a({'larva': 'caterpillar', 'tadpole': 'tadpole'}.get(str(attr.value), 'adult'))}?"
    return f"{_be(plural)} {it} {modifier(attr, plan, behaviour_of(t))}?"


def species_fact_question(sp: Species) -> str:
    return f"Is this {a(sp.common_name)}?"


def lookalike(sp: Species) -> tuple[Species, str] | None:
    """The species' look-alike and the part that tells them apart, if it has one."""
    for x, y, part in LOOKALIKE_PAIRS:
        if sp.scientific_name in (x, y):
            other = y if sp.scientific_name == x else x
            return next(s for s in SPECIES if s.scientific_name == other), part
    return None


def view_showing(plan: str, part: str) -> str:
    """Words for the view in which `part` can be seen ('seen from the side'); '' when any view shows it."""
    if part.startswith("larva "):
        return ""
    found = []
    for view in ("side", "top", "underside"):
        s = Scene(plan=plan, colours={}, view=view, pose="open" if plan == "flower" else "folded")
        if part in visible_parts(s):
            found.append(view)
    return "" if len(found) == 3 or not found else _VIEW[found[0]]


def known_colour(t: Target, part: str) -> str | None:
    if t.species is None:
        return None
    if part.startswith("larva "):
        return t.species.larva.get(part.split()[1])
    return t.species.colours.get(part)


def picture_description(t: Target, part: str = "") -> str:
    """A picture description of one organism for the painter: 'a Gold-crested Tuftling seen from the side
    showing its crest'."""
    bits = [entity(t, article=True)]
    if part:
        view = view_showing(t.plan or "bird", part)
        if view:
            bits.append(view)
        if t.plan == "flower" and part == "centre":
            bits.append("in full bloom")
        bits.append(modifier(Attr("part", "", part), t.plan))
        return " ".join(bits)
    order = ("behaviour", "pose", "part", "view", "habitat")
    head = [modifier(x, t.plan, behaviour_of(t)) for k in order for x in t.attrs if x.kind == k]
    colours = [modifier(x, t.plan) for x in t.attrs if x.kind == "colour"]
    if colours:
        head.append("with " + " and ".join(c[len("with "):] for c in colours))
    return " ".join(bits[:1] + head[:1]) + "".join(", " + h for h in head[1:])


def coloured(part: str, colour: str) -> str:
    """'a yellow crest', 'blue wings', 'red underwings'."""
    noun = _PART_NOUN.get(part, PART_PHRASE.get(part, part))
    return f"{colour} {noun}" if part in _PLURAL_PARTS or part == "underside" else a(f"{colour} {noun}")


def field_note(sp: Species) -> str:
    """Two or three sentences a field guide would print about a species."""
    parts = [coloured(p, c) for p, c in sp.colours.items()]
    listing = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    note = f"The {sp.common_name} ({sp.scientific_name}) is {a(sp.plan)} with {listing}."
    pair = lookalike(sp)
    if pair:
        other, part = pair
        where = view_showing(sp.plan, part)
        note += (f" It looks like the {other.common_name}, which has {coloured(part, other.colours[part])}; only "
                 f"the {PART_PHRASE[part]} tells them apart" + (f", and it shows only when {where}." if where else "."))
    if sp.larva:
        note += f" Its caterpillar is {sp.larva['body']} with {sp.larva['stripes']} stripes."
    return note


def describe_request(req: Request) -> str:
    """One line saying what a matching photo shows."""
    if req.kind in ("feature", "comparison"):
        names = " or ".join(a(t.noun) for t in req.targets)
        noun = _PART_NOUN.get(req.part, PART_PHRASE.get(req.part, req.part))
        return f"A matching photo shows {names} with its {noun} in view."
    return "A matching photo shows " + "; ".join(picture_description(t) for t in req.targets) + "."
