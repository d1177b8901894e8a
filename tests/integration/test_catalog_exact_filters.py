"""Exact filters on real SQLite: the licence filter compares the codes migration 0006 keeps beside the raw
text (the same rule as core.licences.matches, with % and _ never wildcards); taxon names with non-ASCII
letters match whatever their case or Unicode form; names are stored NFC; a database made before 0006 gets
its licence codes without any raw value changing."""
from __future__ import annotations

import random
import sqlite3
import unicodedata

import pytest
from sqlalchemy import text

from core.contracts.records import Filters, Photo
from core.licences import matches, parse_licence, parse_licence_filter
from storage.catalog import SqlCatalog
from storage.db import open_engine

LICENCES = ["cc-by", "CC-BY", "CC-BY 4.0", "https://creativecommons.org/licenses/by/4.0/", "cc-by-nc", "CC_BY_NC_4_0",
            "CC-BY-NC-SA", "cc-by-sa", "cc0", "CC0 1.0", "%", "cc-by%", "a_b", "axb", "", "All rights reserved"]
TYPED = ["cc-by", "CC BY", "cc-by-4.0", "cc-by*", "cc-by-nc", "cc-by-nc*", "nc", "sa", "cc0", "%", "cc-by%", "a_b",
         "_", "cc%", "cc-by-%", "all rights reserved", "x'; DROP TABLE photos; --"]


def _ids(cat: SqlCatalog, **filters) -> list[int]:
    return cat.filter_ids(Filters(**filters)).tolist()


@pytest.fixture
def catalog(tmp_path):
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    rnd = random.Random(5)
    photos = [Photo(path=f"p{i}", sha256=f"{i:064x}", license=rnd.choice(LICENCES)) for i in range(400)]
    cat.add_photos(photos)
    return cat, photos


@pytest.mark.parametrize("typed", TYPED)
def test_the_licence_filter_in_sql_is_the_documented_rule(catalog, typed):
    cat, photos = catalog
    flt = parse_licence_filter(typed)
    assert _ids(cat, license=typed) == [p.id for p in photos if matches(flt, parse_licence(p.license))]


def test_cc_by_never_returns_cc_by_nc_and_wildcards_are_plain(catalog):
    cat, photos = catalog
    by_id = {p.id: p.license for p in photos}
    got = {by_id[i] for i in _ids(cat, license="cc-by")}
    assert got == {"cc-by", "CC-BY", "CC-BY 4.0", "https://creativecommons.org/licenses/by/4.0/"}
    assert {by_id[i] for i in _ids(cat, license="%")} == {"%"}
    assert {by_id[i] for i in _ids(cat, license="a_b")} == {"a_b"}  # never "axb"
    assert _ids(cat, license="_") == []
    assert cat.count() == 400  # the injection attempt was a value, nothing more


def test_taxon_names_match_whatever_their_unicode_form_and_case(tmp_path):
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    decomposed = unicodedata.normalize("NFD", "Épervier d'Europe")
    cat.add_photos([Photo(path="a", sha256="a" * 64, scientific_name="Accipiter nisus", common_name=decomposed),
                    Photo(path="b", sha256="b" * 64, scientific_name="  Rana   temporaria ", genus="Rana"),
                    Photo(path="c", sha256="c" * 64, common_name="Straße-Frosch")])
    stored = cat.get_photos([1, 2])
    assert unicodedata.is_normalized("NFC", stored[0].common_name) and stored[1].scientific_name == "Rana temporaria"
    for typed in ("Épervier d'Europe", "ÉPERVIER D'EUROPE", unicodedata.normalize("NFD", "épervier d'europe"),
                  "  épervier   d'europe "):
        assert _ids(cat, taxon=typed) == [1], typed
        assert cat.taxon_known(typed)
    assert _ids(cat, taxon="rana temporaria") == [2]
    assert _ids(cat, taxon="straße-frosch") == [3] and _ids(cat, taxon="STRA\u1e9eE-FROSCH") == [3]  # capital ẞ
    # (an all-ASCII name is looked up through the lower() indexes, so "strasse-frosch" does not find "Straße")
    assert _ids(cat, taxon="epervier d'europe") == []  # an accent is part of the name
    names = {n for n, _, _ in cat.taxon_names()}
    assert "Épervier d'Europe" in names and unicodedata.normalize("NFD", "Épervier d'Europe") not in names
    # a row written decomposed by an older version (not through add_photos) is found too
    with cat.engine.begin() as conn:
        conn.execute(text("UPDATE taxa SET common_name = :n WHERE id = (SELECT taxon_id FROM photos WHERE id = 3)"),
                     {"n": unicodedata.normalize("NFD", "Rainette verte")})
    assert _ids(cat, taxon="RAINETTE VERTE") == [3] and _ids(cat, taxon="rainette verte") == [3]


def test_an_older_database_gets_licence_codes_and_keeps_every_raw_value(tmp_path):
    """A catalog at migration 0005 with photos in it: opening it migrates to 0006, which adds the codes and
    leaves every row's raw licence (and everything else) as it was."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    from storage.db import MIGRATIONS

    db = tmp_path / "old.sqlite"
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    old = create_engine(f"sqlite:///{db}")
    with old.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005_label_instructions")
        for i, lic in enumerate(["CC-BY-NC", "https://creativecommons.org/licenses/by/4.0/", "cc0", "", "CC-BY"]):
            conn.execute(text("INSERT INTO photos (path, sha256, width, height, bytes, scientific_name, common_name, "
                              "kingdom, phylum, class_name, \"order\", family, genus, license, rights_holder, "
                              "caption, source, extra, added_at) VALUES (:p, :h, 0, 0, 0, '', '', '', '', '', '', '', "
                              "'', :l, '', '', 'folder', '{}', '2024-01-01')"),
                         {"p": f"p{i}", "h": f"{i:064x}", "l": lic})
    old.dispose()
    before = sqlite3.connect(db).execute("SELECT id, license, path, sha256 FROM photos ORDER BY id").fetchall()
    cat = SqlCatalog(open_engine(db))
    # (since 0007 the licence lives in a table of its own: the view photo_details writes it out per photo)
    after = sqlite3.connect(db).execute("SELECT id, license, path, sha256 FROM photo_details ORDER BY id").fetchall()
    assert after == before
    codes = sqlite3.connect(db).execute("SELECT license_code, license_version FROM photo_details "
                                        "ORDER BY id").fetchall()
    assert codes == [("cc-by-nc", ""), ("cc-by", "4.0"), ("cc0", ""), ("", ""), ("cc-by", "")]
    assert _ids(cat, license="cc-by") == [2, 5] and _ids(cat, license="cc-by-4.0") == [2]
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone() == ("ok",)
