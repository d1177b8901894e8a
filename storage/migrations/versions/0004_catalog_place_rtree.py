"""An R*Tree of photo places, for the bounding-box filter.

Why: a latitude/longitude box answered through the (latitude, longitude) B-tree index is a range scan over
the whole latitude band (at a million photos: hundreds of thousands of index entries for a box holding a
tenth of them), slower than the FAISS search it narrows. SQLite's R*Tree module returns the photos inside
a box directly. Triggers keep it in step with the photos table, whatever inserts or deletes the rows.

Revision ID: 0004_place_rtree
Revises: 0003_filters
"""
from alembic import op

revision = "0004_place_rtree"
down_revision = "0003_filters"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE VIRTUAL TABLE IF NOT EXISTS photo_places USING rtree(id, min_lat, max_lat, min_lon, max_lon)")
    op.execute("INSERT INTO photo_places SELECT id, latitude, latitude, longitude, longitude FROM photos "
               "WHERE latitude IS NOT NULL AND longitude IS NOT NULL")
    op.execute("CREATE TRIGGER IF NOT EXISTS photo_places_insert AFTER INSERT ON photos "
               "WHEN new.latitude IS NOT NULL AND new.longitude IS NOT NULL BEGIN "
               "INSERT INTO photo_places VALUES (new.id, new.latitude, new.latitude, new.longitude, new.longitude); "
               "END")
    op.execute("CREATE TRIGGER IF NOT EXISTS photo_places_delete AFTER DELETE ON photos BEGIN "
               "DELETE FROM photo_places WHERE id = old.id; END")
    op.execute("CREATE TRIGGER IF NOT EXISTS photo_places_update AFTER UPDATE OF latitude, longitude ON photos BEGIN "
               "DELETE FROM photo_places WHERE id = old.id; "
               "INSERT INTO photo_places SELECT new.id, new.latitude, new.latitude, new.longitude, new.longitude "
               "WHERE new.latitude IS NOT NULL AND new.longitude IS NOT NULL; END")


def downgrade() -> None:
    for trigger in ("photo_places_insert", "photo_places_delete", "photo_places_update"):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute("DROP TABLE IF EXISTS photo_places")
