"""The session log: sessions, requests with their stages, dialogue turns, relevance labels, exports.

Why: the web app keeps what each user searched, which settings and models produced each ranking, and every
label with its time taken, so that past sessions can be reopened and labels exported and compared.
Generated pictures are stored as files; stages keep their paths in `artefacts`.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_sessions_created_at", "sessions", ["created_at"])
    op.create_table(
        "requests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("session_id", sa.Integer, sa.ForeignKey("sessions.id"), nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("method", sa.String(100), nullable=False),
        sa.Column("settings", sa.JSON), sa.Column("models", sa.JSON), sa.Column("filters", sa.JSON),
        sa.Column("created_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_requests_session_id", "requests", ["session_id"])
    op.create_table(
        "stages",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("request_id", sa.Integer, sa.ForeignKey("requests.id"), nullable=False),
        sa.Column("position", sa.Integer),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("ranking", sa.JSON), sa.Column("artefacts", sa.JSON),
    )
    op.create_index("ix_stages_request_id", "stages", ["request_id"])
    op.create_table(
        "turns",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("session_id", sa.Integer, sa.ForeignKey("sessions.id"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("question", sa.Text), sa.Column("answer", sa.Text), sa.Column("description", sa.Text),
        sa.Column("request_id", sa.Integer, sa.ForeignKey("requests.id"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_turns_session_id", "turns", ["session_id"])
    op.create_table(
        "labels",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("session_id", sa.Integer, sa.ForeignKey("sessions.id"), nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("photo_id", sa.Integer, nullable=False),
        sa.Column("label", sa.Integer, nullable=False),
        sa.Column("annotator", sa.String(100), nullable=False),
        sa.Column("seconds", sa.Float),
        sa.Column("created_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_labels_session_id", "labels", ["session_id"])
    op.create_index("ix_labels_query", "labels", ["query"])
    op.create_table(
        "exports",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("session_id", sa.Integer, sa.ForeignKey("sessions.id"), nullable=True),
        sa.Column("format", sa.String(30), nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("rows", sa.Integer),
        sa.Column("created_at", sa.DateTime(timezone=True)),
    )


def downgrade() -> None:
    for table in ("exports", "labels", "turns", "stages", "requests", "sessions"):
        op.drop_table(table)
