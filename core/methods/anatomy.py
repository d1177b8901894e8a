"""What the generic dialogue knows, as data, about which large groups of organisms can have which body parts
and ways of moving: a coarse table by the higher taxa iNaturalist calls iconic groups (Aves, Amphibia,
Insecta, Plantae, ...). It keeps the dialogue from asking about wings for a frog on a real collection.

What is named comes from structured data: group words of the description ("frog" is Amphibia) and the
catalog's taxonomy of the candidates the description names by their catalogued common or scientific name (a
"Green Frog" candidate is of the class Amphibia). A question is ruled out only when something is named that
the table knows and the question names a trait no named group has; otherwise nothing is ruled out. The
table is coarse (a trait that one member of a group lacks is still allowed for the group) and says nothing
about colours or sizes. A world's own rule book (RuleBook.impossible) answers first for text in its terms."""
from __future__ import annotations

import re
from typing import Iterable

from core.contracts.records import RANKS, Photo

AVES, AMPHIBIA, REPTILIA, MAMMALIA = "aves", "amphibia", "reptilia", "mammalia"
INSECTA, ARACHNIDA, FISH, MOLLUSCA, PLANTAE, FUNGI = ("insecta", "arachnida", "actinopterygii", "mollusca",
                                                      "plantae", "fungi")
ANIMALS = frozenset({AVES, AMPHIBIA, REPTILIA, MAMMALIA, INSECTA, ARACHNIDA, FISH, MOLLUSCA})
# English group nouns -> taxa of the real taxonomy they name, most specific first (a catalog may record only a
# broad rank: INQUIRE's rows carry the iconic group, e.g. class Amphibia, not the order Anura of frogs). The
# search's group words (core.search.groups) and the traits below read this one table.
_INSECTS, _AMPHIBIANS, _REPTILES, _MOLLUSCS = "Insecta", "Amphibia", "Reptilia", "Mollusca"
_MAMMALS = "Mammalia"
GROUP_TAXA: dict[str, tuple[str, ...]] = {
    "bird": ("Aves",), "frog": ("Anura", _AMPHIBIANS), "toad": ("Anura", _AMPHIBIANS),
    "salamander": ("Caudata", _AMPHIBIANS), "newt": ("Caudata", _AMPHIBIANS), "amphibian": (_AMPHIBIANS,),
    "moth": ("Lepidoptera", _INSECTS), "butterfly": ("Lepidoptera", _INSECTS),
    "caterpillar": ("Lepidoptera", _INSECTS), "beetle": ("Coleoptera", _INSECTS),
    "ladybird": ("Coccinellidae", "Coleoptera", _INSECTS), "ladybug": ("Coccinellidae", "Coleoptera", _INSECTS),
    "bee": ("Hymenoptera", _INSECTS), "wasp": ("Hymenoptera", _INSECTS), "ant": ("Formicidae", "Hymenoptera", _INSECTS),
    "dragonfly": ("Odonata", _INSECTS), "damselfly": ("Odonata", _INSECTS), "insect": (_INSECTS,),
    "spider": ("Araneae", "Arachnida"), "flower": ("Plantae",), "plant": ("Plantae",), "tree": ("Plantae",),
    "fern": ("Polypodiopsida", "Plantae"), "mushroom": ("Fungi",), "fungus": ("Fungi",), "mammal": ("Mammalia",),
    "fish": ("Actinopterygii",), "reptile": (_REPTILES,), "snake": ("Serpentes", _REPTILES),
    "lizard": ("Squamata", _REPTILES), "turtle": ("Testudines", _REPTILES), "tortoise": ("Testudines", _REPTILES),
    "snail": ("Gastropoda", _MOLLUSCS), "slug": ("Gastropoda", _MOLLUSCS), "mollusc": (_MOLLUSCS,),
    # mammals and birds a camera trap or a walk meets (family or order first, then the class a catalog that
    # records only the iconic group holds)
    "cat": ("Felidae", _MAMMALS), "dog": ("Canidae", _MAMMALS), "fox": ("Vulpes", "Canidae", _MAMMALS),
    "wolf": ("Canidae", _MAMMALS), "deer": ("Cervidae", _MAMMALS), "bat": ("Chiroptera", _MAMMALS),
    "rodent": ("Rodentia", _MAMMALS), "mouse": ("Muridae", "Rodentia", _MAMMALS),
    "rat": ("Muridae", "Rodentia", _MAMMALS), "squirrel": ("Sciuridae", "Rodentia", _MAMMALS),
    "rabbit": ("Leporidae", _MAMMALS), "hare": ("Leporidae", _MAMMALS), "bear": ("Ursidae", _MAMMALS),
    "weasel": ("Mustelidae", _MAMMALS), "badger": ("Mustelidae", _MAMMALS), "boar": ("Suidae", _MAMMALS),
    "pig": ("Suidae", _MAMMALS), "monkey": ("Primates", _MAMMALS), "primate": ("Primates", _MAMMALS),
    "whale": ("Cetacea", _MAMMALS), "dolphin": ("Delphinidae", "Cetacea", _MAMMALS),
    "seal": ("Phocidae", _MAMMALS), "horse": ("Equidae", _MAMMALS), "elephant": ("Elephantidae", _MAMMALS),
    "owl": ("Strigiformes", "Aves"), "duck": ("Anatidae", "Aves"), "goose": ("Anatidae", "Aves"),
    "swan": ("Anatidae", "Aves"), "heron": ("Ardeidae", "Aves"), "egret": ("Ardeidae", "Aves"),
    "eagle": ("Accipitridae", "Aves"), "hawk": ("Accipitridae", "Aves"), "gull": ("Laridae", "Aves"),
    "woodpecker": ("Picidae", "Aves"), "parrot": ("Psittaciformes", "Aves"), "crow": ("Corvidae", "Aves"),
    "pigeon": ("Columbidae", "Aves"), "dove": ("Columbidae", "Aves"), "hummingbird": ("Trochilidae", "Aves"),
    "penguin": ("Spheniscidae", "Aves"), "pheasant": ("Phasianidae", "Aves"),
}
# a group word (singular, lower case) -> the broadest taxon it names, lower case (what the traits are kept by)
GROUP_WORDS: dict[str, str] = {word: taxa[-1].lower() for word, taxa in GROUP_TAXA.items()}
# a trait word (singular, lower case) -> (how a reason says it, the higher taxa that can have it)
TRAITS: dict[str, tuple[str, frozenset[str]]] = {
    "wing": ("wings", frozenset({AVES, INSECTA, MAMMALIA})),
    "feather": ("feathers", frozenset({AVES})),
    "beak": ("a beak", frozenset({AVES})),
    "talon": ("talons", frozenset({AVES})),
    "plumage": ("plumage", frozenset({AVES})),
    "antenna": ("antennae", frozenset({INSECTA})), "antennae": ("antennae", frozenset({INSECTA})),
    "fin": ("fins", frozenset({FISH, MAMMALIA})),
    "gill": ("gills", frozenset({FISH, AMPHIBIA, FUNGI, MOLLUSCA})),
    "fur": ("fur", frozenset({MAMMALIA})), "whisker": ("whiskers", frozenset({MAMMALIA})),
    "antler": ("antlers", frozenset({MAMMALIA})),
    "petal": ("petals", frozenset({PLANTAE})), "stamen": ("stamens", frozenset({PLANTAE})),
    "sepal": ("sepals", frozenset({PLANTAE})), "bloom": ("blooms", frozenset({PLANTAE})),
    "leg": ("legs", ANIMALS - {FISH, MOLLUSCA}), "eye": ("eyes", ANIMALS),
    "flying": ("flight", frozenset({AVES, INSECTA, MAMMALIA})),
    "swimming": ("swimming", ANIMALS), "walking": ("walking", ANIMALS - {FISH, MOLLUSCA}),
    "hopping": ("hopping", ANIMALS), "perched": ("perching", ANIMALS), "perching": ("perching", ANIMALS),
}
KNOWN = frozenset(GROUP_WORDS.values())


def _words(text: str) -> set[str]:
    """Lower-case words of `text`, each also without a plural 's'/'es' ('wings' -> 'wing', 'fishes' -> 'fish')."""
    out: set[str] = set()
    for w in re.findall(r"[a-z]+", (text or "").lower()):
        out.add(w)
        if len(w) > 3 and w.endswith("es") and w[:-2] in GROUP_WORDS:
            out.add(w[:-2])
        elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            out.add(w[:-1])
    return out


def _names_in(text: str, name: str) -> bool:
    name = " ".join(name.lower().split())
    return bool(name) and re.search(rf"(?<![a-z]){re.escape(name)}s?(?![a-z])", text) is not None


def named_taxa(description: str, photos: Iterable[Photo] = ()) -> set[str]:
    """The higher taxa (lower case) that `description` names: by a group word, or by naming a candidate's
    catalogued common or scientific name (then every rank the catalog records for that candidate)."""
    text = " ".join((description or "").lower().split())
    taxa = {GROUP_WORDS[w] for w in _words(text) if w in GROUP_WORDS}
    for p in photos:
        if p is not None and any(_names_in(text, n) for n in (p.common_name, p.scientific_name) if n.strip()):
            taxa |= {getattr(p, r).strip().lower() for r in RANKS if getattr(p, r, "").strip()}
    return taxa


def impossible(question: str, taxa: set[str]) -> str | None:
    """Why `question` asks about a trait that none of the named taxa can have ('amphibia: no wings'), or None
    (possible, or nothing named that the table knows)."""
    known = {t for t in taxa if t in KNOWN}
    if not known:
        return None
    for w in sorted(_words(question)):
        said, having = TRAITS.get(w, ("", frozenset()))
        if said and not having & known:
            return f"no {said} in {', '.join(sorted(t.capitalize() for t in known))}"
    return None
