"""An answer stays with its evidence: the organisms an answer names must be supported by the photos it cites.

What counts as naming an organism: a species a registered world's rule book reads in the text (its
`species=` facts), or a taxon name the catalog holds (any rank, or a common name), as a whole word. What
supports a name for one photo: the photo's catalog fields (its species, common name and higher taxa; a
genus also supports its binomials) or a question about the photo that the photo checker answered "yes" in
the same search. A sentence that cites photos must be supported by one of them; a sentence citing none by
any photo the answer cites, or by the question itself (an answer may name what it was asked about, e.g. to
say no photo shows it). A claim (a sentence, or a clause between semicolons) that names anything else is left
out of the answer; when no claim citing a photo is left, the answer is replaced by a statement that no answer
can be written, and why.

A stand-in photo reader was made for its world's photos only: on photos outside that world (photos the generic
rule book reads, or photos catalogued as a species the world does not know) it is not asked at all."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from core.contracts.records import Photo
from core.contracts.world import GENERIC, RuleBooks
from core.plugins.registry import worlds

_CITE = re.compile(r"\[(\d+)\]")
_CLAIM_END = re.compile(r"((?<=[.!?])\s+|;\s+)")
SPECIES = "species="


@dataclass(frozen=True)
class Named:
    """An organism name found in an answer: how the text says it (`label`) and the key it is checked by."""

    label: str
    key: str  # lower-cased scientific or catalog name


def _world_species(text: str) -> list[Named]:
    """Species any registered world's rule book reads in `text` (its scientific names)."""
    found: dict[str, Named] = {}
    for w in worlds().values():
        for fact in w.rule_book.text_facts(text, defaults=False):
            if fact.startswith(SPECIES):
                for name in fact[len(SPECIES):].split(" or "):
                    found.setdefault(name.lower(), Named(name, name.lower()))
    return list(found.values())


def _catalog_names(text: str, names: Iterable[str]) -> list[Named]:
    lowered = f" {' '.join(re.findall(r'[a-z0-9]+', text.lower()))} "
    out = []
    for name in names:
        words = " ".join(re.findall(r"[a-z0-9]+", name.lower()))
        if len(words) >= 3 and f" {words} " in lowered:
            out.append(Named(name, name.lower()))
    return out


def named_organisms(text: str, catalog_names: Iterable[str] = ()) -> list[Named]:
    """Every organism `text` names: world species and catalog taxon names (one entry per key; a catalog name
    that a world reads as one of its species, such as its common name, counts as that species)."""
    found = {n.key: n for n in _world_species(text)}
    for n in _catalog_names(text, catalog_names):
        if not _world_species(n.label):
            found.setdefault(n.key, n)
    return list(found.values())


def supports(photo: Photo, name: Named, checked: Sequence[str] = ()) -> bool:
    """Whether the photo's catalog fields, or its checked yes-questions, support the name."""
    taxa = set(photo.taxon_names())
    if name.key in taxa or any(t.startswith(name.key + " ") for t in taxa):  # a genus covers its binomials
        return True
    return any(name.key in {n.key for n in named_organisms(q, [name.label])} for q in checked)


def kept_to_evidence(text: str, question: str, photos: Sequence[Photo], catalog_names: Iterable[str] = (),
                     checked: Mapping[int, Sequence[str]] | None = None) -> tuple[str, list[str]]:
    """(the text without its unsupported claims, the organism names that were unsupported, in order of first
    appearance); see the module note."""
    by_id = {int(p.id): p for p in photos if p.id is not None}
    names = list(catalog_names)
    asked = {n.key for n in named_organisms(question, names)}
    cited_all = [int(x) for x in _CITE.findall(text or "") if int(x) in by_id]
    bad: dict[str, str] = {}
    pieces = _CLAIM_END.split(text or "")  # claim, separator, claim, separator, ...
    kept: list[str] = []
    for claim, sep in zip(pieces[0::2], [*pieces[1::2], ""]):
        cited = [int(x) for x in _CITE.findall(claim) if int(x) in by_id]
        wrong = [n for n in named_organisms(claim, names) if not (not cited and n.key in asked) and not any(
            supports(by_id[i], n, (checked or {}).get(i, ())) for i in (cited or cited_all))]
        for n in wrong:
            bad.setdefault(n.key, n.label)
        if not wrong:
            kept.append(claim + sep)
    return "".join(kept).strip(), list(bad.values())


def unsupported(text: str, question: str, photos: Sequence[Photo], catalog_names: Iterable[str] = (),
                checked: Mapping[int, Sequence[str]] | None = None) -> list[str]:
    """The organism names of `text` that none of the photos it relies on supports."""
    return kept_to_evidence(text, question, photos, catalog_names, checked)[1]


def refusal(why: str, photos: Sequence[Photo]) -> dict:
    """The answer that stands in for one that cannot be written."""
    return {"text": f"No answer can be written from these photos: {why}.", "cited_ids": [], "verified": False,
            "refused": why, "photos": [int(p.id) for p in photos]}


def catalogued_as(photos: Sequence[Photo], limit: int = 3) -> str:
    """'Equus quagga' or 'Equus quagga, Panthera leo and 2 more' or 'no species' for a refusal's wording."""
    names = list(dict.fromkeys(p.scientific_name or p.common_name for p in photos if p.scientific_name or
                               p.common_name))
    if not names:
        return "no species"
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def outside_world(photos: Sequence[Photo], rules: RuleBooks) -> list[Photo]:
    """The photos a world's stand-in cannot speak for: those the generic rule book reads (they are not of a
    world), and those catalogued as a species their world does not know."""
    return [p for p in photos if _outside(p, rules.for_photo(p))]


def _outside(photo: Photo, book) -> bool:
    if book is GENERIC:
        return True
    return bool(photo.scientific_name) and not any(
        f.startswith(SPECIES) for f in book.text_facts(photo.scientific_name, defaults=False))
