"""Near-copies (issue 35): each photo's perceptual hashes (core.vectors.near_copies: its whole picture at four
rotations and a set of windows of it, 256 bits each), so that re-encodes, greyscale copies, rotations, resizes
and crops of one frame fold into one result.

Why a table of its own: the lean photo row (0007) stays as it is, and a catalog made before this migration
upgrades without rewriting its photos. A photo without a row has not been hashed yet (the next ingest hashes
it); an empty `hashes` means it could not be, or has nothing to compare (its file is not on this machine,
a blank frame).

Revision ID: 0012_near_copies
Revises: 0011_camtrap_packages
"""
import sqlalchemy as sa
from alembic import op

revision = "0012_near_copies"
down_revision = "0011_camtrap_packages"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "photo_near_hashes",
        sa.Column("photo_id", sa.Integer, sa.ForeignKey("photos.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("hashes", sa.LargeBinary, nullable=False),
        sqlite_with_rowid=False,
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS photo_near_hashes")
