"""The filter columns (core.search.filter_columns) select exactly what the catalog's filter_ids selects, on
random catalogs in real SQLite: taxa at every rank and common names in any case, dates, months (across the
new year too), boxes (across 180 degrees, and with edges on and a hair beside the photos' places: both compare
the 64-bit coordinates, edges included), licences, explicit ids, and their combinations. And they follow the catalog:
photos added, edited, deleted; another database; damaged files; a second process sharing the files; the
background reading while the catalog answers."""
from __future__ import annotations

import json
import logging
import random
from datetime import date, timedelta

import numpy as np
import pytest
from sqlalchemy import text

from core.contracts.records import Filters, Photo
from core.search import filter_columns as fc_module
from core.search.filter_columns import COLUMNS, FilterColumns
from storage.catalog import SqlCatalog
from storage.db import open_engine

LICENCES = ["cc-by", "CC-BY 4.0", "cc-by-nc", "CC-BY-NC-SA", "cc0", "cc-by-sa", "", "All rights reserved", "a_b"]
TYPED_LICENCES = ["cc-by", "cc-by*", "cc-by-4.0", "nc", "sa", "cc0", "a_b", "_", "all rights reserved", "none-such"]
FAMILIES = ["Ranidae", "Accipitridae", "Ériccaceae"]
COMMON = ["Common frog", "SPARROWHAWK", "Straße thistle", "bell heather"]
EDGES = [-180.0, 180.0, -90.0, 90.0, 0.0, 15.0, 15.000000001, 14.999999999, 179.99999999, -179.99999999, 33.3]


def _photo(rnd: random.Random, i: int) -> Photo:
    fam = rnd.randrange(len(FAMILIES))
    genus = f"Genus{fam}{rnd.randrange(3)}"
    named = rnd.random() < 0.9
    day = date(2015, 1, 1) + timedelta(days=rnd.randrange(3650)) if rnd.random() < 0.85 else None
    if rnd.random() < 0.1:
        lat, lon = rnd.choice(EDGES[2:]), rnd.choice(EDGES)  # on the edges a box may be given
    elif rnd.random() < 0.9:
        lat, lon = rnd.uniform(-90, 90), rnd.uniform(-180, 180)
    else:
        lat, lon = (None, None) if rnd.random() < 0.5 else (rnd.uniform(-90, 90), None)
    return Photo(path=f"/photos/p{i}.jpg", sha256=f"{i:064x}",
                 scientific_name=f"{genus} species{rnd.randrange(4)}" if named else "",
                 genus=genus if named else "", family=FAMILIES[fam] if named else "",
                 order="Anura" if named and fam == 0 else "", kingdom="Animalia" if named and fam < 2 else "",
                 common_name=rnd.choice(COMMON) if named and rnd.random() < 0.5 else "",
                 observed_on=day, latitude=lat, longitude=lon, license=rnd.choice(LICENCES))


def _catalog(tmp_path, n: int, seed: int) -> tuple[SqlCatalog, list[Photo]]:
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    rnd = random.Random(seed)
    photos = [_photo(rnd, i) for i in range(n)]
    for start in range(0, n, 500):
        cat.add_photos(photos[start:start + 500])
    return cat, photos


def _box(rnd: random.Random, photos: list[Photo]) -> tuple[float, float, float, float]:
    """A random box; half of them with an edge on, or a hair beside, some photo's place."""
    south, north = sorted(rnd.uniform(-90, 90) for _ in range(2))
    west, east = rnd.uniform(-180, 180), rnd.uniform(-180, 180)  # west > east: across 180 degrees
    placed = [p for p in photos if p.latitude is not None and p.longitude is not None]
    if rnd.random() < 0.5:
        p = rnd.choice(placed)
        hair = rnd.choice([0.0, 1e-9, -1e-9, 1e-6, -1e-6])
        which = rnd.randrange(4)
        if which == 0:
            south = min(p.latitude + hair, north)
        elif which == 1:
            north = max(p.latitude + hair, south)
        elif which == 2:
            west = p.longitude + hair
        else:
            east = p.longitude + hair
    if rnd.random() < 0.2:
        west, east = rnd.choice(EDGES[:2] + EDGES[4:]), rnd.choice(EDGES[:2] + EDGES[4:])
    clamp = lambda v, lim: max(-lim, min(lim, v))  # noqa: E731
    return clamp(west, 180), clamp(south, 90), clamp(east, 180), clamp(north, 90)


def _filters(rnd: random.Random, photos: list[Photo]) -> Filters:
    parts: dict = {}
    names = ([p.scientific_name for p in photos[:50] if p.scientific_name] + [f"genus{f}{g}" for f in range(3)
             for g in range(3)] + [f.upper() for f in FAMILIES] + ["anura", "ANIMALIA", "common FROG", "sparrowhawk",
             "STRASSE thistle", "straße THISTLE", "Bell Heather", "no such taxon"])
    while not parts:
        if rnd.random() < 0.35:
            parts["taxon"] = rnd.choice(names)
        if rnd.random() < 0.3:
            start = date(2014, 6, 1) + timedelta(days=rnd.randrange(4000))
            if rnd.random() < 0.7:
                parts["date_from"] = start
            if rnd.random() < 0.7:
                parts["date_to"] = start + timedelta(days=rnd.randrange(-10, 1500))
        if rnd.random() < 0.3:
            parts["months"] = rnd.choice([(5, 6), (11, 12, 1, 2), (12, 1), (7,), (13,), (0, 3), tuple(range(1, 13))])
        if rnd.random() < 0.35:
            parts["bbox"] = _box(rnd, photos)
        if rnd.random() < 0.25:
            parts["license"] = rnd.choice(TYPED_LICENCES)
        if rnd.random() < 0.1:
            parts["ids"] = tuple(rnd.sample(range(-5, len(photos) + 20), rnd.randrange(0, 60)))
    return Filters(**parts)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_columns_select_exactly_what_the_catalog_selects(tmp_path, seed):
    cat, photos = _catalog(tmp_path, 3000, seed)
    columns = FilterColumns(cat, tmp_path / "columns")
    assert columns.ready(wait=True)
    rnd = random.Random(seed)
    kinds = set()
    for _ in range(400):
        f = _filters(rnd, photos)
        got, want = columns.pool(f), cat.filter_ids(f)
        assert got is not None
        assert type(got) is np.ndarray and got.dtype == np.int64, type(got)
        assert np.array_equal(got, want), f"{f}: {len(got)} vs {len(want)} photos"
        kinds |= set(f.to_json())
    assert kinds == {"taxon", "date_from", "date_to", "months", "bbox", "license", "ids"}
    for name in ("genus01", "RANIDAE", "common frog", "straße THISTLE", "Bell Heather", "no such taxon", "x"):
        assert columns.taxon_known(name) is cat.taxon_known(name), name


def test_every_kind_alone_on_fixed_cases(tmp_path):
    cat, photos = _catalog(tmp_path, 1500, 7)
    columns = FilterColumns(cat, tmp_path / "columns")
    cases = [Filters(taxon="genus01"), Filters(taxon="RANIDAE"), Filters(taxon="Animalia"), Filters(taxon="anura"),
             Filters(taxon="common frog"), Filters(taxon="strasse THISTLE"), Filters(taxon="Ériccaceae".upper()),
             Filters(taxon="nothing"), Filters(date_from=date(2018, 1, 1)), Filters(date_to=date(2016, 12, 31)),
             Filters(months=(11, 12, 1, 2)), Filters(months=(13,)), Filters(bbox=(-40.0, 15.0, 40.0, 65.0)),
             Filters(bbox=(170.0, -60.0, -170.0, 60.0)), Filters(bbox=(15.0, 15.0, 15.0, 15.0)),
             Filters(bbox=(-180.0, -90.0, 180.0, 90.0)), Filters(license="cc-by"), Filters(license="nc"),
             Filters(ids=(3, 2, 2, 99_999, -1)),
             Filters(taxon="genus11", months=(5, 6), bbox=(-180.0, -30.0, 180.0, 60.0), license="cc-by*")]
    for f in cases:
        got = columns.pool(f)
        assert got is not None and np.array_equal(got, cat.filter_ids(f)), f
    # the fixed cases are not all empty: the comparison compared something
    assert len(columns.pool(Filters(months=(11, 12, 1, 2)))) > 300
    assert len(columns.pool(Filters(bbox=(170.0, -60.0, -170.0, 60.0)))) > 0


def _reads(cat: SqlCatalog) -> list[tuple[int, int]]:
    """Records the (after, upto) of every filter_rows call the columns make."""
    calls: list[tuple[int, int]] = []
    original = cat.filter_rows

    def counting(after_id, upto_id, chunk=100_000):
        calls.append((after_id, upto_id))
        return original(after_id, upto_id, chunk)

    cat.filter_rows = counting
    return calls


def test_the_columns_follow_the_catalog(tmp_path):
    cat, photos = _catalog(tmp_path, 800, 3)
    columns = FilterColumns(cat, tmp_path / "columns")
    reads = _reads(cat)
    every = Filters(bbox=(-180.0, -90.0, 180.0, 90.0))
    frogs = Filters(taxon="ranidae")

    def same(f: Filters) -> np.ndarray:
        got = columns.pool(f)
        assert got is not None and np.array_equal(got, cat.filter_ids(f))
        return got

    before = same(frogs)
    assert reads == [(0, 800)]
    # photos added: only the new ones are read
    new = cat.add_photos([Photo(path=f"/new/{i}.jpg", sha256=f"{10_000 + i:064x}", scientific_name="Rana temporaria",
                                family="Ranidae", latitude=1.0, longitude=2.0) for i in range(5)])
    got = same(frogs)
    assert reads[-1] == (800, 805) and set(new) <= set(got.tolist()) and len(got) == len(before) + 5
    # a photo's taxon and place edited: read again whole
    cat.update_metadata([(new[0], Photo(path="", sha256="", scientific_name="Buteo buteo", family="Accipitridae",
                                        latitude=-45.0, longitude=100.0))])
    got = same(frogs)
    assert reads[-1] == (0, 805) and new[0] not in got.tolist()
    assert new[0] in same(Filters(bbox=(99.0, -46.0, 101.0, -44.0))).tolist()
    # photos deleted (with the sqlite3 shell, say): read again whole; the deleted ones are gone
    with cat.engine.begin() as conn:
        conn.execute(text("DELETE FROM photo_vectors WHERE photo_id IN (1, 2, 3)"))
        conn.execute(text("DELETE FROM photos WHERE id IN (1, 2, 3)"))
    got = same(every)
    assert reads[-1] == (0, 805) and not {1, 2, 3} & set(got.tolist())
    # the largest photo deleted and a new one given its id: still read again whole
    with cat.engine.begin() as conn:
        conn.execute(text("DELETE FROM photos WHERE id = 805"))
    cat.add_photos([Photo(path="/new/again.jpg", sha256=f"{99_999:064x}", family="Ranidae", scientific_name="Rana x")])
    n = len(reads)
    same(frogs)
    assert len(reads) == n + 1 and reads[-1][0] == 0
    # nothing changed: nothing read, and the pools are the ones remembered (read-only, core.search.pool_memo)
    first = same(frogs)
    assert same(frogs) is first and not first.flags.writeable
    anew = columns.pool(frogs, remembered=False)  # named anew: the same photos, another (writable) array
    assert anew is not first and anew.flags.writeable and np.array_equal(anew, first)
    same(every)
    assert len(reads) == n + 1
    # a change after a pool was remembered: the next search gets the new photos, not the remembered pool
    more = cat.add_photos([Photo(path="/new/later.jpg", sha256=f"{99_998:064x}", family="Ranidae",
                                 scientific_name="Rana y")])
    assert set(more) <= set(same(frogs).tolist())


def test_a_second_process_maps_the_files_and_a_damaged_file_is_made_again(tmp_path, caplog):
    cat, _ = _catalog(tmp_path, 600, 4)
    FilterColumns(cat, tmp_path / "columns").ready(wait=True)
    other = SqlCatalog(open_engine(tmp_path / "c.sqlite"))  # as another process opens it
    reads = _reads(other)
    second = FilterColumns(other, tmp_path / "columns")
    f = Filters(months=(3, 4))
    assert np.array_equal(second.pool(f), other.filter_ids(f)) and reads == []
    # the ids file overwritten with other values: seen when mapped, and made again
    meta = json.loads((tmp_path / "columns" / "columns.json").read_text())
    ids_file = tmp_path / "columns" / f"g{meta['generation']}-ids.bin"
    ids_file.write_bytes(np.arange(600, dtype=np.int64)[::-1].tobytes())
    third = FilterColumns(other, tmp_path / "columns")
    with caplog.at_level(logging.WARNING, logger="core.search.filter_columns"):
        assert np.array_equal(third.pool(f), other.filter_ids(f))
    assert reads == [(0, 600)] and "do not match their record" in caplog.text
    # a truncated file likewise
    meta = json.loads((tmp_path / "columns" / "columns.json").read_text())
    path = tmp_path / "columns" / f"g{meta['generation']}-month_bits.bin"
    path.write_bytes(path.read_bytes()[:100])
    assert np.array_equal(FilterColumns(other, tmp_path / "columns").pool(f), other.filter_ids(f))
    assert reads == [(0, 600), (0, 600)]


def test_columns_of_the_older_format_are_made_anew_in_a_generation_of_their_own(tmp_path):
    """Files of format 1 (the R*Tree's four 32-bit bounds, before migration 0009) are not read; the new files
    take a generation above theirs (a reader of another process may still have the old ones mapped: they are
    never truncated) and the old ones are removed once the new ones are written."""
    cat, _ = _catalog(tmp_path, 300, 7)
    folder = tmp_path / "columns"
    folder.mkdir()
    old = [folder / f"g3-{name}.bin" for name in ("ids", "min_lat", "max_lat", "min_lon", "max_lon")]
    for path in old:
        path.write_bytes(b"\0" * 8 * 300)
    (folder / "columns.json").write_text(json.dumps({"format": 1, "generation": 3, "rows": 300, "max_id": 300}))
    f = Filters(bbox=(-60.0, -30.0, 60.0, 30.0))
    columns = FilterColumns(cat, folder)
    columns.ready(wait=True)
    assert np.array_equal(columns.pool(f), cat.filter_ids(f)) and len(cat.filter_ids(f))
    meta = json.loads((folder / "columns.json").read_text())
    assert meta["generation"] == 4 and not any(path.exists() for path in old)
    assert {p.name for p in folder.glob("g*.bin")} == {f"g4-{name}.bin" for name in COLUMNS}


def test_columns_of_another_catalog_are_not_taken(tmp_path):
    cat, _ = _catalog(tmp_path / "a", 300, 5)
    FilterColumns(cat, tmp_path / "columns").ready(wait=True)
    other, _ = _catalog(tmp_path / "b", 300, 6)  # the same ids and count, other photos
    reads = _reads(other)
    f = Filters(taxon="genus01")
    assert np.array_equal(FilterColumns(other, tmp_path / "columns").pool(f), other.filter_ids(f))
    assert reads == [(0, 300)]


def test_a_large_catch_up_runs_in_the_background_while_the_catalog_answers(tmp_path, monkeypatch):
    cat, _ = _catalog(tmp_path, 400, 8)
    monkeypatch.setattr(fc_module, "SYNC_ROWS", 100)
    columns = FilterColumns(cat, tmp_path / "columns")
    f = Filters(months=(1,))
    assert columns.pool(f) is None  # being read: the caller asks the catalog
    assert columns.ready(wait=True)  # waits for the reading
    assert np.array_equal(columns.pool(f), cat.filter_ids(f))


def test_columns_that_cannot_be_written_leave_the_catalog_answering_with_a_notice(tmp_path, caplog):
    cat, _ = _catalog(tmp_path, 100, 9)
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    columns = FilterColumns(cat, blocked / "columns")
    with caplog.at_level(logging.ERROR, logger="core.search.filter_columns"):
        assert columns.pool(Filters(months=(1,))) is None
    assert columns.notices and "answered by the catalog" in columns.notices[0]
    assert "could not be made" in caplog.text


@pytest.mark.parametrize("enabled", [True, False])
def test_the_corpus_pool_comes_from_the_columns_unless_turned_off(tmp_path, enabled):
    from core.config import load_settings
    from core.contracts.errors import NotFoundError
    from core.search.corpus import Corpus
    from core.vectors.index_store import IndexStore

    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), filter_columns=enabled)
    cat = SqlCatalog(open_engine(settings.path("ecolens.sqlite")))
    rnd = random.Random(11)
    photos = [_photo(rnd, i) for i in range(500)]
    cat.add_photos(photos)
    corpus = Corpus(cat, IndexStore(settings.path()), None, settings)
    for f in (Filters(taxon="genus01", months=(11, 12, 1)), Filters(bbox=(170.0, -80.0, -170.0, 80.0))):
        assert np.array_equal(corpus.pool(f), cat.filter_ids(f))
    assert corpus.pool(Filters()) is None
    with pytest.raises(NotFoundError):
        corpus.pool(Filters(taxon="no such taxon"))
    made = (settings.path("index", "filter-columns", "columns.json")).exists()
    assert made is enabled and corpus.filter_columns.ready(wait=False) is enabled


def test_photos_read_by_id_are_the_photos_the_catalog_holds(tmp_path):
    """get_photos (plain SQL, for speed) reads every field as the ORM's all_photos does."""
    cat, photos = _catalog(tmp_path, 300, 12)
    cat.update_metadata([(5, Photo(path="", sha256="", caption="a caption", rights_holder="Renée",
                                   extra={"gbifID": 7, "note": "ü"}))])
    cat.add_photos([Photo(path="/elsewhere/x.jpg", sha256="not a hex hash", extra={"k": [1, 2]})])
    every = {p.id: p for p in cat.all_photos()}
    ids = [5, 301, 3, 999_999, 3, *range(100, 140)]
    assert cat.get_photos(ids) == [every[i] for i in ids if i in every]
    assert every[5].extra["note"] == "ü" and every[301].sha256 == "not a hex hash" and every[5].caption == "a caption"


def test_a_catalog_that_lost_rows_without_its_triggers_is_read_again(tmp_path):
    """A catalog restored from a copy, or recovered, can keep its state (largest id, change count, token) and
    still miss rows: columns taken over from the files are counted against its photos."""
    cat, _ = _catalog(tmp_path, 400, 13)
    FilterColumns(cat, tmp_path / "columns").ready(wait=True)
    with cat.engine.begin() as conn:  # rows lost where no trigger saw it
        conn.execute(text("DROP TRIGGER photos_changed_delete"))
        conn.execute(text("DELETE FROM photo_vectors WHERE photo_id BETWEEN 100 AND 120"))
        conn.execute(text("DELETE FROM photos WHERE id BETWEEN 100 AND 120"))
    reads = _reads(cat)
    f = Filters(bbox=(-180.0, -90.0, 180.0, 90.0))
    got = FilterColumns(cat, tmp_path / "columns").pool(f)
    assert np.array_equal(got, cat.filter_ids(f)) and not set(range(100, 121)) & set(got.tolist())
    assert reads == [(0, 400)]
