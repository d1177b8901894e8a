"""The invented species of the field-guide world: names, fictional taxonomy, body plan, part colours, markings.

Nothing here is a real taxon. Two look-alike pairs differ in exactly one part: the two tuftlings (genus Tuftilla) in the
colour of the crest, the two veilmoths in the colour of the underside of the wings.
"""
from __future__ import annotations

from dataclasses import dataclass, field

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (200, 35, 35), "orange": (235, 130, 25), "yellow": (240, 215, 40), "green": (50, 150, 60),
    "blue": (40, 80, 200), "purple": (130, 50, 160), "white": (240, 240, 235), "black": (25, 25, 25),
    "brown": (120, 75, 35), "grey": (130, 130, 130), "pink": (240, 140, 170),
}

# Body plan -> the parts it has (in caption order). "underside" is the underside of the wings.
PLAN_PARTS: dict[str, tuple[str, ...]] = {
    "bird": ("crest", "back", "wings", "belly", "beak"),
    "moth": ("wings", "underside", "body"),
    "frog": ("back", "belly", "markings"),
    "beetle": ("elytra", "markings", "legs"),
    "flower": ("petals", "centre", "leaves"),
}
PLAN_NOUN = {"bird": "bird", "moth": "moth", "frog": "frog", "beetle": "beetle", "flower": "flower"}
# How a part is named in notes and questions.
PART_PHRASE = {
    "crest": "crest", "back": "back", "wings": "wings", "belly": "belly", "beak": "beak",
    "underside": "underside of the wings", "body": "body", "markings": "markings", "elytra": "wing cases",
    "legs": "legs", "petals": "petals", "centre": "flower centre", "leaves": "leaves",
    "larva stripes": "stripes on the caterpillar",
}


@dataclass(frozen=True)
class Species:
    scientific_name: str
    common_name: str
    plan: str
    colours: dict[str, str]  # part -> colour name
    marking: str = "plain"  # plain | spots | stripes | bands (drawn on the main surface)
    larva: dict[str, str] = field(default_factory=dict)  # for moths: body/stripes colours of the caterpillar
    taxonomy: tuple[str, str, str, str, str] = ("", "", "", "", "")  # kingdom, phylum, class, order, family

    @property
    def genus(self) -> str:
        return self.scientific_name.split()[0]

    @property
    def stages(self) -> tuple[str, ...]:
        if self.plan == "moth":
            return ("adult", "larva")
        if self.plan == "frog":
            return ("adult", "tadpole")
        return ("adult",)


_ANIMA = "Fabulozoa"  # invented kingdom for the animals; the plants get "Fictiflora"
_BIRD = (_ANIMA, "Pennaphyta", "Avifictae", "Tuftiformes")
_MOTH = (_ANIMA, "Articulata Ficta", "Lepidofictae", "Veliformes")
_FROG = (_ANIMA, "Pennaphyta", "Ranafictae", "Saltiformes")
_BEETLE = (_ANIMA, "Articulata Ficta", "Scutofictae", "Clypeiformes")
_FLOWER = ("Fictiflora", "Petalophyta", "Florifictae", "Stellales")

SPECIES: tuple[Species, ...] = (
    Species("Tuftilla rubrifrons", "Ember-crested Tuftling", "bird",
            {"crest": "red", "back": "brown", "wings": "blue", "belly": "white", "beak": "black"},
            taxonomy=(*_BIRD, "Tuftillidae")),
    Species("Tuftilla aurifrons", "Gold-crested Tuftling", "bird",
            {"crest": "yellow", "back": "brown", "wings": "blue", "belly": "white", "beak": "black"},
            taxonomy=(*_BIRD, "Tuftillidae")),
    Species("Reedipipa ardesiaca", "Slate Reedpiper", "bird",
            {"crest": "black", "back": "grey", "wings": "black", "belly": "orange", "beak": "yellow"},
            marking="stripes", taxonomy=(*_BIRD, "Reedipipidae")),
    Species("Veilumbra cinnabarina", "Scarlet-underwing Veilmoth", "moth",
            {"wings": "brown", "underside": "red", "body": "grey"}, marking="bands",
            larva={"body": "green", "stripes": "yellow"}, taxonomy=(*_MOTH, "Veilumbridae")),
    Species("Veilumbra jadeata", "Jade-underwing Veilmoth", "moth",
            {"wings": "brown", "underside": "green", "body": "grey"}, marking="bands",
            larva={"body": "green", "stripes": "yellow"}, taxonomy=(*_MOTH, "Veilumbridae")),
    Species("Sailivola fulva", "Tawny Sailwing", "moth",
            {"wings": "orange", "underside": "yellow", "body": "black"}, marking="spots",
            larva={"body": "black", "stripes": "white"}, taxonomy=(*_MOTH, "Sailivolidae")),
    Species("Pondisalta cobaltina", "Cobalt Pondhopper", "frog",
            {"back": "blue", "belly": "yellow", "markings": "black"}, marking="spots",
            taxonomy=(*_FROG, "Pondisaltidae")),
    Species("Mossisalta striolata", "Streaked Mossleaper", "frog",
            {"back": "green", "belly": "white", "markings": "yellow"}, marking="stripes",
            taxonomy=(*_FROG, "Pondisaltidae")),
    Species("Shieldicora ignea", "Firebacked Shieldbug", "beetle",
            {"elytra": "red", "markings": "black", "legs": "black"}, marking="spots",
            taxonomy=(*_BEETLE, "Shieldicoridae")),
    Species("Rindicora smaragdina", "Emerald Rindbeetle", "beetle",
            {"elytra": "green", "markings": "purple", "legs": "brown"}, marking="bands",
            taxonomy=(*_BEETLE, "Shieldicoridae")),
    Species("Starbloomia violacea", "Violet Starbloom", "flower",
            {"petals": "purple", "centre": "yellow", "leaves": "green"},
            taxonomy=(*_FLOWER, "Starbloomiaceae")),
    Species("Snowcupia nivea", "Snowcup Bellwort", "flower",
            {"petals": "white", "centre": "orange", "leaves": "green"},
            taxonomy=(*_FLOWER, "Snowcupiaceae")),
)
LOOKALIKE_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("Tuftilla rubrifrons", "Tuftilla aurifrons", "crest"),
    ("Veilumbra cinnabarina", "Veilumbra jadeata", "underside"),
)


def by_name(name: str) -> Species:
    """The species whose scientific or common name is `name` (case-insensitive); KeyError otherwise."""
    key = name.strip().lower()
    for sp in SPECIES:
        if key in (sp.scientific_name.lower(), sp.common_name.lower()):
            return sp
    raise KeyError(name)
