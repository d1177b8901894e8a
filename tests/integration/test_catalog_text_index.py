"""The catalog's full-text index (migration 0014_catalog_text) on real SQLite: a catalog made before it gets
every taxon's names and every photo's own text when it is opened; the triggers keep the index in step with every
write (a new photo, a source's metadata written again, a taxon's names corrected in the sqlite3 shell, a deleted
photo, a camera-trap observation of a medium and of an event); the porter tokenizer finds a plural and a
singular alike; a benchmark's ground truth in extra is never searchable; query syntax in a word is searched as
text; a photo with no text of its own has no row."""
from __future__ import annotations

import sqlite3

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine

from core.contracts.camtrap import Capture, Event, Observation
from core.contracts.records import Photo
from storage.camtrap_store import SqlCamtrapStore
from storage.catalog import SqlCatalog
from storage.db import MIGRATIONS, open_engine


def _ids(cat: SqlCatalog, *forms: str) -> set[int]:
    """The photos a word finds: those of the taxa whose names hold it, and those whose own text holds it."""
    taxa, rows = cat.text_matches([list(forms)], 100)[0]
    return {int(i) for i in cat.taxon_photos(taxa)} | {pid for pid, _, _ in rows}


def _photo(i: int, **names) -> Photo:
    return Photo(path=f"/mine/{i}.jpg", sha256=f"{i + 1:064x}", **names)


def test_a_catalog_made_before_the_index_gets_its_photos_text_when_opened(tmp_path):
    db = tmp_path / "c.sqlite"
    old = create_engine(f"sqlite:///{db}")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with old.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0011_camtrap_packages")
    before = SqlCatalog(old)
    ids = before.add_photos([_photo(1, scientific_name="Leopardus pardalis", common_name="Ocelot",
                                    class_name="Mammalia", order="Carnivora"),
                             _photo(2, caption="A heron at dawn", extra={"place_guess": "Camargue, France"})])
    old.dispose()
    cat = SqlCatalog(open_engine(db))  # opening migrates to head
    assert _ids(cat, "ocelot") == {ids[0]} and _ids(cat, "carnivora") == {ids[0]}
    assert _ids(cat, "camargue") == {ids[1]} and _ids(cat, "heron") == {ids[1]}
    (taxa, own), (no_taxa, place) = cat.text_matches([["ocelot"], ["camargue"]], 10)
    assert len(taxa) == 1 and own == []  # a name stands for its taxon's photos; a photo's own text for itself
    assert no_taxa == [] and [(i, n) for i, _, n in place] == [(ids[1], False)]  # a place is a note


def test_the_triggers_keep_the_index_in_step_with_every_write(tmp_path):
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    a, b, c = cat.add_photos([_photo(1, scientific_name="Vulpes vulpes", common_name="Red Fox"),
                              _photo(2, extra={"tag_list": ["night", "trail"], "synonyms": "Canis vulpes",
                                               "attributes": {"belly": "white"}}),
                              _photo(3)])
    assert _ids(cat, "foxes") == {a} and _ids(cat, "fox") == {a}  # porter: one stem
    assert _ids(cat, "trail") == {b} and _ids(cat, "canis") == {b}
    assert [n for _, _, n in cat.text_matches([["canis"]], 10)[0][1]] == [True]  # a synonym is a name
    assert _ids(cat, "white") == set() and _ids(cat, "belly") == set()  # ground truth is never text
    cat.update_metadata([(c, _photo(3, scientific_name="Ardea cinerea", common_name="Grey Heron"))], "sheet.csv")
    assert _ids(cat, "herons") == {c}
    with sqlite3.connect(tmp_path / "c.sqlite") as conn:  # a correction made in the sqlite3 shell
        conn.execute("UPDATE taxa SET common_name = 'Renard roux' WHERE scientific_name = 'Vulpes vulpes'")
        conn.execute("DELETE FROM photos WHERE id = ?", (b,))
    assert _ids(cat, "renard") == {a} and _ids(cat, "fox") == set()
    assert _ids(cat, "trail") == set() and _ids(cat, "canis") == set()
    assert _ids(cat, '"fox" OR *') == set()  # FTS5 syntax in a word is text, never a query


def test_camera_trap_observations_name_their_photos(tmp_path):
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    ids = cat.add_photos([_photo(i) for i in range(1, 4)])
    store = SqlCamtrapStore(cat.engine)
    event = store.upsert_events([Event(key="e1")])["e1"]
    store.set_captures([Capture(photo_id=ids[1], event_key="e1"), Capture(photo_id=ids[2], event_key="e1")])
    store.add_observations([Observation(level="media", type="animal", photo_id=ids[0],
                                        scientific_name="Meles meles")])
    assert _ids(cat, "meles") == {ids[0]}
    store.add_observations([Observation(level="event", type="animal", event_id=event,
                                        scientific_name="Capreolus capreolus")])
    assert _ids(cat, "capreolus") == {ids[1], ids[2]}  # an event's observation names each of its frames


def test_a_photo_with_no_text_of_its_own_has_no_row(tmp_path):
    """A catalog of millions stays small: names live once per taxon, and only photos with text of their own
    (a caption, a place, a tag, a synonym) have a row."""
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    cat.add_photos([_photo(i, scientific_name="Vulpes vulpes", genus="Vulpes") for i in range(1, 51)]
                   + [_photo(99, caption="by the river")])
    with sqlite3.connect(tmp_path / "c.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM catalog_text").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM catalog_taxon_text").fetchone()[0] == 1  # one taxon, one row
    assert len(_ids(cat, "vulpes")) == 50
