"""Instructions for annotators, one text per query.

Why: the label view shows what counts as relevant for a query (as Label Studio shows a project's
instructions), written once and read by every annotator of that query.

Revision ID: 0005_label_instructions
Revises: 0004_place_rtree
"""
import sqlalchemy as sa
from alembic import op

revision = "0005_label_instructions"
down_revision = "0004_place_rtree"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "label_instructions",
        sa.Column("query", sa.Text, primary_key=True),
        sa.Column("text", sa.Text, nullable=False, server_default=""),
        sa.Column("updated_at", sa.DateTime(timezone=True)),
    )


def downgrade() -> None:
    op.drop_table("label_instructions")
