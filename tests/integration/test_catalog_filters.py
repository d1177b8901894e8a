"""Catalog filters on real SQLite through the indexes of migrations 0003/0004: taxon at any rank, months,
and bounding boxes (the place index, also across 180 degrees), kept in step with inserts, updates and deletes."""
import random
from datetime import date

import numpy as np
import pytest
from sqlalchemy import text

from core.contracts.records import Filters, Photo
from storage.catalog import SqlCatalog
from storage.db import open_engine


def _catalog(tmp_path) -> SqlCatalog:
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    photos = [
        Photo(path="a", sha256="a" * 64, scientific_name="Rana aurora", genus="Rana", family="Ranidae",
              observed_on=date(2021, 5, 3), latitude=45.0, longitude=179.5),
        Photo(path="b", sha256="b" * 64, scientific_name="Rana temporaria", genus="Rana", family="Ranidae",
              observed_on=date(2022, 6, 9), latitude=50.0, longitude=-179.0),
        Photo(path="c", sha256="c" * 64, scientific_name="Bufo bufo", genus="Bufo", common_name="Common toad",
              observed_on=date(2022, 9, 1), latitude=50.0, longitude=10.0),
        Photo(path="d", sha256="d" * 64, scientific_name="Ardea herodias"),  # no date, no place
    ]
    cat.add_photos(photos)
    return cat


def _ids(cat: SqlCatalog, **filters) -> list[int]:
    got = cat.filter_ids(Filters(**filters))
    assert isinstance(got, np.ndarray) and got.dtype == np.int64
    return got.tolist()


def test_taxon_months_and_boxes(tmp_path):
    cat = _catalog(tmp_path)
    assert _ids(cat, taxon="ranidae") == [1, 2]
    assert _ids(cat, taxon="COMMON TOAD") == [3]
    assert cat.taxon_known("rana") and not cat.taxon_known("")
    assert _ids(cat, months=(5, 9)) == [1, 3]
    assert _ids(cat, bbox=(170.0, 40.0, -170.0, 55.0)) == [1, 2]  # across 180 degrees
    assert _ids(cat, bbox=(0.0, 40.0, 20.0, 55.0)) == [3]
    assert _ids(cat, bbox=(0.0, 40.0, 20.0, 55.0), months=(5,)) == []
    assert _ids(cat, taxon="rana", ids=(2, 3)) == [2]


def test_the_place_index_follows_updates_and_deletes(tmp_path):
    cat = _catalog(tmp_path)
    with cat.engine.begin() as conn:
        conn.execute(text("UPDATE photos SET latitude = 10.0, longitude = 10.0 WHERE id = 3"))
        conn.execute(text("DELETE FROM photos WHERE id = 1"))
    assert _ids(cat, bbox=(0.0, 40.0, 20.0, 55.0)) == []
    assert _ids(cat, bbox=(0.0, 5.0, 20.0, 15.0)) == [3]
    assert _ids(cat, bbox=(170.0, 40.0, -170.0, 55.0)) == [2]


def test_filters_match_a_plain_reading_of_the_rows(tmp_path):
    """A few thousand random photos: every filter (boxes on both sides of and across 180 degrees, months,
    licence, explicit ids longer than one query's parameter chunk, and their combinations) gives exactly the
    ids a plain Python reading of the same rows gives, ascending, without repeats."""
    rnd = random.Random(3)
    photos = []
    for i in range(3000):
        placed = rnd.random() < 0.9
        photos.append(Photo(path=f"p{i}", sha256=f"{i:064x}", genus=rnd.choice(["Rana", "Bufo", "Ardea"]),
                            observed_on=date(2020, rnd.randint(1, 12), 1) if rnd.random() < 0.95 else None,
                            latitude=rnd.uniform(-89, 89) if placed else None,
                            longitude=rnd.uniform(-180, 180) if placed else None,
                            license=rnd.choice(["cc0", "cc-by", "cc-by-nc"])))
    for lon in (180.0, -180.0, 179.0, -179.0):  # on the antimeridian and on a box's edges
        photos.append(Photo(path=f"edge{lon}", sha256=f"e{lon}".ljust(64, "0"), latitude=0.0, longitude=lon))
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    ids = cat.add_photos(photos)
    rows = list(zip(ids, photos))

    def inside(p, box):
        w, s, e, n = box
        if p.latitude is None or not s <= p.latitude <= n:
            return False
        return w <= p.longitude <= e if w <= e else (p.longitude >= w or p.longitude <= e)

    boxes = [(-40.0, 15.0, 40.0, 65.0), (150.0, -30.0, -150.0, 30.0), (179.0, -90.0, -179.0, 90.0),
             (-180.0, -90.0, 180.0, 90.0), (10.0, 80.0, 11.0, 85.0)]
    picked = tuple(rnd.sample(ids, 1200)) + tuple(ids[:50])  # longer than a chunk, with repeats
    for box in boxes:
        want = [i for i, p in rows if inside(p, box)]
        assert _ids(cat, bbox=box) == want, box
        assert _ids(cat, bbox=box, months=(5, 6)) == [
            i for i, p in rows if inside(p, box) and p.observed_on and p.observed_on.month in (5, 6)]
        assert _ids(cat, bbox=box, taxon="rana", ids=picked) == sorted(
            i for i, p in rows if i in set(picked) and inside(p, box) and p.genus == "Rana")
    assert _ids(cat, license="nc") == [i for i, p in rows if p.license == "cc-by-nc"]
    assert _ids(cat, ids=picked) == sorted(set(picked))
    assert _ids(cat, months=(13,)) == []


@pytest.mark.parametrize("mb", [0, 64])
def test_the_memory_map_follows_its_setting(tmp_path, mb):
    from sqlalchemy import text

    from app import build_services
    from core.config import load_settings

    settings = load_settings(environ={}, data_dir=str(tmp_path), sqlite_mmap_mb=mb)
    engine = build_services(settings).catalog.engine
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA mmap_size")).scalar() == mb << 20


def test_untaxed_names_the_photos_without_any_taxon_name_as_reading_the_photos_does(tmp_path):
    cat = _catalog(tmp_path)
    own = cat.add_photos([Photo(path="own/1.jpg", sha256="e" * 64), Photo(path="own/2.jpg", sha256="f" * 64,
                                                                          common_name="a frog")])
    ids = [1, 2, 3, 4, *own, 999]  # 999: no such photo
    assert cat.untaxed(ids) == {p.id for p in cat.get_photos(ids) if not p.taxon_names()} == {own[0]}
    assert cat.untaxed([]) == set()
