"""Query decomposition by rule and sparse satisfaction by normalised token match (methods.md 5.1-5.2).

The LLM version of the decomposition lives in llm_tasks.py and falls back to `rule_decompose` here."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

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
    """The entity without its modifiers (colours, sizes, -ing actions); the whole text if nothing is left."""
    words = [w for w in re.findall(r"[A-Za-z0-9'-]+", text) if w.lower() not in STOPWORDS]
    core = [w for w in words if w.lower() not in MODIFIERS and not w.lower().endswith("ing")]
    return " ".join(core or words) or text.strip()


def rule_decompose(query: str, limit: int = MAX_SUBQUERIES) -> list[SubQuery]:
    """Split the query at conjunctions and prepositions after removing framing like 'a photo of'."""
    text = _FRAMING.sub("", " ".join(query.split())).strip(" .?!")
    parts = []
    for piece in _SPLIT.split(text):
        piece = re.sub(r"^(?:an?|the|some|its|their)\s+", "", piece.strip(" .?!"), flags=re.IGNORECASE)
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


def satisfies(subquery: str, caption_tokens: set[str]) -> bool:
    """Sparse satisfaction: every content token of the sub-query occurs in the caption's tokens (normalised:
    lower case, simple plural stripped, grey/gray unified; a compound word counts for its head word)."""
    need = tokens(subquery)
    return bool(need) and all(_has(t, caption_tokens) for t in need)
