"""The catalog's filtered columns read in bulk (SqlCatalog.filter_state and filter_rows): what core's filter
columns are made from and checked against."""
from __future__ import annotations

from typing import Iterator

import numpy as np
from sqlalchemy import Engine

from core.contracts.catalog import CatalogState, FilterRows

# one query: the largest id (from the primary key's B-tree), the trigger-kept change count and the catalog's
# token (migration 0008), and the schema's version (a migration may rewrite rows)
_STATE = ("SELECT (SELECT max(id) FROM photos), (SELECT changes FROM catalog_changes WHERE id = 1), "
          "(SELECT token FROM catalog_changes WHERE id = 1), (SELECT version_num FROM alembic_version)")
_ROWS = ("SELECT id, coalesce(observed_on, 0), coalesce(taxon_id, 0), coalesce(licence_id, 0), latitude, longitude "
         "FROM photos WHERE id > ? AND id <= ? ORDER BY id LIMIT ?")


def filter_state(engine: Engine) -> CatalogState:
    with engine.connect() as conn:
        max_id, changes, token, version = conn.exec_driver_sql(_STATE).one()
    return CatalogState(max_id=int(max_id or 0), changes=int(changes or 0), token=f"{version}/{token}")


def filter_rows(engine: Engine, after_id: int, upto_id: int, chunk: int = 100_000) -> Iterator[FilterRows]:
    """Chunks of at most `chunk` photos (after_id, upto_id], each read in a query of its own (by id, from
    where the last ended), so a reader holds no transaction open between chunks."""
    last = int(after_id)
    while last < upto_id:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(_ROWS, (last, int(upto_id), int(chunk))).fetchall()
        if not rows:
            return
        ids, days, taxa, licences, *place = zip(*rows)
        # (None, a photo without a place, becomes NaN in a float array)
        places = np.array(place, dtype=np.float64).T
        yield FilterRows(ids=np.array(ids, np.int64), days=np.array(days, np.int32), taxa=np.array(taxa, np.int32),
                         licences=np.array(licences, np.int32), places=np.ascontiguousarray(places))
        last = int(ids[-1])
