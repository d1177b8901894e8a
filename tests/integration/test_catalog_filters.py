"""Catalog filters on real SQLite through the indexes of migrations 0003/0004: taxon at any rank, months,
and bounding boxes (R*Tree, also across 180 degrees), kept in step with inserts, updates and deletes."""
from datetime import date

from sqlalchemy import text

from core.records import Filters, Photo
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


def test_taxon_months_and_boxes(tmp_path):
    cat = _catalog(tmp_path)
    assert cat.filter_ids(Filters(taxon="ranidae")) == [1, 2]
    assert cat.filter_ids(Filters(taxon="COMMON TOAD")) == [3]
    assert cat.taxon_known("rana") and not cat.taxon_known("")
    assert cat.filter_ids(Filters(months=(5, 9))) == [1, 3]
    assert cat.filter_ids(Filters(bbox=(170.0, 40.0, -170.0, 55.0))) == [1, 2]  # across 180 degrees
    assert cat.filter_ids(Filters(bbox=(0.0, 40.0, 20.0, 55.0))) == [3]
    assert cat.filter_ids(Filters(bbox=(0.0, 40.0, 20.0, 55.0), months=(5,))) == []
    assert cat.filter_ids(Filters(taxon="rana", ids=(2, 3))) == [2]


def test_the_place_index_follows_updates_and_deletes(tmp_path):
    cat = _catalog(tmp_path)
    with cat.engine.begin() as conn:
        conn.execute(text("UPDATE photos SET latitude = 10.0, longitude = 10.0 WHERE id = 3"))
        conn.execute(text("DELETE FROM photos WHERE id = 1"))
    assert cat.filter_ids(Filters(bbox=(0.0, 40.0, 20.0, 55.0))) == []
    assert cat.filter_ids(Filters(bbox=(0.0, 5.0, 20.0, 15.0))) == [3]
    assert cat.filter_ids(Filters(bbox=(170.0, 40.0, -170.0, 55.0))) == [2]
