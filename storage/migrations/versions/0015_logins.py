"""Logins of the web app kept in the database, so that every web process of one data directory knows who is
logged in, and a restarted one still does: `logins` holds the SHA-256 of each login cookie's token (never the
token itself), the person's name, and when the login was made and ends (the login_days setting); `web_keys`
holds the login cookie's name part (`cookie_id`), made once here at random, so that every process names the
cookie alike while two data directories on one host do not.

Revision ID: 0015_logins
Revises: 0014_catalog_text
"""
import secrets

import sqlalchemy as sa
from alembic import op

revision = "0015_logins"
down_revision = "0014_catalog_text"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "logins",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True)),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_logins_name", "logins", ["name"])
    op.create_index("ix_logins_expires_at", "logins", ["expires_at"])
    op.create_table(
        "web_keys",
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
    )
    op.get_bind().execute(sa.text("INSERT INTO web_keys (name, value) VALUES ('cookie_id', :v)"),
                          {"v": secrets.token_urlsafe(24)})


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS web_keys")
    op.drop_index("ix_logins_expires_at", "logins")
    op.drop_index("ix_logins_name", "logins")
    op.execute("DROP TABLE IF EXISTS logins")
