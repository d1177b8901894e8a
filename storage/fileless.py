"""The media kept without their file (a Camtrap DP medium whose file could not be had, core.ingest.camtrapdp_source):
their content hash is a placeholder 'media:...', stored by HashBytes as FILELESS and its text. Counted here; the
vector sets (storage.vector_sets) leave them out (nothing to embed), storage.camtrap_store keeps them apart."""
from __future__ import annotations

from sqlalchemy import Engine

FILELESS = b"\0media:"  # how HashBytes stores the placeholder hash of a medium kept without its file


def count_fileless(engine: Engine) -> int:
    """Photos kept without their file, read through the index on the hash's first 8 bytes (a range of it, not a
    scan of the photos)."""
    low, high = FILELESS, FILELESS[:-1] + bytes([FILELESS[-1] + 1])
    with engine.connect() as conn:
        return int(conn.exec_driver_sql(
            "SELECT count(*) FROM photos WHERE substr(sha256, 1, 8) >= ? AND substr(sha256, 1, 8) < ? "
            "AND length(sha256) != 32", (low, high)).scalar() or 0)
