"""Metadata that follows the CSV, on real SQLite + FAISS with the hash stand-in embedder: a folder ingested
first and its iNaturalist CSV after it gives the photos the CSV's species, dates, places and licences (and
the filters find them) without embedding them again; a re-exported CSV with a corrected identification
replaces the species and keeps the old one in the photo's history; an empty cell erases nothing; values
that cannot be read are left empty with a notice naming the row, the column, the value and the fix."""
from __future__ import annotations

import logging
from datetime import date

import pytest

from app import build_services
from core.config import load_settings
from core.contracts.records import Filters
from tests.photos import write_corpus, write_observations

N = 20


def _settings(tmp_path):
    return load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0)


def _row(i: int) -> dict:
    return {"taxon_name": "Ardea alba" if i % 2 else "Rana temporaria", "observed_on": f"2024-05-{i + 1:02d}",
            "latitude": f"{45 + i / 100:.2f}", "longitude": f"{-73 - i / 100:.2f}",
            "license": "CC-BY" if i % 3 else "CC-BY-NC", "user_login": f"obs{i}"}


@pytest.fixture
def folder_then_csv(tmp_path):
    csv_path = write_corpus(tmp_path / "corpus", N, _row)
    engine = build_services(_settings(tmp_path))
    first = engine.ingestor().run(tmp_path / "corpus" / "img")
    assert first.added == N and first.updated == 0
    assert not any("metadata" in n for n in first.notices)  # a folder says nothing about its photos
    return engine, csv_path


def _vectors(engine) -> int:
    return sum(vs.count for vs in engine.catalog.vector_sets())


def test_a_csv_after_its_folder_updates_the_metadata_and_the_filters_find_it(folder_then_csv):
    engine, csv_path = folder_then_csv
    embedder, embedded = engine.backends.embedder, []
    original = embedder.embed_images
    embedder.embed_images = lambda images: embedded.append(len(images)) or original(images)
    vectors = _vectors(engine)
    report = engine.ingestor().run(csv_path)
    assert (report.added, report.already, report.updated) == (0, N, N)
    assert report.to_json()["updated"] == N and report.to_json()["already_indexed"] == N
    assert report.updated_fields["scientific_name"] == N and report.updated_fields["license"] == N
    assert any(n.startswith(f"{N} photos already indexed: their metadata was updated from the CSV")
               for n in report.notices), report.notices
    assert _vectors(engine) == vectors and engine.catalog.count() == N  # nothing embedded or added again
    assert embedded == []
    photos = {p.path.rsplit("/", 1)[-1]: p for p in engine.catalog.all_photos()}
    p3 = photos["3.png"]
    assert (p3.scientific_name, p3.observed_on, p3.latitude, p3.longitude, p3.license, p3.rights_holder) == \
        ("Ardea alba", date(2024, 5, 4), 45.03, -73.03, "CC-BY-NC", "obs3")
    assert p3.source == "folder" and p3.extra.get("history") in (None, [])  # first values: nothing replaced
    ids = engine.catalog.filter_ids
    assert len(ids(Filters(taxon="ardea alba"))) == N // 2
    assert len(ids(Filters(license="cc-by"))) == len([i for i in range(N) if i % 3])  # never cc-by-nc
    assert len(ids(Filters(date_from=date(2024, 5, 1), date_to=date(2024, 5, 10)))) == 10
    assert len(ids(Filters(bbox=(-74.0, 44.9, -72.9, 45.095)))) == 10  # 45.00 .. 45.09


def test_a_corrected_identification_replaces_the_species_and_keeps_the_old(folder_then_csv, tmp_path):
    engine, csv_path = folder_then_csv
    engine.ingestor().run(csv_path)
    rows = [{"path": f"img/{i}.png", **_row(i)} for i in range(N)]
    rows[3]["taxon_name"] = "Ardea herodias"  # the community corrected the identification
    for r in rows:
        r["user_login"] = ""  # an empty cell erases nothing
    write_observations(tmp_path / "corpus", rows)
    again = engine.ingestor().run(csv_path)
    assert (again.added, again.already, again.updated) == (0, N, 1)
    assert again.updated_fields == {"scientific_name": 1}
    assert any("1 photo already indexed: their metadata was updated from the CSV (species 1)" in n
               for n in again.notices), again.notices
    p3 = next(p for p in engine.catalog.all_photos() if p.path.endswith("/3.png"))
    assert p3.scientific_name == "Ardea herodias" and p3.rights_holder == "obs3"
    [old] = p3.extra["history"]
    assert (old["field"], old["old"], old["new"]) == ("scientific_name", "Ardea alba", "Ardea herodias")
    assert old["source"] == str(csv_path) and old["at"]
    assert engine.catalog.filter_ids(Filters(taxon="ardea herodias")).tolist() == [p3.id]
    same = engine.ingestor().run(csv_path)  # once more: nothing new to say
    assert same.updated == 0 and any("says nothing new" in n for n in same.notices)


def test_unreadable_values_are_left_empty_with_a_notice_and_a_log_line(tmp_path, caplog):
    rows = [{"path": f"img/{i}.png", **_row(i)} for i in range(4)]
    rows[0]["observed_on"] = "2024-02-30"
    rows[1]["latitude"] = "abc"
    rows[2]["observed_on"] = "2024-05-03 roughly"
    rows[3]["observed_on"] = "2024-05-04 10:22:01 UTC"  # a time of day and a zone are fine
    csv_path = write_corpus(tmp_path / "corpus", 4, lambda i: rows[i] | {"path": f"img/{i}.png"})
    engine = build_services(_settings(tmp_path))
    with caplog.at_level(logging.WARNING, logger="core.ingest.sources"):
        report = engine.ingestor().run(csv_path)
    assert report.added == 4
    notes = [n for n in report.notices if "left empty" in n]
    assert len(notes) == 3, report.notices
    assert f"{csv_path}:2: observed_on '2024-02-30' is not a day of the calendar" in notes[0]
    assert f"{csv_path}:3: latitude 'abc' is not a number" in notes[1]
    assert f"{csv_path}:4: observed_on '2024-05-03 roughly' is not a date" in notes[2]
    assert all("how to fix:" in n for n in notes)
    assert sum("left empty" in r.getMessage() for r in caplog.records) == 3
    by_name = {p.path.rsplit("/", 1)[-1]: p for p in engine.catalog.all_photos()}
    assert by_name["0.png"].observed_on is None and by_name["0.png"].extra["observed_on_unparsed"] == "2024-02-30"
    assert by_name["1.png"].latitude is None and by_name["1.png"].extra["latitude_invalid"] == "abc"
    assert by_name["1.png"].longitude == -73.01  # the rest of the row is kept
    assert by_name["2.png"].observed_on is None
    assert by_name["3.png"].observed_on == date(2024, 5, 4)
    rows[0]["observed_on"] = "2024-02-29"  # fixed in the file and ingested again
    write_observations(tmp_path / "corpus", rows)
    fixed = engine.ingestor().run(csv_path)
    p0 = next(p for p in engine.catalog.all_photos() if p.path.endswith("/0.png"))
    assert fixed.updated == 1 and p0.observed_on == date(2024, 2, 29) and "observed_on_unparsed" not in p0.extra


def test_an_inquire_parquet_after_its_folder_updates_the_metadata(tmp_path):
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.photos import colour_image

    folder = tmp_path / "photos"
    folder.mkdir()
    rows = []
    for i in range(3):
        buf = io.BytesIO()
        colour_image(40 + i).save(buf, "JPEG")
        (folder / f"{i}.jpg").write_bytes(buf.getvalue())
        rows.append({"image": {"bytes": buf.getvalue(), "path": f"{i}.jpg"}, "inat24_species_name": "Ardea herodias",
                     "date": "2021-02-30" if i == 2 else f"2021-06-0{i + 1}", "latitude": 45.5, "longitude": -73.5,
                     "license": "CC_BY_NC_4_0", "rights_holder": f"observer {i}", "inat24_image_id": 1000 + i})
    engine = build_services(_settings(tmp_path))
    assert engine.ingestor().run(folder).added == 3
    path = tmp_path / "inquire.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    report = engine.ingestor().run(path)
    assert (report.added, report.already, report.updated) == (0, 3, 3)
    updated = "3 photos already indexed: their metadata was updated from the parquet file"
    assert any(updated in n for n in report.notices)
    assert any(f"{path}:row 2: date '2021-02-30' is not a day of the calendar" in n for n in report.notices)
    photos = sorted(engine.catalog.all_photos(), key=lambda p: p.extra["inat24_image_id"])
    assert [p.observed_on for p in photos] == [date(2021, 6, 1), date(2021, 6, 2), None]
    assert all(p.scientific_name == "Ardea herodias" and p.license == "CC_BY_NC_4_0" for p in photos)
    assert engine.catalog.filter_ids(Filters(license="cc-by-nc-4.0")).tolist() == sorted(p.id for p in photos)
    assert engine.catalog.filter_ids(Filters(license="cc-by")).tolist() == []
