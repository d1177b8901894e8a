"""The camera-trap data model (issue 34): deployments, captures, events, detections, crop_vectors, observations.

Why tables of their own: most photos are not camera-trap frames, and the lean photo row (0007) stays as it is;
a photo with camera-trap facts has one `captures` row (its deployment, capture time, event, file facts), its
detector boxes in `detections` (whose id is the crop's id in the crop index; `crop_vectors` says which crops
have a vector, as photo_vectors does for photos), and what people or machines said it shows in
`observations` (media-level: the photo; event-level: the event). Times are kept as the source wrote them
(ISO text); `captures.utc_epoch` is the one number that orders frames and places them for the sun.

Rows that hang on a photo go with it (ON DELETE CASCADE); a deleted deployment or event leaves its rows
without one (SET NULL). Nothing existing is changed: an existing catalog upgrades in place, its photos
plain photos.

Revision ID: 0010_camera_traps
Revises: 0009_place_index
"""
import sqlalchemy as sa
from alembic import op

revision = "0010_camera_traps"
down_revision = "0009_place_index"
branch_labels = None
depends_on = None

TABLES = ("crop_vectors", "observations", "detections", "captures", "events", "deployments")  # drop order


def _text(name: str) -> sa.Column:
    return sa.Column(name, sa.Text, nullable=True)


def upgrade() -> None:
    op.create_table(
        "deployments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("key", sa.Text, nullable=False, unique=True),
        _text("location_id"), _text("location_name"),
        sa.Column("latitude", sa.Float), sa.Column("longitude", sa.Float),
        sa.Column("coordinate_uncertainty", sa.Integer),
        _text("start"), _text("end"), _text("setup_by"), _text("camera_id"), _text("camera_model"),
        sa.Column("camera_delay", sa.Integer), sa.Column("camera_height", sa.Float),
        sa.Column("camera_depth", sa.Float), sa.Column("camera_tilt", sa.Integer),
        sa.Column("camera_heading", sa.Integer), sa.Column("detection_distance", sa.Float),
        sa.Column("timestamp_issues", sa.Boolean), sa.Column("bait_use", sa.Boolean),
        _text("feature_type"), _text("habitat"), _text("deployment_group"), _text("tags"), _text("comments"),
        _text("utc_offset"),
        sa.Column("clock_offset_s", sa.Float, nullable=False, server_default="0"),
        sa.Column("extra", sa.JSON, nullable=True),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("key", sa.Text, nullable=False, unique=True),
        sa.Column("deployment_id", sa.Integer, sa.ForeignKey("deployments.id", ondelete="SET NULL"), nullable=True),
        _text("start"), _text("end"),
        sa.Column("frames", sa.Integer, nullable=False, server_default="0"),
        sa.Column("max_n", sa.Integer, nullable=True),
    )
    op.create_table(
        "captures",
        sa.Column("photo_id", sa.Integer, sa.ForeignKey("photos.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("deployment_id", sa.Integer, sa.ForeignKey("deployments.id", ondelete="SET NULL"), nullable=True),
        _text("media_key"), _text("captured_at"), _text("utc_offset"),
        sa.Column("utc_epoch", sa.Float, nullable=True),
        _text("time_source"), _text("time_issue"), _text("capture_method"),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("events.id", ondelete="SET NULL"), nullable=True),
        sa.Column("file_public", sa.Boolean, nullable=False, server_default="1"),
        _text("file_name"), _text("media_type"), _text("camera_make"), _text("camera_model"),
        _text("camera_serial"), _text("comments"),
        sa.Column("extra", sa.JSON, nullable=True),
        sa.Column("detector_looked", sa.Boolean, nullable=False, server_default="0"),
    )
    op.create_table(
        "detections",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("photo_id", sa.Integer, sa.ForeignKey("photos.id", ondelete="CASCADE"), nullable=False),
        sa.Column("x", sa.Float, nullable=False), sa.Column("y", sa.Float, nullable=False),
        sa.Column("w", sa.Float, nullable=False), sa.Column("h", sa.Float, nullable=False),
        sa.Column("category", sa.Text, nullable=False),
        sa.Column("conf", sa.Float, nullable=False),
        sa.Column("model", sa.Text, nullable=False),
        _text("label"), sa.Column("label_conf", sa.Float, nullable=True),
        sqlite_autoincrement=True,  # why: an id is a crop's id in the crop index, never given to another box
    )
    op.execute("CREATE TABLE crop_vectors (vector_set_id INTEGER NOT NULL REFERENCES vector_sets (id), "
               "detection_id INTEGER NOT NULL REFERENCES detections (id) ON DELETE CASCADE, "
               "PRIMARY KEY (vector_set_id, detection_id)) WITHOUT ROWID")
    op.create_table(
        "observations",
        sa.Column("id", sa.Integer, primary_key=True),
        _text("key"),
        sa.Column("deployment_id", sa.Integer, sa.ForeignKey("deployments.id", ondelete="SET NULL"), nullable=True),
        sa.Column("photo_id", sa.Integer, sa.ForeignKey("photos.id", ondelete="CASCADE"), nullable=True),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("events.id", ondelete="SET NULL"), nullable=True),
        sa.Column("level", sa.Text, nullable=False), sa.Column("type", sa.Text, nullable=False),
        _text("scientific_name"), sa.Column("count", sa.Integer, nullable=True),
        _text("life_stage"), _text("sex"), _text("behavior"), _text("individual_id"),
        sa.Column("bbox_x", sa.Float), sa.Column("bbox_y", sa.Float),
        sa.Column("bbox_w", sa.Float), sa.Column("bbox_h", sa.Float),
        _text("method"), _text("classified_by"), sa.Column("probability", sa.Float, nullable=True),
        _text("classified_at"), _text("event_start"), _text("event_end"), _text("comments"),
        sa.Column("extra", sa.JSON, nullable=True),
        _text("annotator"),
    )
    for table, col in (("events", "deployment_id"), ("captures", "deployment_id"), ("captures", "media_key"),
                       ("captures", "event_id"), ("detections", "photo_id"), ("observations", "key"),
                       ("observations", "deployment_id"), ("observations", "photo_id"), ("observations", "event_id")):
        op.create_index(f"ix_{table}_{col}", table, [col])
    # the species filter compares names case-insensitively
    op.execute("CREATE INDEX ix_observations_lower_scientific_name ON observations (lower(scientific_name)) "
               "WHERE scientific_name IS NOT NULL")


def downgrade() -> None:
    """Back to 0009: the camera-trap tables go (the photos stay, as plain photos)."""
    for table in TABLES:
        op.execute(f"DROP TABLE IF EXISTS {table}")
