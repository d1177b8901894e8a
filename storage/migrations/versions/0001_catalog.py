"""The photo catalog: photos, vector sets and their members, ingest runs.

Why: the first schema. Vector sets are keyed by model id so that changing the embedder re-embeds into a
new set instead of mixing two embedding spaces in one index.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ingest_runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("summary", sa.JSON),
    )
    op.create_table(
        "photos",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("width", sa.Integer), sa.Column("height", sa.Integer), sa.Column("bytes", sa.Integer),
        sa.Column("scientific_name", sa.String(200)), sa.Column("common_name", sa.String(200)),
        sa.Column("kingdom", sa.String(100)), sa.Column("phylum", sa.String(100)),
        sa.Column("class_name", sa.String(100)), sa.Column("order", sa.String(100)),
        sa.Column("family", sa.String(100)), sa.Column("genus", sa.String(100)),
        sa.Column("observed_on", sa.Date, nullable=True),
        sa.Column("latitude", sa.Float, nullable=True), sa.Column("longitude", sa.Float, nullable=True),
        sa.Column("license", sa.String(100)), sa.Column("rights_holder", sa.String(200)),
        sa.Column("caption", sa.Text), sa.Column("source", sa.String(50)), sa.Column("extra", sa.JSON),
        sa.Column("ingest_run_id", sa.Integer, sa.ForeignKey("ingest_runs.id"), nullable=True),
        sa.Column("added_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_photos_sha256", "photos", ["sha256"], unique=True)
    op.create_index("ix_photos_scientific_name", "photos", ["scientific_name"])
    op.create_table(
        "vector_sets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("model_id", sa.String(300), nullable=False, unique=True),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True)),
    )
    op.create_table(
        "photo_vectors",
        sa.Column("vector_set_id", sa.Integer, sa.ForeignKey("vector_sets.id"), primary_key=True),
        sa.Column("photo_id", sa.Integer, sa.ForeignKey("photos.id"), primary_key=True),
    )


def downgrade() -> None:
    for table in ("photo_vectors", "vector_sets", "photos", "ingest_runs"):
        op.drop_table(table)
