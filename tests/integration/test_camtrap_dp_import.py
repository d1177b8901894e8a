"""`ingest` of a Camtrap DP package: the standard's own example (tests/fixtures/camtrap-dp-example, tdwg/camtrap-dp
1.0.2, MIT: 4 deployments, 423 media of which 413 are URLs, 549 observations, 10 JPEGs) ingests offline, every
value reading back from the camera-trap store as the CSV files hold it; the media whose file cannot be had stay
in the catalog without a vector; the host of the URLs is tried once; the check of the package never touches
the network; a second ingest adds nothing; a zip of the package is read like its folder."""
from __future__ import annotations

import csv
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from app import build_services
from core.camtrap import camtrapdp_validate
from core.camtrap.package_files import read_descriptor
from core.config import load_settings
from tests.camtrap_roundtrip import package_tables, store_tables

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "fixtures" / "camtrap-dp-example"
LOCAL = ("127.0.0.1", "::1", "localhost")


@pytest.fixture
def offline(monkeypatch):
    """Every name look-up and connection beyond this machine is refused and recorded."""
    tried: list[str] = []
    real_connect, real_lookup = socket.socket.connect, socket.getaddrinfo

    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else str(address)
        if isinstance(address, tuple) and host not in LOCAL:
            tried.append(host)
            raise OSError(f"network is off in this test ({host})")
        return real_connect(self, address)

    def lookup(host, *args, **kwargs):
        if host not in LOCAL:
            tried.append(str(host))
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (offline test)")
        return real_lookup(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return tried


def _services(tmp_path):
    return build_services(load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash",
                                        checkpoint_s=0.0, batch_size=16, max_image_pixels=4_000_000))


def _csv(name: str) -> list[dict[str, str]]:
    with open(EXAMPLE / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _texts(*values) -> tuple:
    """Values as the CSV writes them: an empty cell is read as None."""
    return tuple("" if v is None else v for v in values)


def _num(text: str):
    return None if text == "" else float(text)


def test_the_check_of_the_example_never_touches_the_network(offline):
    checked = camtrapdp_validate.check(read_descriptor(EXAMPLE), EXAMPLE)
    assert checked.bad_rows == {} and checked.version == "1.0.2"
    assert offline == []


def test_the_example_package_ingests_offline_and_reads_back_as_written(tmp_path, offline):
    services = _services(tmp_path)
    started = time.perf_counter()
    report = services.ingestor().run(EXAMPLE)
    assert time.perf_counter() - started < 120
    assert offline == ["multimedia.agouti.eu"]  # its 413 URLs: the host was tried once
    assert report.kind == "camtrap-dp" and report.added == 10 and report.skipped == []
    assert any("412 more of its URLs were not tried" in n for n in report.notices)
    assert any(n.startswith("413 media are kept without their file") for n in report.notices)
    store, catalog = services.camtrap, services.catalog
    assert catalog.count() == 423

    deployments = {d.key: d for d in store.deployments()}
    rows = _csv("deployments.csv")
    assert set(deployments) == {r["deploymentID"] for r in rows} and len(rows) == 4
    for r in rows:
        d = deployments[r["deploymentID"]]
        assert _texts(d.location_id, d.location_name, d.start, d.end, d.setup_by, d.camera_id, d.camera_model) == (
            r["locationID"], r["locationName"], r["deploymentStart"], r["deploymentEnd"], r["setupBy"],
            r["cameraID"], r["cameraModel"])
        assert (d.latitude, d.longitude, d.camera_height, d.detection_distance) == (
            _num(r["latitude"]), _num(r["longitude"]), _num(r["cameraHeight"]), _num(r["detectionDistance"]))
        assert (d.camera_tilt, d.camera_heading, d.coordinate_uncertainty) == (
            int(r["cameraTilt"]), int(r["cameraHeading"]), int(r["coordinateUncertainty"]))
        assert d.timestamp_issues is (r["timestampIssues"] == "true") and d.bait_use is (r["baitUse"] == "true")
        assert _texts(d.feature_type, d.habitat, d.deployment_group, d.tags, d.comments) == (
            r["featureType"], r["habitat"], r["deploymentGroups"], r["deploymentTags"], r["deploymentComments"])
        assert d.utc_offset == r["deploymentStart"][-6:]

    media = _csv("media.csv")
    ids = store.photo_ids_for_media([m["mediaID"] for m in media])
    assert len(ids) == 423 and len(set(ids.values())) == 423
    captures = store.captures(list(ids.values()))
    photos = {p.id: p for p in catalog.get_photos(list(ids.values()))}
    for m in media:
        c, p = captures[ids[m["mediaID"]]], photos[ids[m["mediaID"]]]
        moment = datetime.fromisoformat(m["timestamp"])
        assert c.captured_at == moment.replace(tzinfo=None).isoformat() and c.utc_offset == m["timestamp"][-6:]
        assert c.utc_epoch == moment.timestamp() and c.time_source == "camtrap-dp"
        assert _texts(c.deployment_key, c.capture_method, c.file_name, c.media_type) == (
            m["deploymentID"], m["captureMethod"], m["fileName"], m["fileMediatype"])
        assert c.file_public is (m["filePublic"] == "true") and c.event_key is not None
        assert p.latitude == deployments[m["deploymentID"]].latitude and p.observed_on == moment.date()
        if m["filePath"].startswith("https://"):
            assert p.sha256 == f"media:7cca70f5-ef8c-4f86-85fb-8f070937d7ab:{m['mediaID']}" and p.path == m["filePath"]
        else:
            assert len(p.sha256) == 64 and Path(p.path) == (EXAMPLE / m["filePath"]).resolve()
    vs = catalog.vector_sets()[0]
    assert catalog.unindexed_ids(vs.id) == []  # the 413 without a file are not waiting for a vector
    assert len(catalog.indexed_ids(vs.id)) == 10

    observations = {o.key: o for o in store.observations()}
    rows = _csv("observations.csv")
    assert len(observations) == len(rows) == 549
    for r in rows:
        o = observations[r["observationID"]]
        assert _texts(o.deployment_key, o.media_key, o.event_key, o.event_start, o.event_end, o.level, o.type) == (
            r["deploymentID"], r["mediaID"], r["eventID"], r["eventStart"], r["eventEnd"], r["observationLevel"],
            r["observationType"])
        assert _texts(o.scientific_name, o.life_stage, o.sex, o.behavior, o.method, o.classified_by,
                      o.classified_at) == (
            r["scientificName"], r["lifeStage"], r["sex"], r["behavior"], r["classificationMethod"],
            r["classifiedBy"], r["classificationTimestamp"])
        assert o.count == (int(r["count"]) if r["count"] else None)
        assert (o.bbox_x, o.bbox_y, o.bbox_w, o.bbox_h, o.probability) == (
            _num(r["bboxX"]), _num(r["bboxY"]), _num(r["bboxWidth"]), _num(r["bboxHeight"]),
            _num(r["classificationProbability"]))
        if r["mediaID"]:
            assert o.photo_id == ids[r["mediaID"]]
    assert store.packages()["7cca70f5-ef8c-4f86-85fb-8f070937d7ab"]["project"]["acronym"] == "MICA"


def test_events_follow_the_observations_event_ids(tmp_path, offline):
    services = _services(tmp_path)
    services.ingestor().run(EXAMPLE)
    store = services.camtrap
    rows = _csv("observations.csv")
    events = {e.key: e for e in store.events()}
    assert set(events) == {r["eventID"] for r in rows}
    ids = store.photo_ids_for_media([m["mediaID"] for m in _csv("media.csv")])
    captures = store.captures(list(ids.values()))
    for r in rows:
        if r["observationLevel"] == "media":
            assert captures[ids[r["mediaID"]]].event_key == r["eventID"]
    frames = store.event_photos([e.id for e in events.values()])
    assert sum(len(f) for f in frames.values()) == 423
    for key, e in events.items():
        assert e.frames == len(frames[e.id])
        times = sorted(captures[p].captured_at for p in frames[e.id])
        assert (e.start, e.end) == (times[0], times[-1])
        counts = {}
        for r in rows:
            if r["eventID"] == key and r["observationLevel"] == "media" and r["count"]:
                counts[r["mediaID"]] = counts.get(r["mediaID"], 0) + int(r["count"])
        assert e.max_n == (max(counts.values()) if counts else e.max_n)


def test_a_second_ingest_adds_nothing_and_keeps_every_row(tmp_path, offline):
    services = _services(tmp_path)
    services.ingestor().run(EXAMPLE)
    again = services.ingestor().run(EXAMPLE)
    assert again.added == 0 and again.already == 10
    assert services.catalog.count() == 423
    assert len(services.camtrap.observations()) == 549 and len(services.camtrap.events()) == 34


def test_a_zip_of_the_package_reads_like_its_folder(tmp_path, offline):
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in EXAMPLE.rglob("*"):
            if f.is_file():
                z.write(f, f.relative_to(EXAMPLE))
    services = _services(tmp_path)
    report = services.ingestor().run(archive)
    assert report.added == 10 and services.catalog.count() == 423
    assert len(services.camtrap.observations()) == 549
    unpacked = services.catalog.get_photos([1])[0].path
    assert unpacked.startswith(str(tmp_path / "data")) and Path(unpacked).is_file()


def test_the_datapackage_json_itself_can_be_named(tmp_path, offline):
    services = _services(tmp_path)
    assert services.ingestor().run(EXAMPLE / "datapackage.json").added == 10


def test_ingest_on_the_command_line_exits_0_offline_within_2_minutes(tmp_path):
    """The whole command in a fresh process; this machine may have no network at all (the URLs' host is
    not reached either way: the command must finish, with the media kept without their files)."""
    shutil.copytree(EXAMPLE, tmp_path / "pkg")
    config = tmp_path / "ecolens.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\nembedder = "hash"\ndownload_timeout_s = 5\n')
    started = time.perf_counter()
    command = [sys.executable, str(ROOT / "app.py"), "--config", str(config), "ingest", str(tmp_path / "pkg")]
    done = subprocess.run(command,
                          capture_output=True, text=True, timeout=240, cwd=tmp_path, check=False,
                          env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                               "HOME": str(tmp_path)})
    took = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    assert took < 120
    assert "camtrap-dp" in done.stdout and "423 media" in done.stdout


def test_the_store_holds_every_value_of_the_package_s_three_tables(tmp_path, offline):
    """The round-trip helper's Camtrap DP side: what the store holds, written as the three tables, is the
    package (4 deployments, 423 media, 549 observations, every non-empty cell)."""
    services = _services(tmp_path)
    services.ingestor().run(EXAMPLE)
    got, want = store_tables(services.camtrap), package_tables(EXAMPLE)
    assert {t: len(r) for t, r in want.items()} == {"deployments": 4, "media": 423, "observations": 549}
    for table in want:
        assert got[table] == want[table], table


def test_the_media_kept_without_a_file_are_not_reported_as_missing_vectors(tmp_path, offline):
    from core.vectors.repair import check_indexes

    services = _services(tmp_path)
    services.ingestor().run(EXAMPLE)
    health = check_indexes(services.catalog, services.index_store, services.backends.embedder.model_id)
    assert [h.problems for h in health] == [[]] and health[0].recorded == 10 and health[0].photos == 423


def test_media_kept_without_a_file_are_replaced_once_their_host_answers(tmp_path, offline, monkeypatch):
    """Offline first (413 stand-ins), then the host answers (each URL a picture of its own): the stand-ins are
    replaced by the real photos, embedded, and every row of the package is as before."""
    import io

    from core.ingest import downloads
    from tests.photos import colour_image

    services = _services(tmp_path)
    services.ingestor().run(EXAMPLE)
    assert services.catalog.count_fileless() == 413

    urls = [m["filePath"] for m in _csv("media.csv") if m["filePath"].startswith("https://")]

    def fetch(url, policy):
        out = io.BytesIO()
        colour_image(1000 + urls.index(url), 48).save(out, format="JPEG")
        return out.getvalue()
    monkeypatch.setattr(downloads, "fetch", fetch)
    report = services.ingestor().run(EXAMPLE)
    assert report.added == 413 and report.already == 10
    assert any(n.startswith("413 media kept earlier without their file have it now") for n in report.notices)
    catalog = services.catalog
    assert catalog.count() == 423 and len(catalog.indexed_ids(catalog.vector_sets()[0].id)) == 423
    assert catalog.count_fileless() == 0
    assert services.banner().startswith("Searching 423 of your photos. ")  # each with its picture now
    assert store_tables(services.camtrap) == package_tables(EXAMPLE)
    photos = catalog.get_photos(list(services.camtrap.photo_ids_for_media(["07840dcc"]).values()))
    assert len(photos) == 1 and photos[0].extra["image_url"].startswith("https://multimedia.agouti.eu/")


def test_the_banner_says_how_many_of_the_photos_have_a_picture(tmp_path, offline):
    """'Searching 423 of your photos' said nothing of the 413 media kept only as URLs, which the picture search
    cannot find: the banner counts them apart, read from the catalog through its index on the hash's prefix."""
    services = _services(tmp_path)
    services.ingestor().run(EXAMPLE)
    line, whole = services.banner_parts()
    assert line == "Searching 423 of your photos (10 of them with a picture) with stand-in models", line
    assert whole.startswith("Searching 423 of your photos (10 of them with a picture). The other 413 are kept "
                            "without their file"), whole
    from sqlalchemy import event

    ran: list[tuple] = []  # the statement count_fileless runs, asked for its plan
    engine = services.catalog.engine
    listen = lambda conn, cursor, sql, params, context, many: ran.append((sql, params))  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        assert services.catalog.count_fileless() == 413
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    with engine.connect() as conn:
        plan = " ".join(str(r[-1]) for sql, params in ran
                        for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params))
    assert "ix_photos_hash_prefix" in plan and "SCAN photos" not in plan, plan


def test_stand_ins_left_by_an_ingest_cut_short_are_not_added_twice(tmp_path, offline):
    """An ingest stopped after it added the stand-ins and before it wrote their captures: the next one finds
    them by their content hash."""
    from core.contracts.records import Photo

    services = _services(tmp_path)
    left = [m["mediaID"] for m in _csv("media.csv") if m["filePath"].startswith("https://")][:5]
    ids = services.catalog.add_photos([Photo(path="x", sha256=f"media:7cca70f5-ef8c-4f86-85fb-8f070937d7ab:{k}")
                                       for k in left])
    services.ingestor().run(EXAMPLE)
    assert services.catalog.count() == 423
    assert services.camtrap.photo_ids_for_media(left) == dict(zip(left, ids))


def test_a_species_named_in_the_package_finds_its_media_kept_without_a_file(tmp_path, offline):
    """Searching the example for "Anas platyrhynchos" (222 of its observations; every such medium a URL on a
    host not reached) crashed with "photo id(s) not in the index": the catalog's words found the media, which
    have no vector. They are found by their words, with no similarity (no picture to compare), and the
    ranking is called rank fusion (the catalog's list fused with the pictures'), not a cosine."""
    from core.search.presets import request_for

    services = _services(tmp_path)
    services.ingestor().run(EXAMPLE)
    result = services.engine.search(request_for("Fast", "Anas platyrhynchos", k=5))
    assert len(result.hits) == 5
    for hit in result.hits:
        assert hit.photo.scientific_name == "Anas platyrhynchos" and hit.photo.path.startswith("https://")
        assert hit.similarity is None and hit.catalog_match == ["anas", "platyrhynchos"]
    assert result.stages["score"]["kind"] == "fusion"
    plain = services.engine.search(request_for("Fast", "something striped", k=5))  # no word the catalog holds
    assert "catalog_text" not in plain.stages or not plain.stages["catalog_text"]["ranked"]
    assert plain.stages["score"]["kind"] == "cosine" and all(h.similarity is not None for h in plain.hits)


def test_a_filter_that_lets_in_only_media_without_a_file_says_why_nothing_shows(tmp_path, offline):
    """'a duck' with the species filter Anas platyrhynchos: 160 media pass, none has a picture to compare, so
    the picture search shows nothing; the notice says so and how to find them, instead of a bare 'no results'.
    A search that fills its k results says nothing of the kind."""
    from core.contracts.camtrap import CamtrapFilters
    from core.contracts.records import Filters
    from core.search.presets import request_for

    services = _services(tmp_path)
    services.ingestor().run(EXAMPLE)
    mallards = Filters(camtrap=CamtrapFilters(species="Anas platyrhynchos"))
    result = services.engine.search(request_for("Fast", "something striped", k=5, filters=mallards))
    assert result.hits == []
    said = [n for n in result.notices if "no picture on this machine" in n]
    assert len(said) == 1 and said[0].startswith("160 photos that pass the filters have no picture"), result.notices
    assert "a species name" in said[0] and "ingest" in said[0]
    full = services.engine.search(request_for("Fast", "something striped", k=5))
    assert len(full.hits) == 5 and not any("no picture on this machine" in n for n in full.notices)
    few = services.engine.search(request_for("Fast", "something striped", k=50))  # 10 pictures for 50 places
    assert any(n.startswith("413 photos have no picture on this machine") for n in few.notices), few.notices
