"""Hybrid retrieval: the words of a query searched in what the catalog records for each photo (its full-text
index: names of every rank, synonyms, captions, places, tags, notes; storage.catalog_text), fused with the first
stage's own (vector) ranking by weighted reciprocal rank fusion (core.methods.rrf; settings hybrid_*).

Why: a text query is a weak match for a picture with most embedders and no match at all with the stand-ins,
while a name the catalog holds ("ocelot", "ocelots", "Leopardus pardalis", "Carnivora") says which photos it
means. Each word is searched in its English singular (core.methods.rules.singular: 'wolves' -> 'wolf', 'mice'
-> 'mouse'), which the index's porter stemmer then reduces as it reduced the catalog's words ('ocelots' and
'ocelot' are one stem there). The catalog ranking puts the photos that hold more of the query's words among
their names first, then those holding more of its words anywhere; inside each such tier the vectors' own order
decides (a taxon's name may stand for millions of photos), then BM25 of the photo's own text. Every photo
brought by the catalog says which of the query's words matched (Hit.catalog_match), and a notice says so. The
setting hybrid_retrieval turns it off (`eval` does: its benchmarks rank pictures)."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

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
    """What the catalog's text said about one query: its ranking and, per photo ranked, the query's words it
    holds."""

    words: list[str]  # the query's words searched (and a group word's taxa, as 'bird (Aves)')
    ranked: Ranked = field(default_factory=list)  # the catalog's ranking (best first, within the pool)
    matched: dict[int, list[str]] = field(default_factory=dict)  # photo id -> the query's words it holds
    named: dict[int, list[str]] = field(default_factory=dict)  # photo id -> those among its names
    total: int = 0  # photos of the pool whose catalog text holds some of the words

    def matched_words(self) -> list[str]:
        """The query's words that some photo ranked matched, in the query's order."""
        seen = {w for ws in self.matched.values() for w in ws}
        return [w for w in self.words if w in seen]

    def to_json(self) -> dict[str, Any]:
        return {"words": self.words, "matched": self.matched_words(), "photos": self.total,
                "ranked": len(self.ranked), "by_name": len(self.named)}


RankWithin = Callable[[np.ndarray, int], Ranked]


def search(catalog, query: str, depth: int, pool: np.ndarray | None, taxa: Sequence[tuple[str, str]] = (),
           rank_within: RankWithin | None = None) -> CatalogText:
    """The catalog's ranking for `query` within `pool` (None: every photo), up to `depth` photos. `taxa`: (what
    a result says matched, a taxon name) searched as further words: a group word's taxa ('bird' is the class
    Aves). A name of a taxon stands for all its photos (there may be millions): the photos holding more of the
    words among their names come first, then those holding more of them anywhere, each such tier in the order
    `rank_within(ids, n)` gives (the vectors' order inside it), else by BM25 of the photo's own text."""
    words = query_words(query)
    labels = words + [label for label, _ in taxa if label not in words]
    found = CatalogText(labels)
    if not labels or depth <= 0 or not hasattr(catalog, "text_matches"):
        return found
    inside = None if pool is None else np.unique(np.asarray(pool, dtype=np.int64))
    limit = depth if inside is None else max(depth * 4, 1000)  # a pool leaves some out: ask for more
    # the singular alone: the porter stemmer gives both forms one stem, and searching both would count it twice
    forms = [[singular(w)] for w in words] + [[name] for label, name in taxa if label not in words]
    named: list[np.ndarray] = []  # per label: the photos holding it among their names (a taxon's or their own)
    anywhere: list[np.ndarray] = []  # per label: the photos holding it anywhere
    bm25: dict[int, float] = {}
    for taxon_ids, rows in catalog.text_matches(forms, limit):
        by_taxon = catalog.taxon_photos(taxon_ids) if taxon_ids else np.empty(0, np.int64)
        own = [(pid, s, n) for pid, s, n in rows if inside is None or _holds(inside, pid)]
        for pid, s, _ in own:
            bm25[pid] = bm25.get(pid, 0.0) + s
        if inside is not None:
            by_taxon = np.intersect1d(by_taxon, inside, assume_unique=True)
        names = np.union1d(by_taxon, np.asarray([p for p, _, n in own if n], dtype=np.int64))
        named.append(names)
        anywhere.append(np.union1d(names, np.asarray([p for p, _, _ in own], dtype=np.int64)))
    found.ranked = _tiers(named, anywhere, bm25, depth, rank_within)
    found.total = int(len(np.unique(np.concatenate(anywhere)))) if anywhere else 0
    for label, names, some in zip(labels, named, anywhere):
        for pid, _ in found.ranked:
            if _holds(some, pid):
                found.matched.setdefault(pid, []).append(label)
            if _holds(names, pid):
                found.named.setdefault(pid, []).append(label)
    return found


def _holds(sorted_ids: np.ndarray, pid: int) -> bool:
    at = int(np.searchsorted(sorted_ids, pid))
    return at < len(sorted_ids) and int(sorted_ids[at]) == pid


def _counts(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, in how many of `arrays` each is)."""
    if not arrays:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.unique(np.concatenate(arrays), return_counts=True)


def _tiers(named: list[np.ndarray], anywhere: list[np.ndarray], bm25: dict[int, float], depth: int,
           rank_within: RankWithin | None) -> Ranked:
    """Up to `depth` photos: more words among the names first, then more words anywhere; inside a tier the
    vectors' order (rank_within), then BM25, then id."""
    ids, n_any = _counts(anywhere)
    if not len(ids):
        return []
    named_ids, n_named = _counts(named)
    n_name = np.zeros(len(ids), np.int64)
    n_name[np.searchsorted(ids, named_ids)] = n_named
    out: Ranked = []
    for a, b in sorted({(int(x), int(y)) for x, y in zip(n_name, n_any)}, reverse=True):
        need = depth - len(out)
        if need <= 0:
            break
        tier = ids[(n_name == a) & (n_any == b)]
        order = [int(i) for i, _ in rank_within(tier, need)] if rank_within is not None and len(tier) > 1 else []
        rest: list[int] = []
        if len(order) < need:  # photos the vectors did not rank (none there, or not embedded): BM25, then id
            left = np.setdiff1d(tier, np.asarray(order, dtype=np.int64))
            rest = sorted((i for i in bm25 if _holds(left, i)), key=lambda i: (-bm25[i], i))
            scored = set(rest)
            rest += [int(i) for i in left[:need + len(scored)] if int(i) not in scored]
        score = float(a * 1000 + b)  # the tier: what the ranking is by (RRF reads the order alone)
        out += [(int(i), score) for i in (order + rest)[:need]]
    return out


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
    n = text.total
    return (f"{words} matched what the catalog records (names, captions, places, tags) for {n} "
            f"photo{'s' if n != 1 else ''}: they are ranked with the pictures' similarity (each says what matched)")


def matches_of(text: CatalogText | None, ids: Sequence[int]) -> dict[int, list[str]]:
    """Photo id -> the query's words its catalog text holds, for those of `ids` the catalog matched."""
    if text is None:
        return {}
    return {int(i): list(text.matched[int(i)]) for i in ids if int(i) in text.matched}
