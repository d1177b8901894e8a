"""Which rule book reads a search's request on a mixed collection.

The composition root hands each search its rule books (core.contracts.world.RuleBooks): on a collection that is
all one world's, the world's book reads the request; on a mixed one, the generic rules do, and the world's book
reads only the world's photos. A request that names one of the world's own species ("what colour is the belly
of the Gold-crested Tuftling?") is about the world's photos whatever else the collection holds: it is read by
the world's book there too, so the sub-questions, the checks and the answer do not change because unrelated
photos were added (issue 35)."""
from __future__ import annotations

from dataclasses import replace

from core.contracts.world import GENERIC, RuleBooks

SPECIES = "species="


def names_world_species(book, text: str) -> bool:
    """Whether `book` reads one of its own species in `text`."""
    return any(f.startswith(SPECIES) for f in book.text_facts(text, defaults=False))


def for_request(rules: RuleBooks, text: str) -> RuleBooks:
    """`rules` with the request read by the book of the world whose species `text` names, when the generic
    rules would read it (a mixed collection); `rules` as they are otherwise."""
    if not text or rules.request is not GENERIC:
        return rules
    for _, book in rules.sources:
        if book is not GENERIC and names_world_species(book, text):
            return replace(rules, request=book)
    return rules
