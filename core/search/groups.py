"""Group words: a query whose subject is a group of organisms ("a frog sitting on sand", "beetles on bark")
finds the photos the catalog records in that group first.

Which taxon a group word names comes from the rule book that reads the request: a world names its own groups from its
own taxonomy (`RuleBook.group_taxa`); for any other text, the subject's head noun is looked up in `REAL_GROUPS`, common
English nouns for groups of the real (Linnaean) taxonomy, most specific taxon first. The first taxon the catalog records
at any rank is used; where the catalog records none (a folder of photos without names) nothing changes. The photos
catalogued in the group come first, in the first stage's own order (members the first stage did not reach follow, ranked
by the query's words); every other photo follows in its order. A notice names the word, the taxon and how many photos it
holds. The setting `group_words` turns this off (evaluations whose protocol ranks pictures alone do)."""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from core.contracts.errors import NotFoundError
from core.contracts.records import Filters
from core.contracts.world import GENERIC, RuleBook
from core.methods.anatomy import GROUP_TAXA
from core.methods.rules import head_phrase, singular

log = logging.getLogger(__name__)
Ranked = list[tuple[int, float]]

# English group nouns -> taxa of the real taxonomy they name, most specific first: one table for the whole
# generic path (core.methods.anatomy.GROUP_TAXA, which the dialogue's traits read too)
REAL_GROUPS = GROUP_TAXA


def real_group(query: str) -> tuple[str, tuple[str, ...]] | None:
    """(the group word as written, its taxa) for a query whose subject (the words before its first preposition
    or verb) holds a group word of the real taxonomy ('two frogs on a log' -> ('frogs', ('Anura', 'Amphibia')));
    None otherwise."""
    _, head = head_phrase(query)
    word = next((w for w in head.split() if singular(w) in REAL_GROUPS), None)
    return (word, REAL_GROUPS[singular(word)]) if word else None


@dataclass(frozen=True)
class Group:
    word: str  # as the query writes it
    taxon: str  # the taxon the catalog records
    ids: frozenset[int]  # the photos of the pool catalogued in it

    def to_json(self) -> dict[str, Any]:
        return {"word": self.word, "taxon": self.taxon, "photos": len(self.ids)}


def find_group(corpus, query: str, filters: Filters | None, book: RuleBook = GENERIC) -> Group | None:
    """The group the query's subject names (in `book`'s terms first), as the catalog records it inside the
    search's pool; None when the subject is no group word, the catalog records none of its taxa, or a taxon
    filter is set already."""
    if not query or (filters is not None and filters.taxon):
        return None
    for found in (book.group_taxa(query), real_group(query)):  # the world's groups, then the real ones
        word, taxa = found or ("", ())
        for taxon in taxa:
            try:
                ids = corpus.pool(replace(filters or Filters(), taxon=taxon))
            except NotFoundError:  # the catalog records no photo under this name
                continue
            if ids is not None and len(ids):
                return Group(word, taxon, frozenset(int(i) for i in ids))
    return None


def group_first(ranked: Ranked, group: Group, depth: int, rank_group: Callable[[np.ndarray, int], Ranked],
                unplaced: frozenset[int] | set[int] = frozenset()) -> Ranked:
    """`ranked` with the group's photos first, in their order there; group photos it does not hold follow them,
    as `rank_group(ids, n)` ranks them, up to `depth` group photos in all; then every other photo in order.
    `unplaced`: photos the catalog records no taxon for (a user's own photos): nothing says they are outside
    the group, so they keep their place among the group's photos and the picture decides."""
    inside = [(i, s) for i, s in ranked if i in group.ids or i in unplaced]
    outside = [(i, s) for i, s in ranked if i not in group.ids and i not in unplaced]
    want = min(depth, len(group.ids))
    if len(inside) < want:
        seen = {i for i, _ in inside}
        more = rank_group(np.asarray(sorted(group.ids), dtype=np.int64), want)
        inside += [(i, s) for i, s in more if i not in seen][:want - len(inside)]
    return inside + outside


def notice_text(group: Group) -> str:
    return (f"“{group.word}” was read as the group {group.taxon}, which the catalog records for "
            f"{len(group.ids)} photo{'s' if len(group.ids) != 1 else ''}: those come first")
