"""Group words: a query whose subject is a group of organisms ("a frog sitting on sand", "beetles on bark")
finds the photos the catalog records in that group first.

Which taxon a group word names comes from the rule book that reads the request: a world names its own groups from
its own taxonomy (`RuleBook.group_taxa`); for any other text, the subject's head noun is looked up in `REAL_GROUPS`,
common English nouns for groups of the real (Linnaean) taxonomy, most specific taxon first. The first taxon
the catalog records at any rank is used; where the catalog records none (a folder of photos without names)
nothing changes. The photos catalogued in the group come first, in the first stage's own order (members the
first stage did not reach follow, ranked by the query's words); every other photo follows in its order. A
notice names the word, the taxon and how many photos it holds. The setting `group_words` turns this off
(evaluations whose protocol ranks pictures alone do)."""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

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
    taxa: tuple[str, ...]  # the taxa the catalog records: the world's group and the real one, where both are
    ids: frozenset[int]  # the photos of the pool catalogued in them
    counts: tuple[int, ...] = ()  # photos per taxon, in the order of `taxa`

    @property
    def taxon(self) -> str:
        return " and ".join(self.taxa)

    def to_json(self) -> dict[str, Any]:
        return {"word": self.word, "taxon": self.taxon, "taxa": list(self.taxa), "photos": len(self.ids)}


def find_group(corpus, query: str, filters: Filters | None, book: RuleBook = GENERIC,
               photo_books: Sequence[RuleBook] = ()) -> Group | None:
    """The group the query's subject names (in `book`'s terms first, then in those of the books that read some
    of the photos: a world's, on a mixed collection), as the catalog records it inside the search's pool; None
    when the subject is no group word, the catalog records none of its taxa, or a taxon filter is set already.
    On a mixed collection both count: the world's own group ('bird': its Avifictae) and the real one (class
    Aves), each by the first of its taxa the catalog records, their photos together."""
    if not query or (filters is not None and filters.taxon):
        return None
    word, taxa, counts, ids = "", [], [], set()
    books = [book, *(b for b in photo_books if b is not book)]
    # the world's groups, then the real ones
    for found in (*(b.group_taxa(query) for b in books), real_group(query)):
        named, candidates = found or ("", ())
        for taxon in candidates:
            try:
                pool = corpus.pool(replace(filters or Filters(), taxon=taxon))
            except NotFoundError:  # the catalog records no photo under this name
                continue
            if pool is not None and len(pool):
                members = {int(i) for i in pool}
                word = word or named
                if taxon not in taxa:
                    taxa.append(taxon)
                    counts.append(len(members))
                    ids |= members
                break
    return Group(word, tuple(taxa), frozenset(ids), tuple(counts)) if taxa else None


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


def notice_text(group: Group, mixed_in: int = 0) -> str:
    """What the page says the group word did: which taxa it was read as, how many photos each holds, and, when
    photos the catalog names nothing for (`mixed_in` of those shown) keep their place among the group's, that
    too, so the notice is true of the photos on screen."""
    parts = [f"{t} ({n} photo{'s' if n != 1 else ''})" for t, n in zip(group.taxa, group.counts or
                                                                    (len(group.ids),) * len(group.taxa))]
    read = " and ".join(parts) if len(parts) > 1 else parts[0]
    kind = "groups" if len(parts) > 1 else "group"
    text = f"“{group.word}” was read as the {kind} {read}, as the catalog records them: those come first"
    if mixed_in:
        text += (f"; {mixed_in} photo{'s' if mixed_in != 1 else ''} the catalog names nothing for "
                 f"{'keep their' if mixed_in != 1 else 'keeps its'} place among them, ranked by the picture")
    return text
