"""The other ingest sources on real SQLite + FAISS: an INQUIRE-Rerank parquet file and a CSV of image URLs."""
import functools
import io
import threading
from datetime import date
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from app import build_services
from core.config import load_settings
from core.contracts.search_request import SearchRequest
from tests.photos import colour_image, write_observations


def _settings(tmp_path):
    return load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0)


def _jpeg(i: int) -> bytes:
    buf = io.BytesIO()
    colour_image(i).save(buf, "JPEG")
    return buf.getvalue()


def test_inquire_rerank_parquet(tmp_path):
    # two queries over four images, two of them shared: one row per (query, image) as in the dataset
    rows = []
    for q, images in (("a heron eating a fish", [0, 1, 2]), ("a heron in flight", [1, 2, 3])):
        for i in images:
            rows.append({"image": {"bytes": _jpeg(i), "path": f"{i}.jpg"}, "query": q, "relevant": int(i % 2 == 0),
                         "clip_score": 0.3, "inat24_image_id": 1000 + i, "inat24_file_name": f"train/heron/{i}.jpg",
                         "supercategory": "Appearance", "category": "Health", "iconic_group": "Aves",
                         "inat24_species_id": 77, "inat24_species_name": "Ardea herodias", "latitude": 45.5 + i,
                         "longitude": -73.5, "location_uncertainty": 10.0, "date": f"2021-06-0{i + 1}",
                         "license": "cc-by-nc", "rights_holder": f"observer {i}"})
    path = tmp_path / "inquire.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    engine = build_services(_settings(tmp_path))
    report = engine.ingestor().run(path)
    assert report.kind == "inquire-parquet" and report.added == 4 and report.duplicates == 2
    photos = sorted(engine.catalog.all_photos(), key=lambda p: p.extra["inat24_image_id"])
    first = photos[0]
    assert first.scientific_name == "Ardea herodias" and first.observed_on == date(2021, 6, 1)
    assert first.latitude == 45.5 and first.license == "cc-by-nc" and first.rights_holder == "observer 0"
    assert first.extra["inat24_file_name"] == "train/heron/0.jpg" and first.extra["supercategory"] == "Appearance"
    assert Path(first.path).is_file() and Path(first.path).read_bytes() == _jpeg(0)  # written under data/media
    assert engine.ingestor().run(path).added == 0


def test_inquire_iconic_group_becomes_a_taxon_that_a_group_word_finds(tmp_path):
    """INQUIRE rows name only the species and the iconic group: ingest writes the group into the taxon field of
    its rank (Aves: class, with kingdom and phylum), keeps the column in extra, and "birds ..." finds them."""
    rows = [{"image": {"bytes": _jpeg(i), "path": f"{i}.jpg"}, "query": "q", "relevant": 1,
             "inat24_file_name": f"train/{i}.jpg", "iconic_group": "Aves" if i % 2 else "Insecta",
             "inat24_species_name": "Ardea herodias" if i % 2 else "Apis mellifera"} for i in range(8)]
    path = tmp_path / "inquire.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    services = build_services(_settings(tmp_path))
    assert services.ingestor().run(path).added == 8
    services.corpus.reload()
    birds = [p for p in services.catalog.all_photos() if p.scientific_name == "Ardea herodias"]
    assert len(birds) == 4 and all((p.kingdom, p.phylum, p.class_name) == ("Animalia", "Chordata", "Aves")
                                   and p.extra["iconic_group"] == "Aves" for p in birds)
    assert services.catalog.taxon_known("Insecta") and services.catalog.taxon_known("Aves")
    # the hash embedder ranks at random: the catalog's taxonomy puts the four birds first
    res = services.engine.search(SearchRequest("two birds perched on a wire", k=6))
    assert {h.photo.class_name for h in res.hits[:4]} == {"Aves"}
    assert res.stages["group"] == {"word": "birds", "taxon": "Aves", "taxa": ["Aves"], "photos": 4}
    assert any("“birds” was read as the group Aves" in n for n in res.notices), res.notices


def test_a_catalog_ingested_before_the_iconic_group_was_read_gets_it_by_ingesting_again(tmp_path, monkeypatch):
    """Photos ingested when the group stayed in extra only: the same parquet ingested again fills their taxon
    fields through the metadata update, without embedding them again."""
    import core.ingest.sources as sources

    rows = [{"image": {"bytes": _jpeg(i), "path": f"{i}.jpg"}, "query": "q", "relevant": 1,
             "inat24_file_name": f"train/{i}.jpg", "iconic_group": "Amphibia"} for i in range(3)]
    path = tmp_path / "inquire.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    services = build_services(_settings(tmp_path))
    monkeypatch.setattr(sources, "apply_iconic_group", lambda photo, value: [])  # the ingest of before
    services.ingestor().run(path)
    assert {p.class_name for p in services.catalog.all_photos()} == {""}
    monkeypatch.undo()
    again = services.ingestor().run(path)
    assert again.added == 0 and again.updated == 3 and again.updated_fields.get("class_name") == 3
    assert {(p.kingdom, p.class_name) for p in services.catalog.all_photos()} == {("Animalia", "Amphibia")}


def test_csv_of_image_urls_from_a_local_server(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    for i in range(3):
        colour_image(i).save(served / f"{i}.png")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        rows = [{"image_url": f"{base}/{name}", "taxon_name": "Rana aurora", "observed_on": "2022-04-01",
                 "license": "CC0"} for name in ("0.png", "1.png", "2.png", "missing.png")]
        csv_path = write_observations(tmp_path, rows)
        local = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0,
                              allow_private_urls=True)  # the photo server is on this machine
        report = build_services(local).ingestor().run(csv_path)
    finally:
        server.shutdown()
    assert report.added == 3
    assert [name for name, _ in report.skipped] == [f"{base}/missing.png"]
    assert "cannot be read" in report.skipped[0][1]


def test_approximate_index_from_settings_is_built_saved_and_used(tmp_path):
    from tests.photos import make_photo_folder

    folder = make_photo_folder(tmp_path / "photos", good=40, broken=0)
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", index_type="hnsw")
    report = build_services(settings).ingestor().run(folder)
    assert report.index_kind == "hnsw"
    engine = build_services(settings)  # a new process: the saved twin is loaded and used
    assert engine.corpus.index.approx_kind == "hnsw"
    result = engine.engine.search(SearchRequest("anything", k=5))
    assert len(result.hits) == 5
    small = load_settings(environ={}, data_dir=str(tmp_path / "data2"), embedder="hash", index_type="ivfpq")
    report = build_services(small).ingestor().run(folder)
    assert report.index_kind == "flat" and any("too few photos" in n for n in report.notices)
