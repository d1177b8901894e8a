"""iNaturalist's iconic groups as taxa: INQUIRE's rows (and iNaturalist CSV exports) name the broad group of
each photo in one column (`iconic_group`, `iconic_taxon_name`: "Aves", "Insecta", "Plantae", ...) and no
higher taxon. Ingest writes the group into the taxon field of its rank (class Aves, kingdom Plantae) and the
ranks above it that the group fixes (Aves: kingdom Animalia, phylum Chordata), so a taxon filter or a group
word ("a bird carrying a twig") finds these photos through the catalog's taxonomy. A field the source filled
already is never overwritten; the column itself stays in the photo's extra."""
from __future__ import annotations

from core.contracts.records import Photo

ICONIC_COLUMNS = ("iconic_group", "iconic_taxon_name")
_ANIMALS, _CHORDATES, _ARTHROPODS = ("kingdom", "Animalia"), ("phylum", "Chordata"), ("phylum", "Arthropoda")
# iconic group -> (rank field, name) for the group and every rank above it that it fixes
ICONIC_TAXA: dict[str, tuple[tuple[str, str], ...]] = {
    "plantae": (("kingdom", "Plantae"),), "fungi": (("kingdom", "Fungi"),), "animalia": (_ANIMALS,),
    "protozoa": (("kingdom", "Protozoa"),), "chromista": (("kingdom", "Chromista"),),
    "mollusca": (_ANIMALS, ("phylum", "Mollusca")),
    "aves": (_ANIMALS, _CHORDATES, ("class_name", "Aves")),
    "amphibia": (_ANIMALS, _CHORDATES, ("class_name", "Amphibia")),
    "reptilia": (_ANIMALS, _CHORDATES, ("class_name", "Reptilia")),
    "mammalia": (_ANIMALS, _CHORDATES, ("class_name", "Mammalia")),
    "actinopterygii": (_ANIMALS, _CHORDATES, ("class_name", "Actinopterygii")),
    "arachnida": (_ANIMALS, _ARTHROPODS, ("class_name", "Arachnida")),
    "insecta": (_ANIMALS, _ARTHROPODS, ("class_name", "Insecta")),
}


def apply_iconic_group(photo: Photo, value: object) -> list[str]:
    """Fill `photo`'s empty taxon fields from its iconic group `value`; returns the fields filled. A value that
    is no iconic group of iNaturalist ('bird', '') fills nothing."""
    lineage = ICONIC_TAXA.get(str(value or "").strip().lower(), ())
    filled = []
    for rank, name in lineage:
        if not getattr(photo, rank):
            setattr(photo, rank, name)
            filled.append(rank)
    return filled


def iconic_value(extra: dict) -> object:
    """The iconic group a source row names, from the first of its iconic columns present."""
    return next((extra[c] for c in ICONIC_COLUMNS if extra.get(c)), None)
