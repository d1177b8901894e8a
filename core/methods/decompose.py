"""Query decomposition by rule and sparse satisfaction by normalised token match with attributes bound to the
words they describe (methods.md 5.1-5.2).

The LLM version of the decomposition lives in llm_tasks.py and falls back to `rule_decompose` here."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from functools import lru_cache

from core.contracts.world import GENERIC, RuleBook

MAX_SUBQUERIES = 8
_FRAMING = re.compile(
    r"^(?:please\s+)?(?:(?:find|show|search(?:\s+for)?|get|give)\s+(?:me\s+)?)?"
    r"(?:(?:an?|the|some)\s+)?(?:(?:photos?|images?|pictures?|photographs?|shots?)\s+(?:of|showing|with)\s+)?",
    re.IGNORECASE)
_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\bwith\b|\bwhile\b|\bnext to\b|\bnear\b|\bon\b|\bin\b|\bat\b|\bunder\b"
                    r"|\babove\b|\bbeside\b|\bamong\b|\binside\b|\bover\b)\s*", re.IGNORECASE)
STOPWORDS = frozenset(
    "a an the of to is are be been being this that these those it its some any photo photos image images picture "
    "pictures photograph showing shows show there their his her for from by as or into onto very".split())
MODIFIERS = frozenset(
    "red orange yellow green blue purple violet pink white black brown grey gray golden silver dark light pale "
    "bright small large big tiny young adult juvenile male female albino spotted striped banded barred "
    "open closed wet dry single two three several many".split())
_SEGMENT = re.compile(r"[,;.:()]|\band\b|\bbut\b")
_PREPOSITIONS = frozenset("in on at with near under over above beside among inside by from and or while next".split())
_SPELLING = {"gray": "grey", "color": "colour", "colors": "colours", "colored": "coloured"}


@dataclass
class SubQuery:
    text: str  # the atomic sub-query (entity with its modifiers)
    core: str  # the entity without modifiers

    def to_json(self) -> dict:
        return asdict(self)


def stem(word: str) -> str:
    w = _SPELLING.get(word, word)
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def tokens(text: str) -> list[str]:
    """Lower-case word stems without stopwords."""
    return [stem(t) for t in re.findall(r"[a-z0-9]+", (text or "").lower()) if t not in STOPWORDS]


def core_concept(text: str) -> str:
    """The entity without its modifiers: the first run of words that are neither modifiers (colours, sizes),
    nor -ing actions, nor stop words ("red flower" -> "flower", "bird carrying a twig" -> "bird"). Never words
    from different places stitched together; the whole text when nothing is left."""
    words = re.findall(r"[A-Za-z0-9'-]+", text)
    run: list[str] = []
    for w in words:
        low = w.lower()
        if low in _PREPOSITIONS and run:
            break
        if low in STOPWORDS or low in MODIFIERS or low.endswith("ing"):
            if run:
                break
            continue
        run.append(w)
    return " ".join(run) or text.strip()


_KEEP_TOGETHER = re.compile(r"\b(in|on)\s+(full\s+bloom|bloom|bud|flight|flower|the\s+wing)\b", re.IGNORECASE)
_FILLER = re.compile(r"\b(?:showing|shows|show|with)?\s*\bboth\b(?:\s+(?:its|their|the))?\s*", re.IGNORECASE)


def rule_decompose(query: str, limit: int = MAX_SUBQUERIES) -> list[SubQuery]:
    """Split the query at conjunctions and prepositions after removing framing like 'a photo of'; idioms such as
    'in bud', 'in full bloom' and 'in flight' stay with their organism. Each part is a whole phrase of the query."""
    text = _FRAMING.sub("", " ".join(query.split())).strip(" .?!")
    text = _FILLER.sub(" and ", text)
    protected = _KEEP_TOGETHER.sub(lambda m: m.group(1) + "__" + "__".join(m.group(2).split()), text)
    parts = []
    for piece in _SPLIT.split(protected):
        piece = re.sub(r"^(?:an?|the|some|its|their)\s+", "", piece.strip(" .?!"), flags=re.IGNORECASE)
        piece = piece.replace("__", " ")
        if tokens(piece) and piece.lower() not in (p.lower() for p in parts):
            parts.append(piece)
    if not parts:
        parts = [text or query.strip()]
    return [SubQuery(p, core_concept(p)) for p in parts[:limit]]


def token_set(text: str) -> set[str]:
    """The caption's tokens plus their endings of 4+ letters, so that a compound name counts for its head word
    ("bluebird" has "bird", "veilmoth" has "moth")."""
    out = set()
    for t in tokens(text):
        out.add(t)
        out.update(t[i:] for i in range(1, len(t) - 3))
    return out


def _has(token: str, caption_tokens: set[str]) -> bool:
    return token in caption_tokens or (len(token) >= 4 and any(c.endswith(token) for c in caption_tokens))


def bound_pairs(text: str) -> set[tuple[str, str]]:
    """(modifier, word it describes) within each comma/period-separated segment: a modifier belongs to the next
    word that is not a modifier, else to the one before it. "yellow crest, red wings" gives (yellow, crest) and
    (red, wing), never (red, crest)."""
    pairs = set()
    for segment in _SEGMENT.split(text or ""):
        toks = tokens(segment)
        for i, t in enumerate(toks):
            if t not in MODIFIERS:
                continue
            head = next((x for x in toks[i + 1:] if x not in MODIFIERS), None)
            if head is None:
                head = next((x for x in reversed(toks[:i]) if x not in MODIFIERS), None)
            if head is not None:
                pairs.add((t, head))
    return pairs


class CaptionTerms:
    """What sparse satisfaction reads from one caption: its tokens, which modifier goes with which word, and
    (read only when a sub-query needs them) its facts in the terms of a rule book (`facts_in`)."""

    def __init__(self, text: str):
        self.text = text or ""
        self.tokens = token_set(self.text)
        self.pairs = bound_pairs(self.text)

    def facts_in(self, book: RuleBook) -> frozenset[str]:
        return _facts_in(self.text, book)


@lru_cache(maxsize=65_536)
def _facts_in(text: str, book: RuleBook) -> frozenset[str]:
    """A caption's facts in the terms of a rule book, remembered across searches: every Cover search reads the
    same captions again, and reading them is pure Python that holds the web server's interpreter lock."""
    return frozenset(book.text_facts(text))


@lru_cache(maxsize=65_536)
def caption_terms(text: str) -> CaptionTerms:
    """CaptionTerms of a caption text, remembered across searches (they depend on the text alone)."""
    return CaptionTerms(text)


@lru_cache(maxsize=4096)
def _world_need_in(subquery: str, book: RuleBook) -> frozenset[str] | None:
    return frozenset(book.text_facts(subquery, defaults=False)) if book.understood(subquery) else None


def satisfies(subquery: str, caption: "CaptionTerms | set[str] | str", book: RuleBook = GENERIC) -> bool:
    """Sparse satisfaction. A sub-query in the vocabulary of `book` (the rule book of the caption's photo) is satisfied
    when the caption states each of its facts (so "in full bloom" matches "flower open", a species name its body plan,
    and a colour counts only for the part it is said of). Other text: every content token of the sub-query occurs in the
    caption (normalised: lower case, simple plural stripped, grey/gray unified; a compound word counts for its head
    word) and each modifier describes the same word in the caption as in the sub-query ("red crest" is not satisfied by
    "yellow crest, red wings"). A bare token set (no caption text) is matched on tokens only."""
    if isinstance(caption, str):
        caption = CaptionTerms(caption)
    if not isinstance(caption, CaptionTerms):
        need = tokens(subquery)
        return bool(need) and all(_has(t, caption) for t in need)
    world = _world_need_in(subquery, book)
    if world:
        return world <= caption.facts_in(book)
    need = tokens(subquery)
    if not need or not all(_has(t, caption.tokens) for t in need):
        return False
    return all(any(m == mod and (h == head or h.endswith(head)) for m, h in caption.pairs)
               for mod, head in bound_pairs(subquery))
