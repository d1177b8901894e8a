"""A lean photo row: taxa and licences in tables of their own, the content hash as bytes, the date as an
integer, and only the indexes the filters read.

Why: at millions of photos the catalog cost about 715 bytes a photo (measured on 20k rows): eight taxon
names repeated on every row with eight lower-cased expression indexes, a 64-character hex hash with its
unique index, the ISO date text and its index, a latitude/longitude index beside the R*Tree that the box
filter actually uses, and a time stamp nothing read. Now a photo names its taxon (the eight names together)
and its licence (raw text, code, version) by id; the hash is its 32 bytes, indexed by its first 8 (the
full hash is compared on the row: ingest deduplicates before it inserts); the date is yyyymmdd as an
integer, and the month filter reads the date index (the month column of 0003 and its index are dropped); the
start of a path that a batch of photos shares (a folder, a URL's base) is stored once, in path_prefixes; the
taxon filter looks the name up in the small taxa table (its lower-cased partial indexes) and
then the photos by taxon id. `added_at` is dropped (the ingest run keeps its start time); `photo_vectors`
becomes a table without rowid. The view `photo_details` shows every row with its names written out.

Existing rows are copied in id order (ids, the R*Tree of places and every vector-set membership are kept);
a date the old text column held that is not an ISO date moves to extra["observed_on_unparsed"].

Revision ID: 0007_lean_rows
Revises: 0006_licence_codes
"""
import json
import os
from datetime import date

import sqlalchemy as sa
from alembic import op

revision = "0007_lean_rows"
down_revision = "0006_licence_codes"
branch_labels = None
depends_on = None

TAXON_FIELDS = ("scientific_name", "common_name", "kingdom", "phylum", "class_name", "order", "family", "genus")
CHUNK = 20_000
PLACE_TRIGGERS = (
    "CREATE TRIGGER photo_places_insert AFTER INSERT ON photos "
    "WHEN new.latitude IS NOT NULL AND new.longitude IS NOT NULL BEGIN "
    "INSERT INTO photo_places VALUES (new.id, new.latitude, new.latitude, new.longitude, new.longitude); END",
    "CREATE TRIGGER photo_places_delete AFTER DELETE ON photos BEGIN DELETE FROM photo_places WHERE id = old.id; END",
    "CREATE TRIGGER photo_places_update AFTER UPDATE OF latitude, longitude ON photos BEGIN "
    "DELETE FROM photo_places WHERE id = old.id; "
    "INSERT INTO photo_places SELECT new.id, new.latitude, new.latitude, new.longitude, new.longitude "
    "WHERE new.latitude IS NOT NULL AND new.longitude IS NOT NULL; END")
DETAILS_VIEW = (
    "CREATE VIEW photo_details AS SELECT p.id AS id, coalesce(x.text, '') || p.path AS path, "
    "CASE WHEN length(p.sha256) = 32 THEN lower(hex(p.sha256)) ELSE CAST(substr(p.sha256, 2) AS TEXT) END AS sha256, "
    "p.width AS width, p.height AS height, p.bytes AS bytes, "
    + ", ".join(f'coalesce(t."{c}", \'\') AS "{c}"' for c in TAXON_FIELDS) + ", "
    "CASE WHEN p.observed_on IS NULL THEN NULL ELSE printf('%04d-%02d-%02d', p.observed_on / 10000, "
    "p.observed_on / 100 % 100, p.observed_on % 100) END AS observed_on, p.observed_on / 100 % 100 AS observed_month, "
    "p.latitude AS latitude, p.longitude AS longitude, coalesce(l.text, '') AS license, "
    "coalesce(l.code, '') AS license_code, coalesce(l.version, '') AS license_version, "
    "p.rights_holder AS rights_holder, p.caption AS caption, p.source AS source, p.extra AS extra, "
    "p.ingest_run_id AS ingest_run_id FROM photos p LEFT JOIN taxa t ON t.id = p.taxon_id "
    "LEFT JOIN licences l ON l.id = p.licence_id LEFT JOIN path_prefixes x ON x.id = p.prefix_id")


def _hash_bytes(value):
    value = value or ""
    if len(value) == 64:
        try:
            return bytes.fromhex(value)
        except ValueError:
            pass
    raw = b"\0" + value.encode("utf-8")
    return raw + b"\0" if len(raw) == 32 else raw  # (as storage.models.HashBytes)


def _shared_prefix(paths: list[str]) -> str:
    """As storage.photo_rows.shared_prefix: the start every path shares, up to its last '/', if 12+ characters."""
    common = os.path.commonprefix(paths) if paths else ""
    common = common[:common.rfind("/") + 1]
    return common if len(common) >= 12 else ""


def _day(value, extra: dict):
    if value in (None, ""):
        return None
    try:
        d = date.fromisoformat(str(value)[:10])
    except ValueError:
        extra["observed_on_unparsed"] = str(value)
        return None
    return d.year * 10_000 + d.month * 100 + d.day


def upgrade() -> None:
    conn = op.get_bind()
    op.create_table(
        "taxa",
        sa.Column("id", sa.Integer, primary_key=True),
        *[sa.Column(c, sa.String(200 if c in ("scientific_name", "common_name") else 100), nullable=False,
                    server_default="") for c in TAXON_FIELDS],
        sa.UniqueConstraint(*TAXON_FIELDS, name="uq_taxa_names"),
    )
    op.create_table(
        "licences",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("text", sa.String(100), nullable=False, unique=True),
        sa.Column("code", sa.String(100), nullable=False, server_default=""),
        sa.Column("version", sa.String(20), nullable=False, server_default=""),
    )
    op.create_table(
        "path_prefixes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("text", sa.Text, nullable=False, unique=True),
    )
    op.create_table(
        "photos_lean",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("prefix_id", sa.Integer, sa.ForeignKey("path_prefixes.id"), nullable=True),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("sha256", sa.LargeBinary, nullable=False),
        sa.Column("width", sa.Integer), sa.Column("height", sa.Integer), sa.Column("bytes", sa.Integer),
        sa.Column("taxon_id", sa.Integer, sa.ForeignKey("taxa.id"), nullable=True),
        sa.Column("observed_on", sa.Integer, nullable=True),
        sa.Column("latitude", sa.Float, nullable=True), sa.Column("longitude", sa.Float, nullable=True),
        sa.Column("licence_id", sa.Integer, sa.ForeignKey("licences.id"), nullable=True),
        sa.Column("rights_holder", sa.String(200)), sa.Column("caption", sa.Text),
        sa.Column("source", sa.String(50)), sa.Column("extra", sa.JSON, nullable=True),
        sa.Column("ingest_run_id", sa.Integer, sa.ForeignKey("ingest_runs.id"), nullable=True),
    )
    taxa: dict[tuple, int] = {}
    licences: dict[str, int] = {}
    prefixes: dict[str, int] = {}
    cols = ", ".join(f'"{c}"' for c in TAXON_FIELDS)
    last = 0
    while True:
        rows = conn.execute(sa.text(
            f"SELECT id, path, sha256, width, height, bytes, {cols}, observed_on, observed_month, latitude, "
            "longitude, license, license_code, license_version, rights_holder, caption, source, extra, ingest_run_id "
            "FROM photos WHERE id > :last ORDER BY id LIMIT :n"), {"last": last, "n": CHUNK}).all()
        if not rows:
            break
        out, new_taxa, new_licences = [], [], []
        prefix = _shared_prefix([r[1] or "" for r in rows])
        if prefix and prefix not in prefixes:
            prefixes[prefix] = len(prefixes) + 1
            conn.execute(sa.text("INSERT INTO path_prefixes (id, text) VALUES (:id, :text)"),
                         {"id": prefixes[prefix], "text": prefix})
        for r in rows:
            names = tuple((v or "") for v in r[6:14])
            taxon = None
            if any(names):
                if names not in taxa:
                    taxa[names] = len(taxa) + 1
                    new_taxa.append(dict(zip(TAXON_FIELDS, names), id=taxa[names]))
                taxon = taxa[names]
            raw = r[18] or ""
            licence = None
            if raw:
                if raw not in licences:
                    licences[raw] = len(licences) + 1
                    new_licences.append({"id": licences[raw], "text": raw, "code": r[19] or "", "version": r[20] or ""})
                licence = licences[raw]
            try:
                extra = json.loads(r[24]) if isinstance(r[24], str) else dict(r[24] or {})
            except ValueError:
                extra = {"extra_unparsed": r[24]}
            day = _day(r[14], extra)
            out.append({"id": r[0], "prefix_id": prefixes.get(prefix), "path": (r[1] or "")[len(prefix):],
                        "sha256": _hash_bytes(r[2]), "width": r[3], "height": r[4], "bytes": r[5],
                        "taxon_id": taxon, "observed_on": day, "latitude": r[16], "longitude": r[17],
                        "licence_id": licence, "rights_holder": r[21] or "", "caption": r[22] or "",
                        "source": r[23] or "", "extra": json.dumps(extra) if extra else None, "ingest_run_id": r[25]})
        if new_taxa:
            conn.execute(sa.text(f"INSERT INTO taxa (id, {cols}) VALUES (:id, "
                                 + ", ".join(f":{c}" for c in TAXON_FIELDS) + ")"), new_taxa)
        if new_licences:
            conn.execute(sa.text("INSERT INTO licences (id, text, code, version) VALUES (:id, :text, :code, :version)"),
                         new_licences)
        conn.execute(sa.text(
            "INSERT INTO photos_lean (id, prefix_id, path, sha256, width, height, bytes, taxon_id, observed_on, "
            "latitude, longitude, licence_id, rights_holder, caption, source, extra, ingest_run_id) VALUES (:id, "
            ":prefix_id, :path, :sha256, :width, :height, :bytes, :taxon_id, :observed_on, :latitude, "
            ":longitude, :licence_id, :rights_holder, :caption, :source, :extra, :ingest_run_id)"), out)
        last = rows[-1][0]
    for trigger in ("photo_places_insert", "photo_places_delete", "photo_places_update"):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute("CREATE TABLE photo_vectors_lean (vector_set_id INTEGER NOT NULL REFERENCES vector_sets (id), "
               "photo_id INTEGER NOT NULL REFERENCES photos (id), PRIMARY KEY (vector_set_id, photo_id)) WITHOUT ROWID")
    op.execute("INSERT INTO photo_vectors_lean SELECT vector_set_id, photo_id FROM photo_vectors")
    op.execute("DROP TABLE photo_vectors")
    op.execute("ALTER TABLE photo_vectors_lean RENAME TO photo_vectors")
    op.execute("DROP TABLE photos")  # its indexes go with it
    op.execute("ALTER TABLE photos_lean RENAME TO photos")
    for sql in PLACE_TRIGGERS:
        op.execute(sql)
    # only what the filters and the deduplication read (boxes: the R*Tree photo_places, unchanged)
    op.execute("CREATE INDEX ix_photos_hash_prefix ON photos (substr(sha256, 1, 8))")
    for col in ("taxon_id", "observed_on", "licence_id"):
        op.create_index(f"ix_photos_{col}", "photos", [col])
    for col in TAXON_FIELDS:  # partial: most taxa leave some ranks empty
        op.execute(f'CREATE INDEX ix_taxa_lower_{col} ON taxa (lower("{col}")) WHERE "{col}" != \'\'')
    op.create_index("ix_licences_code", "licences", ["code"])
    op.execute(DETAILS_VIEW)


def downgrade() -> None:
    """Back to the wide row of 0006 (the time each photo was added is not known any more: the ingest run's start)."""
    op.execute("DROP VIEW IF EXISTS photo_details")
    for trigger in ("photo_places_insert", "photo_places_delete", "photo_places_update"):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute("CREATE TABLE photos_wide (id INTEGER PRIMARY KEY, path TEXT NOT NULL, sha256 VARCHAR(64) NOT NULL, "
               "width INTEGER, height INTEGER, bytes INTEGER, " + ", ".join(f'"{c}" VARCHAR(200)' for c in TAXON_FIELDS)
               + ", observed_on DATE, latitude FLOAT, longitude FLOAT, license VARCHAR(100), "
               "rights_holder VARCHAR(200), caption TEXT, source VARCHAR(50), extra JSON, "
               "ingest_run_id INTEGER REFERENCES ingest_runs (id), added_at DATETIME, observed_month INTEGER, "
               "license_code VARCHAR(100) NOT NULL DEFAULT '', "
               "license_version VARCHAR(20) NOT NULL DEFAULT '')")
    op.execute("INSERT INTO photos_wide SELECT p.id, coalesce(x.text, '') || p.path, "
               "CASE WHEN length(p.sha256) = 32 THEN lower(hex(p.sha256)) ELSE CAST(substr(p.sha256, 2) AS TEXT) END, "
               "p.width, p.height, p.bytes, "
               + ", ".join(f'coalesce(t."{c}", \'\')' for c in TAXON_FIELDS)
               + ", CASE WHEN p.observed_on IS NULL THEN NULL ELSE printf('%04d-%02d-%02d', p.observed_on / 10000, "
               "p.observed_on / 100 % 100, p.observed_on % 100) END, p.latitude, p.longitude, coalesce(l.text, ''), "
               "p.rights_holder, p.caption, p.source, coalesce(p.extra, '{}'), p.ingest_run_id, "
               "coalesce(r.started_at, ''), p.observed_on / 100 % 100, coalesce(l.code, ''), coalesce(l.version, '') "
               "FROM photos p LEFT JOIN taxa t ON t.id = p.taxon_id LEFT JOIN licences l ON l.id = p.licence_id "
               "LEFT JOIN ingest_runs r ON r.id = p.ingest_run_id LEFT JOIN path_prefixes x ON x.id = p.prefix_id")
    op.execute("CREATE TABLE photo_vectors_wide (vector_set_id INTEGER NOT NULL REFERENCES vector_sets (id), "
               "photo_id INTEGER NOT NULL REFERENCES photos (id), PRIMARY KEY (vector_set_id, photo_id))")
    op.execute("INSERT INTO photo_vectors_wide SELECT vector_set_id, photo_id FROM photo_vectors")
    op.execute("DROP TABLE photo_vectors")
    op.execute("ALTER TABLE photo_vectors_wide RENAME TO photo_vectors")
    op.execute("DROP TABLE photos")
    op.execute("ALTER TABLE photos_wide RENAME TO photos")
    op.execute("DROP TABLE taxa")
    op.execute("DROP TABLE licences")
    op.execute("DROP TABLE path_prefixes")
    for sql in PLACE_TRIGGERS:
        op.execute(sql)
    op.create_index("ix_photos_sha256", "photos", ["sha256"], unique=True)
    op.create_index("ix_photos_scientific_name", "photos", ["scientific_name"])
    for col in TAXON_FIELDS:
        op.execute(f'CREATE INDEX ix_photos_lower_{col} ON photos (lower("{col}")) WHERE "{col}" != \'\'')
    for name, cols_ in (("ix_photos_observed_on", ["observed_on"]), ("ix_photos_observed_month", ["observed_month"]),
                        ("ix_photos_lat_lon", ["latitude", "longitude"]), ("ix_photos_license_code", ["license_code"])):
        op.create_index(name, "photos", cols_)
