"""`export camtrap-dp` on a catalog built by hand on real SQLite (two deployments, one without a UTC offset; local
files and a URL; a person detected; an empty frame; imported, EcoLens-made and event-level observations): the
package is valid against the shipped Camtrap DP profile and table schemas (checked offline), each medium's
filePath leads to its file, person frames are not public, human and machine classifications are told apart,
and what the catalog cannot say (an offset, coordinates) is assumed only where the settings allow, said in
timestampIssues, or refused with the fix."""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from core import exporting
from core.camtrap import camtrapdp_validate
from core.camtrap.camtrapdp_write import write_package
from core.contracts.camtrap import Capture, Deployment, Detection, Event, Observation
from core.contracts.errors import InputError
from core.contracts.records import Photo
from storage.camtrap_store import SqlCamtrapStore
from storage.catalog import SqlCatalog
from storage.db import open_engine
from tests.photos import colour_image


def _settings(tmp_path, **over):
    values = {"detection_threshold": 0.2, "default_utc_offset": "+00:00", "camtrap_project_title": "",
              "camtrap_contributor": "Ana Lima", "camtrap_contributor_email": "", "camtrap_sampling_design":
              "targeted", "camtrap_license": "CC0-1.0", "camtrap_media_license": "CC-BY-4.0",
              "camtrap_default_place": "", "corpus": "", "dwc_contact": "", "dwc_contact_email": "", **over}
    return SimpleNamespace(path=lambda *parts: tmp_path.joinpath("data", *parts), **values)


@pytest.fixture()
def catalog(tmp_path):
    cards = tmp_path / "cards"
    cards.mkdir()
    files = []
    for i in range(4):
        colour_image(700 + i).save(cards / f"IMG_{i:04d}.JPG", quality=85)
        files.append(cards / f"IMG_{i:04d}.JPG")
    os.utime(files[3], (1_600_000_000, 1_600_000_000))  # 2020-09-13T12:26:40Z: the frame without EXIF time
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    store = SqlCamtrapStore(cat.engine)
    ids = cat.add_photos([Photo(path=str(f), sha256=f"{i + 1:064x}") for i, f in enumerate(files)]
                         + [Photo(path="https://media.example.org/x/file", sha256="media:pkg:m-url"),
                            Photo(path=str(tmp_path / "plain.jpg"), sha256="f" * 64)])
    a, b, c, d, url, plain = ids
    store.upsert_deployments([
        Deployment(key="siteA", latitude=51.18, longitude=5.66, start="2021-04-01T10:00:00+02:00",
                   end="2021-04-30T10:00:00+02:00", utc_offset="+02:00", camera_model="Reconyx-HF2X",
                   camera_height=0.8, camera_tilt=-15, bait_use=False, feature_type="trailGame"),
        Deployment(key="siteB", latitude=50.7, longitude=4.01, start="2021-05-01T08:00:00",
                   end="2021-05-02T08:00:00")])  # no offset anywhere: the setting's is assumed
    store.upsert_events([Event(key="siteA#1", deployment_key="siteA", start="2021-04-11T20:43:09",
                               end="2021-04-11T20:43:12", frames=2)])
    store.set_captures([
        Capture(photo_id=a, deployment_key="siteA", media_key="m-a", captured_at="2021-04-11T20:43:09",
                utc_offset="+02:00", event_key="siteA#1", capture_method="activityDetection",
                media_type="image/jpeg", file_name="IMG_0000.JPG", time_source="camtrap-dp", detector_looked=True),
        Capture(photo_id=b, deployment_key="siteA", media_key="m-b", captured_at="2021-04-11T20:43:12",
                event_key="siteA#1", detector_looked=True, extra={"favorite": "true"}),
        Capture(photo_id=c, deployment_key="siteB", captured_at="2021-05-01T09:15:00", time_source="exif",
                detector_looked=True),
        Capture(photo_id=d, deployment_key="siteB", time_source="file-time"),
        Capture(photo_id=url, deployment_key="siteA", media_key="m-url", captured_at="2021-04-20T01:02:03",
                utc_offset="+02:00", extra={"filePath": "https://media.example.org/x/file"}),
        Capture(photo_id=plain, deployment_key=None, captured_at="2021-04-20T01:02:03"),  # no deployment: out
    ])
    store.add_detections([Detection(0.1, 0.2, 0.3, 0.4, "animal", 0.91, "MDV5a", photo_id=a, label="Vulpes vulpes",
                                    label_conf=0.8),
                          Detection(0.5, 0.5, 0.2, 0.4, "person", 0.7, "MDV5a", photo_id=b),
                          Detection(0.0, 0.0, 0.1, 0.1, "animal", 0.05, "MDV5a", photo_id=c)])  # c: empty
    store.add_observations([
        Observation(level="event", type="animal", key="ev-1", deployment_key="siteA", event_key="siteA#1",
                    event_start="2021-04-11T18:43:09Z", event_end="2021-04-11T18:43:12Z",
                    scientific_name="Vulpes vulpes", count=1, method="human", classified_by="Peter",
                    classified_at="2021-06-01T09:00:00Z", extra={"observationTags": "night"}),
        Observation(level="media", type="animal", key="m-a_1", deployment_key="siteA", photo_id=a,
                    event_key="siteA#1", scientific_name="Vulpes vulpes", count=2, life_stage="adult",
                    method="machine", classified_by="SpeciesNet 4.0", probability=0.87),
        Observation(level="media", type="animal", deployment_key="siteA", photo_id=b, scientific_name="Meles meles",
                    count=1, annotator="ana", classified_at="2026-11-28T05:00:00"),
    ])
    return cat, store, ids


def _read(folder: Path, table: str) -> list[dict]:
    with (folder / f"{table}.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _valid(folder: Path) -> None:
    descriptor = json.loads((folder / "datapackage.json").read_text(encoding="utf-8"))
    assert camtrapdp_validate.profile_problems(descriptor) == []
    checked = camtrapdp_validate.check(descriptor, folder)
    assert checked.bad_rows == {}, checked.bad_rows


def test_the_package_is_valid_and_says_what_the_catalog_holds(catalog, tmp_path):
    cat, store, (a, b, c, d, url, plain) = catalog
    out = tmp_path / "pkg"
    written = write_package(out, store, cat.get_photos, _settings(tmp_path))
    _valid(out)
    assert (written.deployments, written.media, written.copied) == (2, 5, 4)

    deployments = {r["deploymentID"]: r for r in _read(out, "deployments")}
    assert deployments["siteA"]["deploymentStart"] == "2021-04-01T10:00:00+02:00"
    assert deployments["siteA"]["timestampIssues"] == "" and deployments["siteA"]["cameraTilt"] == "-15"
    assert deployments["siteB"]["deploymentStart"] == "2021-05-01T08:00:00+00:00"  # the setting's offset ...
    assert deployments["siteB"]["timestampIssues"] == "true"  # ... and said

    media = {r["mediaID"]: r for r in _read(out, "media")}
    assert media["m-a"]["timestamp"] == "2021-04-11T20:43:09+02:00"
    assert media["m-b"]["timestamp"] == "2021-04-11T20:43:12+02:00"  # the deployment's offset
    for row in media.values():  # every filePath leads to the file (or is the URL it came from)
        if row["filePath"].startswith("https://"):
            assert row["mediaID"] == "m-url"
        else:
            assert (out / row["filePath"]).read_bytes() == Path(cat.get_photos([a, b, c, d])[0].path).parent.joinpath(
                row["fileName"]).read_bytes()
    assert media["m-b"]["filePublic"] == "false" and media["m-a"]["filePublic"] == "true"  # a person on m-b
    assert media["m-b"]["favorite"] == "true"
    untimed = next(r for r in media.values() if r["fileName"] == "IMG_0003.JPG")
    assert untimed["timestamp"] == "2020-09-13T12:26:40+00:00" and "modification time" in untimed["mediaComments"]
    assert len(media) == 5  # the plain photo (no deployment) is not a camera-trap medium

    rows = _read(out, "observations")
    by_id = {r["observationID"]: r for r in rows}
    assert by_id["ev-1"]["observationLevel"] == "event" and by_id["ev-1"]["mediaID"] == ""
    assert by_id["ev-1"]["eventStart"] == "2021-04-11T18:43:09Z" and by_id["ev-1"]["observationTags"] == "night"
    assert (by_id["m-a_1"]["classificationMethod"], by_id["m-a_1"]["classificationProbability"]) == ("machine", "0.87")
    mine = next(r for r in rows if r["scientificName"] == "Meles meles")
    assert (mine["classificationMethod"], mine["classifiedBy"]) == ("human", "ana")
    assert mine["classificationTimestamp"] == "2026-11-28T05:00:00Z" and mine["eventStart"] == media["m-b"]["timestamp"]
    boxes = [r for r in rows if r["classifiedBy"] == "MDV5a" and r["observationType"] != "blank"]
    assert sorted((r["mediaID"], r["observationType"], r["scientificName"]) for r in boxes) == [
        ("m-a", "animal", "Vulpes vulpes"), ("m-b", "human", "")]
    fox = next(r for r in boxes if r["mediaID"] == "m-a")
    assert (fox["bboxX"], fox["bboxWidth"], fox["classificationProbability"]) == ("0.1", "0.3", "0.8")
    [blank] = [r for r in rows if r["observationType"] == "blank"]
    assert blank["classificationMethod"] == "machine" and blank["mediaID"] == media[blank["mediaID"]]["mediaID"]
    assert next(r for r in media.values() if r["mediaID"] == blank["mediaID"])["fileName"] == "IMG_0002.JPG"

    meta = json.loads((out / "datapackage.json").read_text())
    assert meta["contributors"] == [{"title": "Ana Lima", "role": "contact"}]
    assert meta["project"]["samplingDesign"] == "targeted"
    assert meta["project"]["observationLevel"] == ["event", "media"]
    assert meta["temporal"] == {"start": "2021-04-01", "end": "2021-05-02"}
    assert {t["scientificName"] for t in meta["taxonomic"]} == {"Vulpes vulpes", "Meles meles"}
    assert {x["scope"] for x in meta["licenses"]} == {"data", "media"}


def test_with_photos_chosen_only_they_and_their_events_go_out(catalog, tmp_path):
    cat, store, (a, b, c, d, url, plain) = catalog
    out = tmp_path / "one"
    written = write_package(out, store, cat.get_photos, _settings(tmp_path), ids=[b, plain])
    _valid(out)
    assert [r["mediaID"] for r in _read(out, "media")] == ["m-b"]
    assert [r["deploymentID"] for r in _read(out, "deployments")] == ["siteA"]
    ids = {r["observationID"] for r in _read(out, "observations")}
    assert "ev-1" in ids and "m-a_1" not in ids  # its event's observation, not another frame's
    assert written.media == 1


def test_a_deployment_without_coordinates_is_refused_or_takes_the_configured_place(catalog, tmp_path):
    cat, store, _ = catalog
    store.upsert_deployments([Deployment(key="siteB", start="2021-05-01T08:00:00", end="2021-05-02T08:00:00")])
    with pytest.raises(InputError) as err:
        write_package(tmp_path / "p1", store, cat.get_photos, _settings(tmp_path))
    assert "siteB" in err.value.message and "--deployments FILE.csv" in err.value.hint
    assert not (tmp_path / "p1").exists() and not list(tmp_path.glob(".p1-*"))  # nothing half written
    written = write_package(tmp_path / "p2", store, cat.get_photos,
                            _settings(tmp_path, camtrap_default_place="50.5,4.25"))
    _valid(tmp_path / "p2")
    row = next(r for r in _read(tmp_path / "p2", "deployments") if r["deploymentID"] == "siteB")
    assert (row["latitude"], row["longitude"]) == ("50.5", "4.25")
    assert any("siteB has no coordinates" in n for n in written.notices)


def test_the_facade_writes_the_package_only_into_a_new_or_empty_folder(catalog, tmp_path):
    cat, store, _ = catalog
    sources = exporting.ExportSources(_settings(tmp_path), None, cat.get_photos, store)
    (tmp_path / "empty").mkdir()
    done = exporting.export(sources, "camtrap-dp", tmp_path / "empty")
    assert done.rows == 5 and (tmp_path / "empty" / "datapackage.json").is_file()
    with pytest.raises(InputError) as err:
        exporting.export(sources, "camtrap-dp", tmp_path / "empty")
    assert "not empty" in err.value.message


def test_darwin_core_calls_camera_trap_frames_machine_observations(catalog, tmp_path):
    import zipfile

    from core.contracts.sessionlog import Label
    from storage.sessionlog import SqlSessionLog

    cat, store, (a, b, c, d, url, plain) = catalog
    log = SqlSessionLog(cat.engine, tmp_path / "artefacts")
    sid = log.start_session("label", "foxes")
    for pid in (a, plain):
        log.add_label(Label(session_id=sid, query="foxes", photo_id=pid, label=1, annotator="ana"))
    settings = _settings(tmp_path, dwc_basis_of_record="HumanObservation")
    done = exporting.export(exporting.ExportSources(settings, log, cat.get_photos, store), "dwc",
                            tmp_path / "foxes.zip", query="foxes")
    with zipfile.ZipFile(done.path) as zf:
        lines = zf.read("occurrence.txt").decode().splitlines()
    header = lines[0].split("\t")
    rows = {r[header.index("associatedMedia")]: r[header.index("basisOfRecord")]
            for r in (line.split("\t") for line in lines[1:])}
    # media are named by their path relative to the collection (issue 35), so cards/ is kept
    assert rows == {"cards/IMG_0000.JPG": "MachineObservation", "plain.jpg": "HumanObservation"}


def test_the_detections_go_out_as_megadetector_results_that_read_back(catalog, tmp_path):
    from core.camtrap import megadetector
    cat, store, (a, b, c, d, url, plain) = catalog
    sources = exporting.ExportSources(_settings(tmp_path), None, cat.get_photos, store,
                                      lambda: [a, b, c, d, url, plain])
    done = exporting.export(sources, "megadetector", tmp_path / "md.json")
    results = megadetector.read_results(done.path)
    boxes = {e.file: [(x.category, round(x.conf, 4), x.label) for x in e.boxes] for e in results.entries}
    # the frames a detector looked at, named relative to their folder; c is looked at and empty of boxes above
    # the threshold but keeps its weak one; d and the URL were never looked at
    assert boxes == {"IMG_0000.JPG": [("animal", 0.91, "Vulpes vulpes")], "IMG_0001.JPG": [("person", 0.7, None)],
                     "IMG_0002.JPG": [("animal", 0.05, None)]}
    assert done.rows == 3 and str(tmp_path / "cards") in done.notices[0]


def test_the_demo_worlds_camera_card_goes_out_valid_with_its_detections(tmp_path):
    """The field-guide world's card (deployments CSV, MegaDetector results with a person, empty frames) through
    the generic ingest, then out: valid, the person's frame not public, every box at or above the threshold a
    machine observation, every empty frame a machine blank."""
    import json as _json

    from app import build_services
    from core.config import load_settings
    from fieldguide.camtrap_card import build_camtrap_demo

    card = build_camtrap_demo(tmp_path / "world", seed=0)
    services = build_services(load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash"))
    services.ingestor().run(card.folder, detections=card.detections, deployments=card.deployments)
    sources = exporting.ExportSources(services.settings, None, services.catalog.get_photos, services.camtrap)
    done = exporting.export(sources, "camtrap-dp", tmp_path / "pkg")
    _valid(done.path)
    assert done.rows == card.frames
    results = _json.loads(Path(card.detections).read_text())
    names = {v: k for k, v in results["detection_categories"].items()}
    threshold = services.settings.detection_threshold
    boxes = sum(1 for im in results["images"] for d in im.get("detections") or [] if d["conf"] >= threshold)
    empty = sum(1 for im in results["images"] if not any(d["conf"] >= threshold for d in im.get("detections") or []))
    people = {Path(im["file"]).name for im in results["images"]
              if any(d["category"] == names["person"] and d["conf"] >= threshold for d in im.get("detections") or [])}
    rows = _read(done.path, "observations")
    machine = [r for r in rows if r["classificationMethod"] == "machine"]
    assert len([r for r in machine if r["observationType"] != "blank"]) == boxes
    assert len([r for r in machine if r["observationType"] == "blank"]) == empty
    media = _read(done.path, "media")
    assert people and {r["fileName"] for r in media if r["filePublic"] == "false"} == people


def _individual_counts(path: Path) -> dict[str, str]:
    import zipfile

    with zipfile.ZipFile(path) as zf:
        lines = zf.read("occurrence.txt").decode().splitlines()
    header = lines[0].split("\t")
    return {r[header.index("associatedMedia")]: r[header.index("individualCount")]
            for r in (line.split("\t") for line in lines[1:])}


def _frame_counts(tmp_path, name: str, cat, store, photo_id: int) -> dict[str, str]:
    """The individualCount of each record of a Darwin Core archive of the one photo (HumanObservation)."""
    from core import darwincore

    sources = exporting.ExportSources(_settings(tmp_path, dwc_basis_of_record="HumanObservation"), None,
                                      cat.get_photos, store)
    darwincore.write_archive(tmp_path / name, [darwincore.Occurrence(p, "marked") for p in cat.get_photos([photo_id])],
                             [tmp_path], **exporting.dwc_options(sources, [photo_id]))
    return _individual_counts(tmp_path / name)


def test_a_persons_count_of_an_event_is_its_maxn_and_both_exports_write_it(catalog, tmp_path):
    """siteA#1 (frames a, b) holds Peter's imported event count 1 and a machine's media count 2 on a; Ann then
    Bo identify the event in EcoLens: the newest person's count is the event's MaxN, its event-level observation
    in Camtrap DP, and the individualCount of its frame a in Darwin Core (not the machine's 2, not a sum of the
    people's answers)."""
    from core.camtrap import frame_facts
    from core.camtrap.identifications import identify

    cat, store, (a, b, c, d, url, plain) = catalog

    def dwc(name: str) -> dict[str, str]:
        return _frame_counts(tmp_path, name, cat, store, a)

    assert dwc("before.zip") == {"cards/IMG_0000.JPG": "1"}  # Peter's count of the event beats the machine's 2
    identify(store, "Vulpes vulpes", "Ann", event="siteA#1", count=3, now=lambda: "2026-11-28T08:00:00+00:00")
    assert store.event("siteA#1").max_n == 3
    assert frame_facts.facts(store, [a])[a]["max_n"] == 3  # the photo view's "most animals in one frame"
    write_package(tmp_path / "pkg", store, cat.get_photos, _settings(tmp_path))
    _valid(tmp_path / "pkg")
    ann = [r for r in _read(tmp_path / "pkg", "observations") if r["classifiedBy"] == "Ann"]
    assert [(r["observationLevel"], r["eventID"], r["count"], r["classificationMethod"]) for r in ann] == [
        ("event", "siteA#1", "3", "human")]
    assert dwc("ann.zip") == {"cards/IMG_0000.JPG": "3"}

    identify(store, "Vulpes vulpes", "Bo", event="siteA#1", count=4, now=lambda: "2026-11-28T09:00:00+00:00")
    identify(store, "Vulpes vulpes", "Cy", event="siteA#1", now=lambda: "2026-11-28T10:00:00+00:00")  # no count
    assert store.event("siteA#1").max_n == 4
    assert dwc("bo.zip") == {"cards/IMG_0000.JPG": "4"}
    write_package(tmp_path / "pkg2", store, cat.get_photos, _settings(tmp_path))
    counts = {r["classifiedBy"]: r["count"] for r in _read(tmp_path / "pkg2", "observations")
              if r["observationLevel"] == "event"}
    assert counts == {"Peter": "1", "Ann": "3", "Bo": "4", "Cy": ""}


def test_a_frames_individual_count_is_the_newest_persons_not_a_sum_of_peoples(catalog, tmp_path):
    """Frame a's individualCount in Darwin Core: Peter's import boxes two foxes on it (1 + 1: one person's
    boxes are added up), then Ann counts 3 and Bo 4 in EcoLens: people's answers are not added up (3 + 4 = 7
    was written), the newest person's count is the frame's, as the newest person's count is an event's."""
    from core.camtrap.identifications import identify

    cat, store, (a, *_rest) = catalog

    def dwc(name: str) -> dict[str, str]:
        return _frame_counts(tmp_path, name, cat, store, a)

    store.add_observations([
        Observation(level="media", type="animal", key=f"pk-{i}", deployment_key="siteA", photo_id=a,
                    scientific_name="Vulpes vulpes", count=1, method="human", classified_by="Peter",
                    classified_at="2021-06-01T09:00:00Z", bbox_x=0.1 * i, bbox_y=0.1, bbox_w=0.1, bbox_h=0.1)
        for i in (1, 2)])
    assert dwc("peter.zip") == {"cards/IMG_0000.JPG": "2"}
    identify(store, "Vulpes vulpes", "Ann", photo_id=a, count=3, now=lambda: "2026-11-28T08:00:00+00:00")
    assert dwc("ann.zip") == {"cards/IMG_0000.JPG": "3"}
    identify(store, "Vulpes vulpes", "Bo", photo_id=a, count=4, now=lambda: "2026-11-28T09:00:00+00:00")
    assert dwc("bo.zip") == {"cards/IMG_0000.JPG": "4"}
    identify(store, "Vulpes vulpes", "Ann", photo_id=a, count=1, now=lambda: "2026-11-28T10:00:00+00:00")
    assert dwc("ann-again.zip") == {"cards/IMG_0000.JPG": "1"}  # Ann's correction replaces her 3 and is newest


def test_a_frame_shows_its_own_and_its_events_observations_never_another_frames(catalog):
    """Camtrap DP gives a media-level observation its eventID too: frame b of siteA#1 must not show the
    machine's Vulpes vulpes (count 2) said of frame a as its own; it shows Meles meles (its own) and Peter's
    event-level Vulpes vulpes. (The example package's heron showed all ten frames' boxes as 'this frame'.)"""
    from core.camtrap import frame_facts

    cat, store, (a, b, *_rest) = catalog
    said = frame_facts.facts(store, [a, b])
    of_b = sorted((o["level"], o["scientific_name"], o.get("count")) for o in said[b]["observations"])
    assert of_b == [("event", "Vulpes vulpes", 1), ("media", "Meles meles", 1)], of_b
    of_a = sorted((o["level"], o["scientific_name"], o.get("count")) for o in said[a]["observations"])
    assert of_a == [("event", "Vulpes vulpes", 1), ("media", "Vulpes vulpes", 2)], of_a
