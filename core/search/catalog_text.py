"""Hybrid retrieval: the words of a query searched in what the catalog records for each photo (its full-text
index: names of every rank, synonyms, captions, places, tags, notes; storage.catalog_text), fused with the first
stage's own (vector) ranking by weighted reciprocal rank fusion (core.methods.rrf; settings hybrid_*).

Why: a text query is a weak match for a picture with most embedders and no match at all with the stand-ins,
while a name the catalog holds ("ocelot", "ocelots", "Leopardus pardalis", "Carnivora") says which photos it
means. Each word is searched in its English singular (core.methods.rules.singular: 'wolves' -> 'wolf', 'mice'
-> 'mouse'), which the index's porter stemmer then reduces as it reduced the catalog's words ('ocelots' and
'ocelot' are one stem there). The catalog ranking puts the photos
that hold more of the query's words among their names first, then those holding more of its words anywhere,
then by BM25. Every photo brought by the catalog says which of the query's words matched (Hit.catalog_match),
and a notice says so. The setting hybrid_retrieval turns it off (`eval` does: its benchmarks rank pictures)."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from core.methods.rrf import rrf
from core.methods.rules import singular

log = logging.getLogger(__name__)
Ranked = list[tuple[int, float]]

MAX_WORDS = 12  # a query's first this many searchable words are searched (each word is one indexed query)
# words that say nothing about which photo is meant: searched they would match every caption
STOP = frozenset(
    "a an the and or but of with without in on at by near under over above below beside among inside into onto "
    "from to for while that which who whose what where when how is are was were be been being has have having "
    "does do did can could showing shows show shown seen visible its it this these those their there some any "
    "one two three several many more most very just only photo photos picture pictures image images photograph "
    "shot shots me find look looking like".split())
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)


def query_words(query: str) -> list[str]:
    """The words of `query` worth searching in the catalog, as written (lower case), each once, in order."""
    out: list[str] = []
    for w in _WORD.findall(query or ""):
        w = w.lower()
        if len(w) < 3 or w in STOP or w in out:
            continue
        out.append(w)
    return out[:MAX_WORDS]


@dataclass
class CatalogText:
    """What the catalog's text said about one query: its ranking and, per photo, the query's words it holds."""

    words: list[str]  # the query's words searched
    ranked: Ranked = field(default_factory=list)  # the catalog's ranking (best first, within the pool)
    matched: dict[int, list[str]] = field(default_factory=dict)  # photo id -> the query's words it holds
    named: dict[int, list[str]] = field(default_factory=dict)  # photo id -> those among its names

    def matched_words(self) -> list[str]:
        """The query's words that some photo of the pool matched, in the query's order."""
        seen = {w for ws in self.matched.values() for w in ws}
        return [w for w in self.words if w in seen]

    def to_json(self) -> dict[str, Any]:
        return {"words": self.words, "matched": self.matched_words(), "photos": len(self.ranked),
                "by_name": len(self.named)}


def search(catalog, query: str, depth: int, pool: np.ndarray | None,
           taxa: Sequence[tuple[str, str]] = ()) -> CatalogText:
    """The catalog's ranking for `query` within `pool` (None: every photo), up to `depth` photos. `taxa`: (what
    a result says matched, a taxon name) searched as further words: a group word's taxa ('bird' is the class
    Aves), so the photos catalogued in the group are found by their names too."""
    words = query_words(query)
    labels = words + [label for label, _ in taxa if label not in words]
    found = CatalogText(labels)
    if not labels or depth <= 0 or not hasattr(catalog, "text_matches"):
        return found
    inside = None if pool is None else set(np.asarray(pool, dtype=np.int64).tolist())
    limit = depth if inside is None else max(depth * 4, 1000)  # a pool leaves some out: ask for more
    # the singular alone: the porter stemmer gives both forms one stem, and searching both would count it twice
    forms = [[singular(w)] for w in words] + [[name] for label, name in taxa if label not in words]
    per_word = catalog.text_matches(forms, limit)
    score: dict[int, float] = {}
    for word, rows in zip(labels, per_word):
        for pid, s, in_names in rows:
            if inside is not None and pid not in inside:
                continue
            score[pid] = score.get(pid, 0.0) + s
            found.matched.setdefault(pid, []).append(word)
            if in_names:
                found.named.setdefault(pid, []).append(word)
    order = sorted(score, key=lambda i: (-len(found.named.get(i, ())), -len(found.matched[i]), -score[i], i))
    found.ranked = [(i, score[i]) for i in order[:depth]]
    kept = {i for i, _ in found.ranked}
    found.matched = {i: ws for i, ws in found.matched.items() if i in kept}
    found.named = {i: ws for i, ws in found.named.items() if i in kept}
    return found


def fuse(ranked: Ranked, text: CatalogText, settings, depth: int) -> Ranked:
    """The first stage's ranking fused with the catalog's (weighted RRF); `ranked` as it is when the catalog
    matched nothing."""
    if not text.ranked:
        return ranked
    lists = [[i for i, _ in ranked], [i for i, _ in text.ranked]]
    weights = [settings.hybrid_vector_weight, settings.hybrid_text_weight]
    return rrf(lists, settings.hybrid_rrf_lambda, weights)[:max(depth, len(ranked))]


def notice_text(text: CatalogText) -> str:
    """What the page says about the catalog's part in the ranking."""
    words = ", ".join(f"“{w}”" for w in text.matched_words())
    n = len(text.ranked)
    return (f"{words} matched what the catalog records (names, captions, places, tags) for {n} "
            f"photo{'s' if n != 1 else ''}: they are ranked with the pictures' similarity (each says what matched)")


def matches_of(text: CatalogText | None, ids: Sequence[int]) -> dict[int, list[str]]:
    """Photo id -> the query's words its catalog text holds, for those of `ids` the catalog matched."""
    if text is None:
        return {}
    return {int(i): list(text.matched[int(i)]) for i in ids if int(i) in text.matched}
