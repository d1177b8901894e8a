"""The full-text search of what the catalog records for each photo (the FTS5 table `catalog_text`, migration
0014): one query per word of the user's, each word searched in all its given forms, names weighted above notes.
storage.catalog.SqlCatalog.text_matches calls it; core.search.catalog_text fuses the answer with the vectors."""
from __future__ import annotations

import logging
from typing import Sequence

from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

log = logging.getLogger(__name__)

# bm25 column weights: a word among the photo's names counts ten times a word of its notes
NAMES_WEIGHT, NOTES_WEIGHT = 10.0, 1.0
SEARCH = (f"SELECT rowid, bm25(catalog_text, {NAMES_WEIGHT}, {NOTES_WEIGHT}) AS score FROM catalog_text "
          f"WHERE catalog_text MATCH ? ORDER BY score LIMIT ?")
IN_NAMES = "SELECT rowid FROM catalog_text WHERE catalog_text MATCH ? AND rowid IN ({})"


def phrase(form: str) -> str:
    """One form of a word as an FTS5 string (double quotes doubled): never read as FTS5 query syntax."""
    return '"' + form.replace('"', '""') + '"'


def match_expression(forms: Sequence[str]) -> str:
    return " OR ".join(phrase(f) for f in dict.fromkeys(f for f in forms if f.strip()))


def text_matches(engine: Engine, words: Sequence[Sequence[str]], limit: int
                 ) -> list[list[tuple[int, float, bool]]]:
    """For each word (its forms: as written, singular ...): up to `limit` photos whose catalog text holds it,
    best first, as (photo id, bm25 score (higher is better), whether it is among the photo's names). A catalog
    made before migration 0014 (no such table) answers nothing."""
    out: list[list[tuple[int, float, bool]]] = []
    try:
        with engine.connect() as conn:
            for forms in words:
                expr = match_expression(forms)
                if not expr:
                    out.append([])
                    continue
                rows = [(int(i), -float(s)) for i, s in conn.exec_driver_sql(SEARCH, (expr, int(limit)))]
                named: set[int] = set()
                for start in range(0, len(rows), 500):
                    chunk = [i for i, _ in rows[start:start + 500]]
                    named.update(int(r[0]) for r in conn.exec_driver_sql(
                        IN_NAMES.format(", ".join("?" * len(chunk))), ("names : (" + expr + ")", *chunk)))
                out.append([(i, s, i in named) for i, s in rows])
    except OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        log.warning("the catalog has no full-text index (migration 0014): catalog words are not searched")
        return [[] for _ in words]
    return out
