"""The standard's example package round-trips: ingest it (offline), `python app.py export camtrap-dp`, check the
export offline against the shipped Camtrap DP profile and table schemas, ingest the export into a fresh
catalog, and find the same deployments, media and observations, field by field (every field Camtrap DP
carries), the same events and the same package metadata. Then a person's identification and a detector's box
added in EcoLens come out told apart: human with classifiedBy, machine with its probability. And the real
camera-trap fixture's MegaDetector results round-trip through `export megadetector` and `ingest --detections`."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import app
from core.camtrap import camtrapdp_validate
from core.camtrap.camtrapdp_columns import DEPLOYMENT_COLUMNS, MEDIA_COLUMNS, OBSERVATION_COLUMNS
from core.camtrap.package_files import read_descriptor
from core.config import load_settings
from core.contracts.camtrap import Detection, Observation
from core.contracts.records import Filters
from tests.integration.test_camtrap_dp_import import EXAMPLE, offline  # noqa: F401 (a fixture)
from tests.live_server import STANDIN_ENV

PACKAGE_ID = "7cca70f5-ef8c-4f86-85fb-8f070937d7ab"


@pytest.fixture
def tried(offline):
    """The hosts something tried to reach (none may be reached: the network is off)."""
    return offline


def _services(data: Path):
    return app.build_services(load_settings(environ={}, data_dir=str(data), embedder="hash", checkpoint_s=0.0,
                                            batch_size=16, max_image_pixels=4_000_000))


def _export(data: Path, out: Path, monkeypatch, capsys, expect: str = "4 deployments, 423 media (10 files copied)"
            ) -> Path:
    """The real command line's export (app.main) of the catalog in `data`."""
    for key, value in {**STANDIN_ENV, "ECOLENS_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1"}.items():
        monkeypatch.setenv(key, value)
    code = app.main(["export", "camtrap-dp", "--out", str(out)])
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert printed.strip() == str(out)
    assert f"wrote {expect}" in err
    return out


def _valid(folder: Path) -> dict:
    descriptor = read_descriptor(folder)
    assert camtrapdp_validate.profile_problems(descriptor) == []
    checked = camtrapdp_validate.check(descriptor, folder)
    assert checked.bad_rows == {} and checked.version == "1.0.2"
    return descriptor


def _catalog(services) -> dict:
    """What the catalog holds of the package, by the source's keys, in the fields Camtrap DP carries."""
    store = services.camtrap
    dep_fields = [f for f, _ in DEPLOYMENT_COLUMNS.values()] + ["utc_offset"]
    deployments = {d.key: {f: getattr(d, f) for f in dep_fields} for d in store.deployments()}
    ids = [int(i) for i in services.catalog.filter_ids(Filters())]
    captures = store.captures(ids)
    photos = {p.id: p for p in services.catalog.get_photos(ids)}
    media_fields = [f for f, _ in MEDIA_COLUMNS.values()] + ["captured_at", "utc_offset", "utc_epoch", "event_key",
                                                             "extra"]
    media = {c.media_key: {**{f: getattr(c, f) for f in media_fields},
                           "url": photos[pid].path if photos[pid].path.startswith("https://") else None,
                           "sha256": photos[pid].sha256, "scientific_name": photos[pid].scientific_name}
             for pid, c in captures.items()}
    obs_fields = [f for f, _ in OBSERVATION_COLUMNS.values()] + ["extra"]
    observations = {o.key: {f: getattr(o, f) for f in obs_fields} for o in store.observations()}
    events = {e.key: (e.deployment_key, e.start, e.end, e.frames, e.max_n) for e in store.events()}
    return {"deployments": deployments, "media": media, "observations": observations, "events": events}


def test_the_example_package_round_trips_through_an_export(tmp_path, tried, monkeypatch, capsys):
    first = _services(tmp_path / "a")
    assert first.ingestor().run(EXAMPLE).added == 10
    reached = list(tried)
    out = _export(tmp_path / "a", tmp_path / "export", monkeypatch, capsys)
    descriptor = _valid(out)
    assert tried == reached  # the export and its check reach for nothing
    files = sorted(p.name for p in (out / "media").iterdir())
    assert files == sorted(p.name for p in (EXAMPLE / "media").iterdir())  # the 10 JPEGs travel with it
    for name in files:
        assert (out / "media" / name).read_bytes() == (EXAMPLE / "media" / name).read_bytes()

    second = _services(tmp_path / "b")
    report = second.ingestor().run(out)
    assert report.kind == "camtrap-dp" and report.added == 10 and report.skipped == []
    before, after = _catalog(first), _catalog(second)
    assert (len(after["deployments"]), len(after["media"]), len(after["observations"])) == (4, 423, 549)
    for part in ("deployments", "media", "observations", "events"):
        assert after[part].keys() == before[part].keys(), part
        for key in before[part]:
            assert after[part][key] == before[part][key], (part, key)

    original = read_descriptor(EXAMPLE)
    for member in ("id", "name", "title", "contributors", "project", "licenses", "bibliographicCitation",
                   "sources", "keywords", "relatedIdentifiers", "coordinatePrecision"):
        assert descriptor[member] == original[member], member
    assert descriptor["temporal"] == original["temporal"]
    named = {t["scientificName"]: t for t in original["taxonomic"]}
    assert all(t == named[t["scientificName"]] for t in descriptor["taxonomic"])  # ids and vernacular names kept
    assert second.camtrap.packages()[PACKAGE_ID]["project"]["acronym"] == "MICA"


def test_identifications_and_detections_made_in_ecolens_go_out_told_apart(tmp_path, tried, monkeypatch, capsys):
    services = _services(tmp_path / "a")
    services.ingestor().run(EXAMPLE)
    store = services.camtrap
    [pid] = store.photo_ids_for_media(["7ab33b3a"]).values()  # a local frame of deployment 62c200a9
    capture = store.captures([pid])[pid]
    store.add_observations([Observation(level="media", type="animal", deployment_key="62c200a9", photo_id=pid,
                                        event_key=capture.event_key, scientific_name="Ondatra zibethicus", count=1,
                                        annotator="Ana", classified_at="2026-11-28T05:30:00")])
    store.add_detections([Detection(0.2, 0.3, 0.25, 0.2, "animal", 0.93, "MDV5a + SpeciesNet 4.0.1a",
                                    photo_id=pid, label="Ondatra zibethicus", label_conf=0.71)])
    out = _export(tmp_path / "a", tmp_path / "export", monkeypatch, capsys)
    _valid(out)
    with (out / "observations.csv").open(encoding="utf-8", newline="") as fh:
        mine = [r for r in csv.DictReader(fh) if r["mediaID"] == "7ab33b3a" and
                r["scientificName"] == "Ondatra zibethicus"]
    by_method = {r["classificationMethod"]: r for r in mine}
    assert set(by_method) == {"human", "machine"}
    human, machine = by_method["human"], by_method["machine"]
    assert (human["classifiedBy"], human["classificationProbability"]) == ("Ana", "")
    assert human["classificationTimestamp"] == "2026-11-28T05:30:00Z"
    assert machine["classifiedBy"] == "MDV5a + SpeciesNet 4.0.1a" and machine["classificationProbability"] == "0.71"
    assert (machine["bboxX"], machine["bboxY"], machine["bboxWidth"], machine["bboxHeight"]) == (
        "0.2", "0.3", "0.25", "0.2")
    # the imported package's own machine classifications keep their method
    with (EXAMPLE / "observations.csv").open(encoding="utf-8", newline="") as fh:
        machine_ids = {r["observationID"] for r in csv.DictReader(fh) if r["classificationMethod"] == "machine"}
    with (out / "observations.csv").open(encoding="utf-8", newline="") as fh:
        written = {r["observationID"]: r["classificationMethod"] for r in csv.DictReader(fh)}
    assert machine_ids and all(written[i] == "machine" for i in machine_ids)
    assert json.loads((out / "datapackage.json").read_text())["id"] == PACKAGE_ID


def test_megadetector_results_round_trip_through_an_export(tmp_path, tried, monkeypatch, capsys):
    import shutil

    fixture = EXAMPLE.parent / "megadetector"
    card = tmp_path / "card"
    shutil.copytree(fixture, card)
    first = _services(tmp_path / "a")
    first.ingestor().run(card, detections=card / "md_results.json")
    for key, value in {**STANDIN_ENV, "ECOLENS_DATA_DIR": str(tmp_path / "a"), "HF_HUB_OFFLINE": "1"}.items():
        monkeypatch.setenv(key, value)
    assert app.main(["export", "megadetector", "--out", str(tmp_path / "md.json")]) == 0
    printed, err = capsys.readouterr()
    assert printed.strip() == str(tmp_path / "md.json") and f"ingest {card} --detections" in err

    again = tmp_path / "card-again"
    shutil.copytree(fixture, again)
    (again / "md_results.json").unlink()
    second = _services(tmp_path / "b")
    second.ingestor().run(again, detections=tmp_path / "md.json")

    def boxes(services, folder: Path) -> dict:
        photos = services.catalog.get_photos([int(i) for i in services.catalog.filter_ids(Filters())])
        found = services.camtrap.detections([p.id for p in photos])
        return {Path(p.path).relative_to(folder).as_posix():
                sorted((d.category, d.conf, d.x, d.y, d.w, d.h, d.label) for d in found.get(p.id, []))
                for p in photos}

    assert boxes(second, again) == boxes(first, card) and any(boxes(first, card).values())
    def empty(services) -> list[str]:
        return sorted(Path(p.path).name for p in services.catalog.get_photos(services.camtrap.empty_ids(0.2).tolist()))
    assert empty(second) == empty(first) != []


def test_a_camera_card_goes_out_as_a_valid_package_and_comes_back(tmp_path, tried, monkeypatch, capsys):
    from tests.camtrap_photos import exif_jpeg, write

    card = tmp_path / "card"
    write(card / "siteA" / "a1.jpg", exif_jpeg("2024:06:21 13:00:00", colour=(10, 20, 30)))
    write(card / "siteA" / "100RECNX" / "a2.jpg", exif_jpeg("2024:06:21 13:00:30", colour=(40, 20, 30)))
    write(card / "siteB" / "b1.jpg", exif_jpeg("2024:06:21 03:20:00", "+03:00", colour=(10, 90, 30)))
    write(card / "siteB" / "b2.jpg", exif_jpeg("1970:01:01 00:00:00", colour=(10, 120, 30)))
    write(card / "plain.jpg", exif_jpeg("2024:05:02 10:00:00", colour=(200, 20, 30)))  # no deployment: not exported
    csv_file = write(tmp_path / "deployments.csv", b"deploymentID,latitude,longitude,deploymentStart,clock_offset_s\n"
                     b"siteA,51.4779,-0.0015,2024-06-01T12:00:00+01:00,60\nsiteB,50.1,4.2,,\n")
    first = _services(tmp_path / "a")
    first.ingestor().run(card, deployments=csv_file)
    out = _export(tmp_path / "a", tmp_path / "export", monkeypatch, capsys, expect="2 deployments, 4 media")
    _valid(out)
    deployments = {r["deploymentID"]: r for r in csv.DictReader((out / "deployments.csv").open(encoding="utf-8"))}
    media = {r["fileName"]: r for r in csv.DictReader((out / "media.csv").open(encoding="utf-8"))}
    assert media["a1.jpg"]["timestamp"] == "2024-06-21T13:01:00+01:00"  # clock corrected, the deployment's offset
    assert media["b1.jpg"]["timestamp"] == "2024-06-21T03:20:00+03:00"  # its own offset
    assert media["b2.jpg"]["timestamp"] == "1970-01-01T00:00:00+00:00"
    assert "doubtful (year 1970)" in media["b2.jpg"]["mediaComments"]
    assert (deployments["siteA"]["deploymentEnd"], deployments["siteA"]["timestampIssues"]) == (
        "2024-06-21T13:01:30+01:00", "")  # the last frame; every time had an offset
    assert (deployments["siteB"]["deploymentStart"], deployments["siteB"]["timestampIssues"]) == (
        "2024-06-21T03:20:00+03:00", "true")  # not the 1970 frame; b2's offset was assumed

    second = _services(tmp_path / "b")
    assert second.ingestor().run(out).added == 4
    back = {c.file_name: c for c in second.camtrap.captures([int(i) for i in second.catalog.filter_ids(Filters())]
                                                             ).values()}
    assert {n: (c.captured_at, c.utc_offset, c.deployment_key) for n, c in back.items()} == {
        "a1.jpg": ("2024-06-21T13:01:00", "+01:00", "siteA"), "a2.jpg": ("2024-06-21T13:01:30", "+01:00", "siteA"),
        "b1.jpg": ("2024-06-21T03:20:00", "+03:00", "siteB"), "b2.jpg": ("1970-01-01T00:00:00", "+00:00", "siteB")}
