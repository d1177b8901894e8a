"""Who owns what: each session gets an opaque token (what the page and the API show instead of its number)
and its owner (the logged-in person's name key; '' when nobody logs in, or one shared password), and the
files the web app handed to whom are listed (served_files), so that only those are served from the upload
and export folders, by every web process and after a restart.

Revision ID: 0013_owners
Revises: 0012_near_copies
"""
import secrets

import sqlalchemy as sa
from alembic import op

revision = "0013_owners"
down_revision = "0012_near_copies"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("token", sa.String(40), nullable=True))
        batch.add_column(sa.Column("owner", sa.String(200), nullable=False, server_default=""))
    conn = op.get_bind()
    ids = [row[0] for row in conn.execute(sa.text("SELECT id FROM sessions"))]
    for sid in ids:  # sessions from before get a token too: their numbers are no longer accepted
        conn.execute(sa.text("UPDATE sessions SET token = :t WHERE id = :i"),
                     {"t": secrets.token_urlsafe(16), "i": sid})
    op.create_index("ix_sessions_token", "sessions", ["token"], unique=True)
    op.create_index("ix_sessions_owner", "sessions", ["owner"])
    op.create_table(
        "served_files",
        sa.Column("path", sa.Text, primary_key=True),  # absolute, resolved
        sa.Column("owner", sa.String(200), primary_key=True),  # 'user:<name key>' or 'browser:<cookie>'
        sa.Column("created_at", sa.DateTime(timezone=True)),
    )


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS served_files")
    op.drop_index("ix_sessions_owner", "sessions")
    op.drop_index("ix_sessions_token", "sessions")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("owner")
        batch.drop_column("token")
