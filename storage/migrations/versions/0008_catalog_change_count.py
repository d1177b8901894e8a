"""A change count of the catalog's filtered columns, kept by triggers.

Why: the filters are answered from columns that core keeps beside the index (core.search.filter_columns:
dates, taxa, licences and places of every photo as memory-mapped arrays). Photos are only ever appended with
ids above the largest (add_photos, and SQLite's own choice of a new rowid), so the largest id says whether the
catalog grew; an edit of a filtered column (update_metadata, a correction in the sqlite3 shell) or a deleted
photo does not show in it. These triggers count such changes in the one row of `catalog_changes`, whatever
writes them, so that a reader compares (largest id, count, token) in one query and never answers a filter from
stale columns. Inserting rows fires nothing (the bulk insert of an ingest is not slowed). The token is drawn
once per catalog, so columns made from another database are not taken for this one's.

A later migration that rebuilds the photos table (as 0007 did) must create these triggers again.

Revision ID: 0008_change_count
Revises: 0007_lean_rows
"""
from alembic import op

revision = "0008_change_count"
down_revision = "0007_lean_rows"
branch_labels = None
depends_on = None

FILTERED = "taxon_id, observed_on, latitude, longitude, licence_id, id"
TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS photos_changed_update AFTER UPDATE OF " + FILTERED + " ON photos BEGIN "
    "UPDATE catalog_changes SET changes = changes + 1; END",
    "CREATE TRIGGER IF NOT EXISTS photos_changed_delete AFTER DELETE ON photos BEGIN "
    "UPDATE catalog_changes SET changes = changes + 1; END",
)


def upgrade() -> None:
    op.execute("CREATE TABLE IF NOT EXISTS catalog_changes (id INTEGER PRIMARY KEY CHECK (id = 1), "
               "changes INTEGER NOT NULL, token TEXT NOT NULL)")
    op.execute("INSERT OR IGNORE INTO catalog_changes (id, changes, token) VALUES (1, 0, lower(hex(randomblob(8))))")
    for trigger in TRIGGERS:
        op.execute(trigger)


def downgrade() -> None:
    for trigger in ("photos_changed_update", "photos_changed_delete"):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute("DROP TABLE IF EXISTS catalog_changes")
