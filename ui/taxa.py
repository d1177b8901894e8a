"""Taxon names in the web forms: the taxon box's choices (each name with its rank) and the species a query names,
offered as a filter. Pure functions over the catalog's (name, rank) list (core.search.corpus.Corpus.taxon_names)."""
from __future__ import annotations

import re
from typing import Sequence

SPECIES_RANKS = ("species", "common name")
MAX_WORDS = 6  # the longest name looked for in a query, in words
_WORD = re.compile(r"[\w'’-]+", re.UNICODE)


RANK_ORDER = ("species", "common name", "genus", "family", "order", "class", "phylum", "kingdom")


def choices(names: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """(label, value) pairs for a dropdown, ordered by rank (species first, then common names, genus, family ...
    up to kingdom; other ranks last) then by name: 'Mossisalta striolata (species)' -> 'Mossisalta striolata'."""
    def order(item: tuple[str, str]) -> tuple[int, str, str]:
        name, rank = item
        return (RANK_ORDER.index(rank) if rank in RANK_ORDER else len(RANK_ORDER), name.casefold(), name)
    return [(f"{name} ({rank})", name) for name, rank in sorted(names, key=order)]


def named_taxa(query: str, names: Sequence[tuple[str, str]], ranks: Sequence[str] = SPECIES_RANKS) -> list[str]:
    """The names of rank in `ranks` that `query` mentions as whole words (case-insensitive), longest first, each
    once: "is the Streaked Mossleaper calling?" -> ["Streaked Mossleaper"]."""
    known = {" ".join(n.lower().split()): n for n, r in names if r in ranks and n.strip()}
    words = [w.lower() for w in _WORD.findall(query or "")]
    found: list[tuple[int, int, str]] = []
    for size in range(min(MAX_WORDS, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            name = known.get(" ".join(words[start:start + size]))
            if name and name not in (f[2] for f in found):
                found.append((-size, start, name))
    return [name for _, _, name in sorted(found)]
