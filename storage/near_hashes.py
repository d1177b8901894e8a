"""The photos' perceptual hashes in the catalog (migration 0012, table photo_near_hashes): read by id, the
photos not hashed yet, and writes. The bytes are core.vectors.near_copies' (this module does not read them)."""
from __future__ import annotations

from typing import Sequence

from sqlalchemy import Connection, Engine, text

from storage.db import chunks


def near_hashes(engine: Engine, ids: Sequence[int]) -> dict[int, bytes]:
    """photo id -> its hashes, for the photos of `ids` that were hashed (an empty value: could not be)."""
    out: dict[int, bytes] = {}
    with engine.connect() as conn:
        for part in chunks([int(i) for i in ids]):
            marks = ", ".join("?" * len(part))
            rows = conn.exec_driver_sql(f"SELECT photo_id, hashes FROM photo_near_hashes WHERE photo_id IN ({marks})",
                                        tuple(part))
            out.update({int(pid): bytes(h) for pid, h in rows})
    return out


def unhashed_ids(engine: Engine, limit: int | None = None) -> list[int]:
    """Ids of the photos with no hash row yet, in id order (at most `limit`)."""
    sql = ("SELECT p.id FROM photos p LEFT JOIN photo_near_hashes h ON h.photo_id = p.id WHERE h.photo_id IS NULL "
           "ORDER BY p.id" + (f" LIMIT {int(limit)}" if limit is not None else ""))
    with engine.connect() as conn:
        return [int(r[0]) for r in conn.execute(text(sql))]


def all_hashed(engine: Engine) -> dict[int, bytes]:
    """Every hashed photo's hashes (empty values left out): what an ingest compares its new photos with."""
    with engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT photo_id, hashes FROM photo_near_hashes WHERE length(hashes) > 0")
        return {int(pid): bytes(h) for pid, h in rows}


def set_near_hashes(conn: Connection, hashes: dict[int, bytes]) -> None:
    """Write (or replace) the hashes of these photos, in the caller's write transaction."""
    if hashes:
        conn.exec_driver_sql("INSERT OR REPLACE INTO photo_near_hashes (photo_id, hashes) VALUES (?, ?)",
                             [(int(pid), bytes(h)) for pid, h in hashes.items()])
