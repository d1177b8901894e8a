"""A search request read in the world's terms: what kind of request it is (a feature question, a comparison or
a scene) and, for each organism it names, the attributes it asks for. Used by the offline rules (the LLM
stand-in) to write questions, descriptions and decompositions in the world's own language. Text with words
outside the world's vocabulary is not read (None): the rules then fall back to plain generic wording."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from fieldguide.facts import understood
from fieldguide.lexicon import tokens
from fieldguide.reading import Reading, read_text
from fieldguide.species import Species

_FEATURE = re.compile(r"^(?:what|which)\s+colou?rs?\s+(?:is|are)\s+(?:the\s+)?(?P<part>.+?)\s+(?:of|on)\s+"
                      r"(?:the\s+)?(?P<who>.+)$", re.IGNORECASE)
_COMPARE = re.compile(r"^how\s+(?:do|does)\s+(?:the\s+)?(?P<part>.+?)\s+of\s+(?:the\s+)?(?P<a>.+?)\s+differ\s+from\s+"
                      r"(?:that|those)\s+of\s+(?:the\s+)?(?P<b>.+)$", re.IGNORECASE)
_ENTITY_NOUNS = frozenset("bird birds moth moths butterfly butterflies frog frogs beetle beetles bug bugs flower "
                          "flowers plant plants caterpillar caterpillars larva larvae tadpole tadpoles".split())
_LEADING = frozenset("a an the one two some".split())
COUNT_WORDS = frozenset({"several", "multiple"})  # "more than one" said without a number
PLURAL = {"bird": "birds", "moth": "moths", "frog": "frogs", "beetle": "beetles", "flower": "flowers",
          "caterpillar": "caterpillars", "tadpole": "tadpoles"}


@dataclass(frozen=True)
class Attr:
    """One sought attribute: kind colour (part, value = colour), part (part visible), view, pose, behaviour
    (value, item), habitat, count or stage."""

    kind: str
    value: object = ""
    part: str = ""
    item: str = ""

    @property
    def fact(self) -> str:
        if self.kind == "colour":
            return f"colour:{self.part}={self.value}"
        if self.kind == "part":
            return f"part:{self.part}"
        return f"{self.kind}={self.value}"


@dataclass
class Target:
    """One organism of a request: how it is named and what is asked about it."""

    species: Species | None = None
    plan: str | None = None
    stage: str | None = None  # larva / tadpole / adult when said
    count: int | None = None
    attrs: list[Attr] = field(default_factory=list)
    named_plural: bool = False  # the species was named in the plural ('Cobalt Pondhoppers')
    count_word: str = ""  # the word that said "more than one" when it was not a number ('several')

    @property
    def noun(self) -> str:
        """The name without article: 'Gold-crested Tuftling', 'Tawny Sailwing caterpillar', 'bird', 'tadpole'."""
        stage = {"larva": "caterpillar", "tadpole": "tadpole"}.get(self.stage or "", "")
        if self.species is not None:
            return f"{self.species.common_name} {stage}".strip()
        if stage:
            return stage
        base = {"flower": "flower"}.get(self.plan or "", self.plan or "organism")
        return f"adult {base}" if self.stage == "adult" else base

    @property
    def plural(self) -> bool:
        return self.count == 2

    @property
    def many(self) -> bool:
        """True when the request speaks of this organism in the plural (two of them, or a plural name)."""
        return self.plural or self.named_plural


@dataclass
class Request:
    kind: str  # feature | comparison | scene
    targets: list[Target]
    part: str = ""  # the part a feature question or a comparison is about


def _target(r: Reading, text: str) -> Target:
    t = Target(species=r.species[0] if r.species else None)
    a = r.attrs
    t.stage = a.get("stage")
    t.plan = t.species.plan if t.species else a.get("plan") or {"larva": "moth", "tadpole": "frog"}.get(t.stage or "")
    if t.plan is None:
        t.plan = next((p for p in ("bird", "moth", "frog", "beetle", "flower") if p in tokens(text)), None)
    t.count = a.get("count")
    t.named_plural = r.plural and t.species is not None
    t.count_word = next((w for w in tokens(text) if w in COUNT_WORDS), "") if t.count == 2 else ""
    for part, colour in r.colours.items():
        if part != "any":
            t.attrs.append(Attr("colour", colour, part))
    carrying = a.get("behaviour") in ("carrying", "feeding")
    for part in r.parts:
        if part not in r.colours and not (part == "beak" and carrying):
            t.attrs.append(Attr("part", "", part))
    for key in ("view", "pose", "behaviour", "habitat"):
        if key in a and not (key == "pose" and a[key] == "swimming"):
            t.attrs.append(Attr(key, a[key], item=str(a.get("item") or "") if key == "behaviour" else ""))
    if "item" in a and "behaviour" not in a:
        t.attrs.append(Attr("behaviour", "carrying", item=str(a["item"])))
    return t


def _clauses(text: str) -> list[str]:
    return [c.strip() for c in re.split(r",\s*|\s+and\s+", text) if c.strip()]


def _starts_entity(clause: str) -> bool:
    words = [w for w in tokens(clause) if w not in _LEADING]
    return bool(read_text(clause).species) or (bool(words) and words[0] in _ENTITY_NOUNS) or \
        (len(words) > 1 and words[1] in _ENTITY_NOUNS and words[0] in ("open", "adult"))


def read_request(text: str) -> Request | None:
    """The request in the world's terms, or None when it uses words outside the world's vocabulary."""
    q = " ".join((text or "").split()).strip(" ?.!")
    if not q or not understood(q) or "any" in read_text(q).colours:  # a colour not tied to a part: not read
        return None
    m = _COMPARE.match(q)
    if m:
        a, b = read_text(m.group("a")), read_text(m.group("b"))
        part_reading = read_text(m.group("part") + " of the " + m.group("a"))
        parts = part_reading.parts
        if a.species and b.species and parts:
            targets = [_target(a, m.group("a")), _target(b, m.group("b"))]
            for t in targets:
                t.attrs = [Attr("part", "", parts[0])]
                t.stage = "larva" if parts[0].startswith("larva ") else t.stage
            return Request("comparison", targets, parts[0])
    m = _FEATURE.match(q)
    if m:
        r = read_text(q)
        if r.parts and (r.species or "plan" in r.attrs or "stage" in r.attrs):
            t = _target(r, m.group("who"))
            part = r.parts[0]
            t.attrs = [Attr("part", "", part)]
            if part.startswith("larva "):
                t.stage = "larva"
            return Request("feature", [t], part)
    groups: list[list[str]] = []
    for clause in _clauses(q):
        if not groups or _starts_entity(clause):
            groups.append([clause])
        else:
            groups[-1].append(clause)
    targets = []
    for g in groups:
        joined = " and ".join(g)
        targets.append(_target(read_text(joined), joined))
    if not targets or any(t.species is None and t.plan is None for t in targets):
        return None
    return Request("scene", targets)
