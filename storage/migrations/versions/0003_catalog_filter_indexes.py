"""Indexes for the search filters, so that a filtered search of a million-photo catalog does not scan it.

Why: the taxon filter compares lower(name) at every rank, the place filter ranges over latitude and
longitude, the date filter over observed_on, and the month filter asked SQLite to compute strftime() for
every row. Each gets an index (partial expression indexes on lower(...) for the taxon ranks), and the month is
stored in its own column (filled here for existing rows, on insert for new ones) so that it can be indexed.

Revision ID: 0003_filters
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003_filters"
down_revision = "0002"
branch_labels = None
depends_on = None

TAXON_COLUMNS = ("scientific_name", "common_name", "kingdom", "phylum", "class_name", "order", "family", "genus")


def upgrade() -> None:
    with op.batch_alter_table("photos") as batch:
        batch.add_column(sa.Column("observed_month", sa.Integer, nullable=True))
    op.execute("UPDATE photos SET observed_month = CAST(strftime('%m', observed_on) AS INTEGER) "
               "WHERE observed_on IS NOT NULL")
    for col in TAXON_COLUMNS:
        # partial: most catalogs leave some ranks empty, and an index full of '' misleads SQLite's planner
        op.execute(f'CREATE INDEX IF NOT EXISTS ix_photos_lower_{col} ON photos (lower("{col}")) WHERE "{col}" != \'\'')
    op.create_index("ix_photos_observed_on", "photos", ["observed_on"])
    op.create_index("ix_photos_observed_month", "photos", ["observed_month"])
    op.create_index("ix_photos_lat_lon", "photos", ["latitude", "longitude"])


def downgrade() -> None:
    for name in ("ix_photos_lat_lon", "ix_photos_observed_month", "ix_photos_observed_on"):
        op.drop_index(name, table_name="photos")
    for col in TAXON_COLUMNS:
        op.execute(f"DROP INDEX IF EXISTS ix_photos_lower_{col}")
    with op.batch_alter_table("photos") as batch:
        batch.drop_column("observed_month")
