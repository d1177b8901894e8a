"""Licence codes beside the raw licence text, for an exact licence filter.

Why: the licence filter matched a substring of the raw text, so `cc-by` also found `cc-by-nc` photos and a
`%` or `_` in the filter acted as a LIKE wildcard. Sources write the same licence many ways (`CC-BY-NC`,
`CC_BY_NC_4_0`, a creativecommons.org URL), so each photo gets the code and version core.licences reads from
its text; the raw `license` column is kept as it was (nothing is rewritten), and an index on the code keeps
the exact filter fast at a million photos.

Revision ID: 0006_licence_codes
Revises: 0005_label_instructions
"""
import sqlalchemy as sa
from alembic import op

revision = "0006_licence_codes"
down_revision = "0005_label_instructions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from core.licences import parse_licence

    with op.batch_alter_table("photos") as batch:
        batch.add_column(sa.Column("license_code", sa.String(100), nullable=False, server_default=""))
        batch.add_column(sa.Column("license_version", sa.String(20), nullable=False, server_default=""))
    conn = op.get_bind()
    # one distinct raw text at a time: a million photos carry a handful of licence spellings
    raws = [r[0] for r in conn.execute(sa.text("SELECT DISTINCT license FROM photos WHERE license != ''"))]
    for raw in raws:
        lic = parse_licence(raw)
        conn.execute(sa.text("UPDATE photos SET license_code = :code, license_version = :version "
                             "WHERE license = :raw"), {"code": lic.code, "version": lic.version, "raw": raw})
    op.create_index("ix_photos_license_code", "photos", ["license_code"])


def downgrade() -> None:
    op.drop_index("ix_photos_license_code", table_name="photos")
    with op.batch_alter_table("photos") as batch:
        batch.drop_column("license_version")
        batch.drop_column("license_code")
