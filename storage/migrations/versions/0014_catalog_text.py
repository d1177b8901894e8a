"""A full-text index of what the catalog records for each photo (FTS5), kept in step by triggers.

Why: a name the catalog holds ("ocelot", "Leopardus pardalis", "Carnivora") is the surest way to a user's own
photos, and a text query is a weak match for a picture with most embedders (with the stand-in, none). The
search fuses this index's ranking with the vectors' (core.search.catalog_text, reciprocal rank fusion).

Two tables, so that a catalog of millions stays small (bench/scale.py: a row of text per photo added about 115
bytes a photo, past the 250 the catalog may take):
- `catalog_taxon_text`: one row per taxon (rowid = taxa.id), its scientific and common names of every rank. The
  photos share a few thousand taxa; a name found here stands for the photos of those taxa (photos.taxon_id is
  indexed).
- `catalog_text`: one row per photo that records text of its own (rowid = the photo's id), in two columns:
  `names` (synonyms and other names a source gave, camera-trap observations' scientific names) and `notes` (the
  caption, place names, tags and notes a source gave). A photo with none has no row. Extra columns are read by a
  fixed list of keys, never wholesale: a benchmark's ground truth (`attributes`) must not become searchable text.

Tokenizer: `porter unicode61 remove_diacritics 2`. Porter stems index and query alike, so "ocelots" finds
"ocelot" and "foxes" finds "fox" without a prefix query (a prefix query "ocelot*" cannot find "ocelot" from the
query "ocelots"); irregular plurals (wolves, mice, geese) are searched in their singular (the query side).
Scientific names are stemmed on both sides the same way, so they still match each other exactly.

The view `catalog_text_source` says what each photo's own row holds; the triggers insert, refresh or delete rows
whenever a taxon, a photo, a capture or an observation changes, whatever writes it (an ingest, update_metadata,
the sqlite3 shell). A later migration that rebuilds one of these tables must create the triggers again.

Revision ID: 0014_catalog_text
Revises: 0013_owners
"""
from alembic import op

revision = "0014_catalog_text"
down_revision = "0013_owners"
branch_labels = None
depends_on = None

# keys of a photo's extra metadata read as names and as notes (iNaturalist's export, Camtrap DP, common CSVs)
NAME_KEYS = ("synonyms", "synonym", "other_names", "other_common_names", "vernacular_names", "common_names",
             "iconic_taxon_name", "iconic_group", "taxon_name", "species_guess")
NOTE_KEYS = ("place_guess", "place", "place_name", "location", "locality", "location_name", "locationName",
             "tag_list", "tags", "notes", "note", "description", "remarks", "comments", "habitat")
RANKS = ("scientific_name", "common_name", "kingdom", "phylum", "class_name", "order", "family", "genus")


def _extra(keys: tuple[str, ...]) -> str:
    return " || ' ' || ".join(f"coalesce(json_extract(p.extra, '$.\"{k}\"'), '')" for k in keys)


OBSERVED = ("coalesce((SELECT group_concat(o.scientific_name, ' ') FROM observations o WHERE o.photo_id = p.id OR "
            "(o.photo_id IS NULL AND o.event_id IS NOT NULL AND o.event_id = "
            "(SELECT c.event_id FROM captures c WHERE c.photo_id = p.id))), '')")
NAMES = _extra(NAME_KEYS) + " || ' ' || " + OBSERVED
NOTES = "coalesce(p.caption, '') || ' ' || " + _extra(NOTE_KEYS)
VIEW = (f"CREATE VIEW IF NOT EXISTS catalog_text_source AS SELECT p.id AS photo_id, {NAMES} AS names, {NOTES} AS notes "
        "FROM photos p")
FILL = ("INSERT INTO catalog_text (rowid, names, notes) SELECT photo_id, names, notes FROM catalog_text_source "
        "WHERE trim(names || notes) != ''")  # a photo with no text of its own has no row
TAXON_NAMES = " || ' ' || ".join(f"coalesce(\"{r}\", '')" for r in RANKS)
TAXON_FILL = f"INSERT INTO catalog_taxon_text (rowid, names) SELECT id, {TAXON_NAMES} FROM taxa"


def _refresh(ids: str) -> str:
    """Statements that write the rows of the photos `ids` (an SQL expression: a value or a subquery) anew."""
    return (f"DELETE FROM catalog_text WHERE rowid IN ({ids}); "
            f"{FILL} AND photo_id IN ({ids});")


OBSERVATION_PHOTOS = ("SELECT {r}.photo_id WHERE {r}.photo_id IS NOT NULL UNION "
                      "SELECT c.photo_id FROM captures c WHERE c.event_id = {r}.event_id")
TRIGGERS = {
    "catalog_taxon_text_insert": f"AFTER INSERT ON taxa BEGIN {TAXON_FILL} WHERE id = NEW.id; END",
    "catalog_taxon_text_update": "AFTER UPDATE ON taxa BEGIN DELETE FROM catalog_taxon_text WHERE rowid = OLD.id; "
                                 f"{TAXON_FILL} WHERE id = NEW.id; END",
    "catalog_taxon_text_delete": "AFTER DELETE ON taxa BEGIN DELETE FROM catalog_taxon_text WHERE rowid = OLD.id; END",
    "catalog_text_photo_insert": f"AFTER INSERT ON photos BEGIN {FILL} AND photo_id = NEW.id; END",
    "catalog_text_photo_update": "AFTER UPDATE OF id, caption, extra ON photos BEGIN "
                                 "DELETE FROM catalog_text WHERE rowid = OLD.id; "
                                 f"{FILL} AND photo_id = NEW.id; END",
    "catalog_text_photo_delete": "AFTER DELETE ON photos BEGIN DELETE FROM catalog_text WHERE rowid = OLD.id; END",
    "catalog_text_capture_insert": "AFTER INSERT ON captures BEGIN " + _refresh("NEW.photo_id") + " END",
    "catalog_text_capture_update": "AFTER UPDATE OF event_id ON captures BEGIN "
                                   + _refresh("NEW.photo_id") + " END",
    "catalog_text_observation_insert": "AFTER INSERT ON observations BEGIN "
                                       + _refresh(OBSERVATION_PHOTOS.format(r="NEW")) + " END",
    "catalog_text_observation_update": "AFTER UPDATE ON observations BEGIN "
                                       + _refresh(OBSERVATION_PHOTOS.format(r="OLD")) + " "
                                       + _refresh(OBSERVATION_PHOTOS.format(r="NEW")) + " END",
    "catalog_text_observation_delete": "AFTER DELETE ON observations BEGIN "
                                       + _refresh(OBSERVATION_PHOTOS.format(r="OLD")) + " END",
}
TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'"


def upgrade() -> None:
    op.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS catalog_taxon_text USING fts5(names, {TOKENIZE})")
    op.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS catalog_text USING fts5(names, notes, {TOKENIZE})")
    op.execute(VIEW)
    op.execute("DELETE FROM catalog_taxon_text")
    op.execute("DELETE FROM catalog_text")
    op.execute(TAXON_FILL)  # the taxa and photos catalogued before this migration
    op.execute(FILL)
    for name, body in TRIGGERS.items():
        op.execute(f"CREATE TRIGGER IF NOT EXISTS {name} {body}")


def downgrade() -> None:
    for name in TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.execute("DROP VIEW IF EXISTS catalog_text_source")
    op.execute("DROP TABLE IF EXISTS catalog_text")
    op.execute("DROP TABLE IF EXISTS catalog_taxon_text")
