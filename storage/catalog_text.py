"""The full-text search of what the catalog records (migration 0014): per word of the user's, the taxa whose
names hold it (`catalog_taxon_text`: a name stands for every photo of its taxa) and the photos whose own text
holds it (`catalog_text`: synonyms, observations' names, captions, places, tags, notes; names weighted above
notes). storage.catalog.SqlCatalog.text_matches and taxon_photos call it; core.search.catalog_text ranks and
fuses the answer with the vectors."""
from __future__ import annotations

import logging
from typing import Sequence

import numpy as np
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from storage.db import chunks

log = logging.getLogger(__name__)

# bm25 column weights of a photo's own text: a word among its names counts ten times a word of its notes
NAMES_WEIGHT, NOTES_WEIGHT = 10.0, 1.0
TAXA = "SELECT rowid FROM catalog_taxon_text WHERE catalog_taxon_text MATCH ?"
PHOTOS = (f"SELECT rowid, bm25(catalog_text, {NAMES_WEIGHT}, {NOTES_WEIGHT}) AS score FROM catalog_text "
          f"WHERE catalog_text MATCH ? ORDER BY score LIMIT ?")
IN_NAMES = "SELECT rowid FROM catalog_text WHERE catalog_text MATCH ? AND rowid IN ({})"
OF_TAXA = "SELECT id FROM photos WHERE taxon_id IN ({})"
MAX_TAXA = 100_000  # taxa a word may stand for (a catalog holds some thousands)

Matches = tuple[list[int], list[tuple[int, float, bool]]]


def phrase(form: str) -> str:
    """One form of a word as an FTS5 string (double quotes doubled): never read as FTS5 query syntax."""
    return '"' + form.replace('"', '""') + '"'


def match_expression(forms: Sequence[str]) -> str:
    return " OR ".join(phrase(f) for f in dict.fromkeys(f for f in forms if f.strip()))


def text_matches(engine: Engine, words: Sequence[Sequence[str]], limit: int) -> list[Matches]:
    """For each word (its forms): (the ids of the taxa whose names hold it, up to `limit` photos whose own text
    holds it, best first, as (photo id, bm25 score (higher is better), whether among the photo's names)). A
    catalog made before migration 0014 (no such tables) answers nothing."""
    out: list[Matches] = []
    try:
        with engine.connect() as conn:
            for forms in words:
                expr = match_expression(forms)
                if not expr:
                    out.append(([], []))
                    continue
                taxa = [int(r[0]) for r in conn.exec_driver_sql(TAXA + f" LIMIT {MAX_TAXA}", (expr,))]
                rows = [(int(i), -float(s)) for i, s in conn.exec_driver_sql(PHOTOS, (expr, int(limit)))]
                named: set[int] = set()
                for chunk in chunks([i for i, _ in rows]):
                    named.update(int(r[0]) for r in conn.exec_driver_sql(
                        IN_NAMES.format(", ".join("?" * len(chunk))), ("names : (" + expr + ")", *chunk)))
                out.append((taxa, [(i, s, i in named) for i, s in rows]))
    except OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        log.warning("the catalog has no full-text index (migration 0014): catalog words are not searched")
        return [([], []) for _ in words]
    return out


def taxon_photos(engine: Engine, taxon_ids: Sequence[int]) -> np.ndarray:
    """The ids of the photos of these taxa, ascending (photos.taxon_id is indexed)."""
    found: list[int] = []
    with engine.connect() as conn:
        for chunk in chunks([int(t) for t in taxon_ids]):
            found.extend(int(r[0]) for r in conn.exec_driver_sql(OF_TAXA.format(", ".join("?" * len(chunk))),
                                                                 tuple(chunk)))
    return np.unique(np.asarray(found, dtype=np.int64))
