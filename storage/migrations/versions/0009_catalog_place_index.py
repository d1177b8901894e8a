"""Photo places in a plain index on (latitude, longitude) instead of the R*Tree of 0004.

Why: at millions of photos the R*Tree was more than half of the catalog's insert time (timed on the first
million rows of a 5M-photo file: 15.6-26.2 CPU seconds per 250k photos with it, 6.0-9.5 without; its cost per
row grows with the tree) and 55 of the catalog's 235 bytes a photo. The search's box filter no longer reads
it: the filter columns beside the index (core.search.filter_columns) compare every photo's latitude and
longitude in memory. The catalog's own box query, for a search before those columns are made or with them
turned off, reads a latitude band of this index and compares the longitude on the index entry: slower than
the R*Tree for a narrow band across many photos, and exact (64-bit coordinates, where the R*Tree rounded to 32
bits and a photo within about a metre of an edge could fall either side). Photos without a place are not in it.

Revision ID: 0009_place_index
Revises: 0008_change_count
"""
from alembic import op

revision = "0009_place_index"
down_revision = "0008_change_count"
branch_labels = None
depends_on = None

RTREE_TRIGGERS = ("photo_places_insert", "photo_places_delete", "photo_places_update")


def upgrade() -> None:
    for trigger in RTREE_TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute("DROP TABLE IF EXISTS photo_places")
    op.execute("CREATE INDEX IF NOT EXISTS ix_photos_place ON photos (latitude, longitude) WHERE latitude IS NOT NULL")


def downgrade() -> None:
    """The R*Tree again, filled from the rows, with the triggers of 0007 that keep it."""
    op.execute("DROP INDEX IF EXISTS ix_photos_place")
    op.execute("CREATE VIRTUAL TABLE IF NOT EXISTS photo_places USING rtree(id, min_lat, max_lat, min_lon, max_lon)")
    op.execute("INSERT INTO photo_places SELECT id, latitude, latitude, longitude, longitude FROM photos "
               "WHERE latitude IS NOT NULL AND longitude IS NOT NULL")
    op.execute("CREATE TRIGGER photo_places_insert AFTER INSERT ON photos "
               "WHEN new.latitude IS NOT NULL AND new.longitude IS NOT NULL BEGIN "
               "INSERT INTO photo_places VALUES (new.id, new.latitude, new.latitude, new.longitude, new.longitude); "
               "END")
    op.execute("CREATE TRIGGER photo_places_delete AFTER DELETE ON photos BEGIN "
               "DELETE FROM photo_places WHERE id = old.id; END")
    op.execute("CREATE TRIGGER photo_places_update AFTER UPDATE OF latitude, longitude ON photos BEGIN "
               "DELETE FROM photo_places WHERE id = old.id; "
               "INSERT INTO photo_places SELECT new.id, new.latitude, new.latitude, new.longitude, new.longitude "
               "WHERE new.latitude IS NOT NULL AND new.longitude IS NOT NULL; END")
