"""Reads free text (a prompt, a question) into the world's terms: species, attribute values and part colours,
and the words it could not place. Shared by the painter (what to draw) and the judge (what to check)."""
from __future__ import annotations

from dataclasses import dataclass, field

from fieldguide.lexicon import CUES, PART_WORDS, STOPWORDS, WORD_CUES, tokens
from fieldguide.species import COLOURS, SPECIES, Species


@dataclass
class Reading:
    species: list[Species] = field(default_factory=list)
    attrs: dict[str, object] = field(default_factory=dict)  # view, pose, behaviour, habitat, count, item, stage, plan
    colours: dict[str, str] = field(default_factory=dict)  # part -> colour name
    parts: list[str] = field(default_factory=list)  # parts mentioned (with or without a colour)
    unknown: list[str] = field(default_factory=list)  # words that matched nothing (stop words left out)
    plural: bool = False  # a species was named in the plural ("two Cobalt Pondhoppers")

    @property
    def empty(self) -> bool:
        return not (self.species or self.attrs or self.colours or self.parts)


def plural_word(word: str) -> str:
    """The plural of one word of a common name ('pondhopper' -> 'pondhoppers', 'butterfly' -> 'butterflies')."""
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def _species_spans(toks: list[str]) -> list[tuple[int, int, Species, bool]]:
    """(start, end, species, named in the plural) for every species name in `toks`: a common name in the
    singular or with its last word in the plural ('Cobalt Pondhoppers'), a scientific name as it is."""
    spans = []
    for sp in SPECIES:
        common = tokens(sp.common_name)
        for nt, many in ((common, False), (common[:-1] + [plural_word(common[-1])], True),
                         (tokens(sp.scientific_name), False)):
            for i in range(len(toks) - len(nt) + 1):
                if toks[i:i + len(nt)] == nt:
                    spans.append((i, i + len(nt), sp, many))
    return spans


def read_text(text: str) -> Reading:
    """Everything the world's vocabulary can recognise in `text`."""
    toks = tokens(text)
    r = Reading()
    slots: list[tuple[str, object] | None] = [None] * len(toks)  # per token: what it means
    for a, b, sp, many in sorted(_species_spans(toks), key=lambda t: (t[0], -(t[1] - t[0]))):
        if all(s is None for s in slots[a:b]):
            for i in range(a, b):
                slots[i] = ("species", sp)
            if sp not in r.species:
                r.species.append(sp)
            r.plural = r.plural or many
    for phrase, attr, value in CUES:
        pt = tokens(phrase)
        for i in range(len(toks) - len(pt) + 1):
            if toks[i:i + len(pt)] == pt and all(s is None for s in slots[i:i + len(pt)]):
                for j in range(i, i + len(pt)):
                    slots[j] = ("cue", None)
                slots[i + len(pt) - 1] = (attr, value)
    larval = any(t in ("caterpillar", "larva", "larvae") for t in toks)
    for i, t in enumerate(toks):
        if slots[i] is not None:
            continue
        if t in COLOURS:
            slots[i] = ("colour", t)
        elif t in PART_WORDS:
            part = PART_WORDS[t]
            if larval and t in ("body", "stripes"):
                part = "larva " + t
            slots[i] = ("part", part)
        elif t in WORD_CUES:
            slots[i] = WORD_CUES[t]
        elif t not in STOPWORDS:
            r.unknown.append(t)
    for s in slots:
        if s is None or s[0] in ("species", "cue", "colour"):
            continue
        if s[0] == "part":
            if s[1] not in r.parts:
                r.parts.append(s[1])
        else:
            r.attrs.setdefault(s[0], s[1])
    _bind_colours(slots, r)
    return r


def _bind_colours(slots, r: Reading) -> None:
    """A colour goes to the next part named within four words, else to the part just before it."""
    n = len(slots)
    for i, s in enumerate(slots):
        if s is None or s[0] != "colour":
            continue
        target = None
        for j in range(i + 1, min(n, i + 5)):
            if slots[j] is not None and slots[j][0] == "colour":
                break
            if slots[j] is not None and slots[j][0] == "part":
                target = slots[j][1]
                break
        if target is None:
            for j in range(i - 1, max(-1, i - 4), -1):
                if slots[j] is not None and slots[j][0] == "part":
                    target = slots[j][1]
                    break
        if target is not None:
            r.colours.setdefault(target, s[1])
        else:
            r.colours.setdefault("any", s[1])
