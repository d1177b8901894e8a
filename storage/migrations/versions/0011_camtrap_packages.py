"""The metadata of the Camtrap DP packages imported (title, contributors, project, licences, taxonomic, ...):
an export writes a package's metadata back from here, so that an imported package round-trips.

Revision ID: 0011_camtrap_packages
Revises: 0010_camera_traps
"""
import sqlalchemy as sa
from alembic import op

revision = "0011_camtrap_packages"
down_revision = "0010_camera_traps"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "camtrap_packages",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("key", sa.Text, nullable=False, unique=True),  # the package's id, else its name
        sa.Column("metadata", sa.JSON, nullable=False),  # datapackage.json without its resources
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS camtrap_packages")
