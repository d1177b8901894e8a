"""The lean catalog of migration 0007: a database at 0006 with photos in it migrates, and every filter finds
the same photos as a plain reading of the rows written before; the photos read back as they were written;
the row stays small (bytes per photo, measured with SQLite's dbstat table); and the way back (downgrade)
gives the old rows again."""
from __future__ import annotations

import json
import random
import sqlite3
from datetime import date

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text

from core.contracts.records import Filters, Photo
from core.licences import matches, parse_licence, parse_licence_filter
from storage.catalog import SqlCatalog
from storage.db import MIGRATIONS, open_engine

OLD_COLUMNS = ("path", "sha256", "width", "height", "bytes", "scientific_name", "common_name", "kingdom", "phylum",
               "class_name", "order", "family", "genus", "observed_on", "latitude", "longitude", "license",
               "rights_holder", "caption", "source", "extra", "added_at", "observed_month", "license_code",
               "license_version")
LICENCES = ["CC-BY-NC", "https://creativecommons.org/licenses/by/4.0/", "cc0", "", "CC-BY", "cc-by-sa"]
URL = "https://inaturalist-open-data.s3.amazonaws.com/photos/{}/medium.jpg"


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def _old_rows(n: int, rnd: random.Random) -> list[dict]:
    rows = []
    for i in range(n):
        genus = rnd.choice(["Rana", "Bufo", "Ardea", "Épervier"])
        placed = rnd.random() < 0.9
        day = date(rnd.randint(2015, 2024), rnd.randint(1, 12), rnd.randint(1, 28)) if rnd.random() < 0.95 else None
        lic = rnd.choice(LICENCES)
        code = parse_licence(lic)
        rows.append({"path": URL.format(1000 + i) if i % 7 else f"/data/own photos/{i}.jpg",
                     "sha256": f"{i:064x}" if i % 50 else f"placeholder-{i}", "width": 640, "height": 480,
                     "bytes": 1000 + i, "scientific_name": f"{genus} sp{i % 5}", "common_name": "" if i % 3 else "Toad",
                     "kingdom": "Animalia", "phylum": "", "class_name": "", "order": "", "family": f"{genus}idae",
                     "genus": genus, "observed_on": day.isoformat() if day else None,
                     "latitude": rnd.uniform(-89, 89) if placed else None,
                     "longitude": rnd.uniform(-180, 180) if placed else None, "license": lic,
                     "rights_holder": "" if i % 4 else "(c) someone", "caption": "", "source": "inat-csv",
                     "extra": json.dumps({"observation": i} if i % 5 == 0 else {}), "added_at": "2024-01-01 10:00:00",
                     "observed_month": day.month if day else None, "license_code": code.code,
                     "license_version": code.version})
    return rows


def _at_0006(db, rows) -> None:
    old = create_engine(f"sqlite:///{db}")
    cfg = _config()
    with old.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0006_licence_codes")
        cols = ", ".join(f'"{c}"' for c in OLD_COLUMNS)
        values = ", ".join(f":{c}" for c in OLD_COLUMNS)
        conn.execute(text(f"INSERT INTO photos ({cols}) VALUES ({values})"), rows)
        conn.execute(text("INSERT INTO vector_sets (id, model_id, dim, created_at) VALUES (1, 'm', 4, '2024-01-01')"))
        conn.execute(text("INSERT INTO photo_vectors (vector_set_id, photo_id) "
                          "SELECT 1, id FROM photos WHERE id % 2 = 0"))
    old.dispose()


def _plain(rows: list[dict], f: Filters) -> list[int]:
    """The ids a plain Python reading of the 0006 rows gives for a filter (the rule of each filter)."""
    out = []
    for i, r in enumerate(rows, start=1):
        names = [r[c].lower() for c in ("scientific_name", "common_name", "kingdom", "phylum", "class_name", "order",
                                        "family", "genus") if r[c]]
        day = date.fromisoformat(r["observed_on"]) if r["observed_on"] else None
        if f.taxon and f.taxon.lower() not in names:
            continue
        if f.months and (day is None or day.month not in f.months):
            continue
        if f.date_from and (day is None or day < f.date_from):
            continue
        if f.date_to and (day is None or day > f.date_to):
            continue
        if f.license and not matches(parse_licence_filter(f.license), parse_licence(r["license"])):
            continue
        if f.bbox:
            w, s, e, n = f.bbox
            if r["latitude"] is None or not (s <= r["latitude"] <= n and w <= r["longitude"] <= e):
                continue
        out.append(i)
    return out


FILTERS = [Filters(taxon="rana"), Filters(taxon="ranidae"), Filters(taxon="TOAD"), Filters(taxon="Épervier"),
           Filters(taxon="bufo sp3"), Filters(months=(5, 6)), Filters(months=(12,)), Filters(license="cc-by"),
           Filters(license="nc"), Filters(license="cc-by-4.0"), Filters(bbox=(-40.0, 15.0, 40.0, 65.0)),
           Filters(date_from=date(2018, 3, 1), date_to=date(2020, 2, 29)),
           Filters(taxon="bufo", months=(1, 2, 3), bbox=(-180.0, -90.0, 0.0, 90.0)),
           Filters(license="cc0", date_from=date(2022, 1, 1))]


def test_a_0006_catalog_with_photos_migrates_and_every_filter_finds_the_same_photos(tmp_path):
    rows = _old_rows(1500, random.Random(4))
    db = tmp_path / "old.sqlite"
    _at_0006(db, rows)
    cat = SqlCatalog(open_engine(db))
    for f in FILTERS:
        assert cat.filter_ids(f).tolist() == _plain(rows, f), f
    photos = cat.get_photos(range(1, len(rows) + 1))
    for r, p in zip(rows, photos):
        assert (p.path, p.sha256, p.scientific_name, p.common_name, p.family, p.license, p.rights_holder) == (
            r["path"], r["sha256"], r["scientific_name"], r["common_name"], r["family"], r["license"],
            r["rights_holder"])
        assert p.observed_on == (date.fromisoformat(r["observed_on"]) if r["observed_on"] else None)
        assert (p.latitude, p.longitude, p.bytes) == (r["latitude"], r["longitude"], r["bytes"])
        assert p.extra == json.loads(r["extra"])
    assert cat.indexed_ids(1) == set(range(2, len(rows) + 1, 2))
    assert cat.ids_for_hashes([rows[9]["sha256"], rows[49]["sha256"], "f" * 64]) == {rows[9]["sha256"]: 10,
                                                                                    rows[49]["sha256"]: 50}
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # places in the plain index of 0009 (the R*Tree and its triggers are gone)
    assert con.execute("SELECT count(*) FROM photos INDEXED BY ix_photos_place WHERE latitude IS NOT NULL"
                       ).fetchone()[0] == sum(r["latitude"] is not None for r in rows)
    assert not con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'photo_places%'").fetchall()
    # the view shows the rows as the old table did
    view = con.execute("SELECT path, sha256, genus, observed_on, license, license_code FROM photo_details "
                       "ORDER BY id").fetchall()
    assert view == [(r["path"], r["sha256"], r["genus"], r["observed_on"], r["license"], r["license_code"])
                    for r in rows]
    # a new photo after the migration shares the lookups and is found by the same filters
    new = Photo(path=URL.format(99), sha256="e" * 64, scientific_name="Rana sp1", genus="Rana", family="Ranaidae",
                observed_on=date(2023, 5, 2), latitude=45.0, longitude=5.0, license="CC-BY-NC")
    cat.add_photos([new])
    assert new.id == len(rows) + 1 and new.id in cat.filter_ids(Filters(taxon="rana", months=(5,), license="nc"))


def test_the_way_back_gives_the_old_rows(tmp_path):
    rows = _old_rows(300, random.Random(5))
    db = tmp_path / "old.sqlite"
    _at_0006(db, rows)
    open_engine(db).dispose()  # to head
    cfg = _config()
    eng = create_engine(f"sqlite:///{db}")
    with eng.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0006_licence_codes")
    cols = [c for c in OLD_COLUMNS if c not in ("added_at", "extra")]  # (added_at is the ingest run's time now)
    got = [dict(zip(cols, r)) for r in sqlite3.connect(db).execute(
        "SELECT " + ", ".join(f'"{c}"' for c in cols) + " FROM photos ORDER BY id")]
    assert got == [{c: r[c] for c in cols} for r in rows]


@pytest.mark.parametrize("n", [6000])
def test_the_catalog_stays_under_250_bytes_a_photo(tmp_path, n):
    """iNaturalist-like photos (URLs, 40 species in 8 genera, dates, places, licences, a vector each) added in
    batches as ingest adds them: the tables and indexes that grow with the photos (not the taxa, licences or
    prefixes, which grow with the species) stay under the issue's 250 bytes a photo."""
    rnd = random.Random(6)
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    vs = cat.vector_set("m", 4)
    for start in range(0, n, 1000):
        batch = [Photo(path=URL.format(10_000_000 + i), sha256=f"{rnd.getrandbits(256):064x}",
                       scientific_name=f"Genus{i % 8} species{i % 40}", genus=f"Genus{i % 8}", family="Family0",
                       observed_on=date(rnd.randint(2015, 2024), rnd.randint(1, 12), rnd.randint(1, 28)),
                       latitude=rnd.uniform(-60, 70), longitude=rnd.uniform(-180, 180),
                       license=rnd.choice(["cc-by-nc", "cc-by", "cc0"]), source="precomputed")
                 for i in range(start, start + 1000)]
        cat.mark_indexed(vs.id, cat.add_photos(batch))
    con = sqlite3.connect(tmp_path / "c.sqlite")
    sizes = dict(con.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    per_photo = [name for name in sizes if name.startswith(("photos", "ix_photos", "photo_vectors"))
                 or name == "sqlite_autoindex_photo_vectors_1"]
    total = sum(sizes[name] for name in per_photo) / n
    assert {"photos", "ix_photos_place", "ix_photos_hash_prefix", "photo_vectors"} <= set(per_photo)
    assert total <= 250, {name: round(sizes[name] / n, 1) for name in per_photo}
    print(f"catalog: {total:.0f} bytes a photo", {name: round(sizes[name] / n, 1) for name in per_photo})


def test_hashes_are_looked_up_on_their_index_not_by_scanning_the_photos(tmp_path):
    """SQLite uses the expression index only for the expression it indexes, written out: with the prefix's
    length as bound parameters every lookup read the whole table (an ingest's deduplication grew with the
    square of the catalog)."""
    from storage.photo_rows import HASH_LOOKUP

    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    photos = [Photo(path=URL.format(i), sha256=f"{i:064x}") for i in range(1, 301)]
    cat.add_photos(photos)
    con = sqlite3.connect(tmp_path / "c.sqlite")
    plan = " ".join(row[-1] for row in con.execute("EXPLAIN QUERY PLAN " + HASH_LOOKUP.format("?, ?"),
                                                   (b"\0" * 8, b"\1" * 8)))
    assert "USING INDEX ix_photos_hash_prefix" in plan, plan
    assert cat.ids_for_hashes([f"{7:064x}", f"{300:064x}", "f" * 64, "not-a-hash"]) == {f"{7:064x}": 7,
                                                                                       f"{300:064x}": 300}


@pytest.mark.parametrize("box", [(-10.0, 40.0, 20.0, 50.0), (170.0, -5.0, -170.0, 5.0)])
def test_a_box_is_read_from_the_place_index_alone(tmp_path, box):
    """The catalog's box query (a search before the filter columns are made, or with them off) reads a band of
    the place index of 0009 and compares the longitude on its entries, never the photo rows; a box across 180
    degrees reads two bands. Edges are included, in 64-bit coordinates."""
    from storage.filter_sql import places_in

    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    west, south, east, north = box
    places = [(south, west), (north, east), (south - 1e-9, west), (None, None), (45.0, 0.0), (0.0, 179.5)]
    cat.add_photos([Photo(path=URL.format(i), sha256=f"{i:064x}", latitude=lat, longitude=lon)
                    for i, (lat, lon) in enumerate(places, start=1)])
    with cat.engine.connect() as conn:
        stmt = places_in(*box).compile(conn, compile_kwargs={"literal_binds": True})
        plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {stmt}"))
    assert "COVERING INDEX ix_photos_place" in plan and "SCAN photos" not in plan, plan
    inside = {i for i, (lat, lon) in enumerate(places, start=1) if lat is not None and south <= lat <= north
              and (west <= lon <= east if west <= east else lon >= west or lon <= east)}
    assert cat.filter_ids(Filters(bbox=box)).tolist() == sorted(inside) and 1 in inside and 3 not in inside
