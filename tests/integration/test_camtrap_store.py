"""The camera-trap store (storage.camtrap_store, migration 0010) on real SQLite: a catalog at 0009 with photos
upgrades in place and its photos stay plain; deployments, captures, events, detections, crop membership and
observations are written and read back as written; keys resolve to ids; the camera-trap filters select what a
plain reading of the rows selects; and the way back (downgrade) leaves the photos as they were."""
from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text

from core.contracts.camtrap import CamtrapFilters, Capture, Deployment, Detection, Event, Observation
from core.contracts.records import Filters, Photo
from storage.camtrap_store import SqlCamtrapStore
from storage.catalog import SqlCatalog
from storage.db import MIGRATIONS, open_engine

TABLES = {"deployments", "captures", "events", "detections", "crop_vectors", "observations"}


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def _tables(db) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _stores(tmp_path, n_photos: int = 6) -> tuple[SqlCatalog, SqlCamtrapStore, list[int]]:
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    ids = cat.add_photos([Photo(path=f"/cards/p{i}.jpg", sha256=f"{i + 1:064x}") for i in range(n_photos)])
    return cat, SqlCamtrapStore(cat.engine), ids


def test_a_0009_catalog_with_photos_upgrades_in_place_and_its_photos_stay_plain(tmp_path):
    db = tmp_path / "c.sqlite"
    old = create_engine(f"sqlite:///{db}")
    cfg = _config()
    with old.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0009_place_index")
    old.dispose()
    assert not TABLES & _tables(db)
    before = SqlCatalog(create_engine(f"sqlite:///{db}"))
    ids = before.add_photos([Photo(path=f"/old/{i}.jpg", sha256=f"{i + 7:064x}", scientific_name="Vulpes vulpes",
                                   latitude=50.0, longitude=4.0) for i in range(3)])
    before.engine.dispose()
    cat = SqlCatalog(open_engine(db))  # opening migrates to head
    assert TABLES <= _tables(db)
    with cat.engine.connect() as conn:
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert version == ScriptDirectory.from_config(cfg).get_current_head()
    assert [p.scientific_name for p in cat.get_photos(ids)] == ["Vulpes vulpes"] * 3
    assert cat.filter_ids(Filters(taxon="vulpes vulpes")).tolist() == ids
    store = SqlCamtrapStore(cat.engine)
    assert store.captures(ids) == {} and store.detections(ids) == {} and store.observations() == []
    assert store.deployments() == []
    store.set_captures([Capture(photo_id=ids[0], captured_at="2021-03-01T10:00:00")])
    assert store.captures(ids)[ids[0]].captured_at == "2021-03-01T10:00:00"


def test_the_way_back_drops_the_camera_trap_tables_and_keeps_the_photos(tmp_path):
    cat, store, ids = _stores(tmp_path)
    store.upsert_deployments([Deployment(key="A")])
    store.set_captures([Capture(photo_id=ids[0], deployment_key="A")])
    cat.engine.dispose()
    engine = create_engine(f"sqlite:///{tmp_path / 'c.sqlite'}")
    cfg = _config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0009_place_index")
    assert not TABLES & _tables(tmp_path / "c.sqlite")
    assert len(SqlCatalog(engine).get_photos(ids)) == len(ids)
    with engine.begin() as conn:  # and up again
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    assert TABLES <= _tables(tmp_path / "c.sqlite")


def test_deployments_read_back_as_written_and_an_upsert_keeps_the_id(tmp_path):
    _, store, _ = _stores(tmp_path)
    full = Deployment(key="00a2c20d", location_id="e254a13c", location_name="B_HS_val 2_processiepark",
                      latitude=51.496, longitude=4.774, coordinate_uncertainty=187, start="2020-05-30T02:57:37+02:00",
                      end="2020-07-01T09:41:41+02:00", setup_by="Danny Van der beeck", camera_id="6720",
                      camera_model="Reconyx-PC800", camera_delay=0, camera_height=1.3, camera_depth=None,
                      camera_tilt=-90, camera_heading=225, detection_distance=9.5, timestamp_issues=False,
                      bait_use=False, feature_type="culvert", habitat="Mixed forest", deployment_group="season 2020",
                      tags="lure:none", comments="", utc_offset="+02:00", clock_offset_s=-12.5,
                      extra={"some_column": "kept"})
    bare = Deployment(key="siteB")
    ids = store.upsert_deployments([full, bare])
    assert set(ids) == {"00a2c20d", "siteB"} and full.id == ids["00a2c20d"]
    got = store.deployment("00a2c20d")
    assert got == full
    assert store.deployment("nope") is None
    assert store.deployment("siteB") == Deployment(key="siteB", id=ids["siteB"])
    again = store.upsert_deployments([Deployment(key="siteB", latitude=1.5, longitude=2.5)])
    assert again == {"siteB": ids["siteB"]}
    assert store.deployment("siteB").latitude == 1.5
    assert [d.key for d in store.deployments()] == ["00a2c20d", "siteB"]


def test_captures_resolve_keys_replace_whole_rows_and_find_their_media(tmp_path):
    _, store, ids = _stores(tmp_path)
    store.upsert_deployments([Deployment(key="A", latitude=51.0, longitude=4.0, utc_offset="+01:00")])
    store.upsert_events([Event(key="A#1", deployment_key="A", start="2021-03-01T10:00:00", frames=2, max_n=3)])
    first = Capture(photo_id=ids[0], deployment_key="A", media_key="m-1", captured_at="2021-03-01T10:00:00",
                    utc_offset="+01:00", utc_epoch=1614589200.0, time_source="camtrap-dp",
                    capture_method="activityDetection",
                    event_key="A#1", file_public=False, file_name="IMG_1.JPG", media_type="image/jpeg",
                    camera_make="RECONYX", camera_model="HC500", camera_serial="H500-1", comments="fog",
                    extra={"favorite": True}, detector_looked=True)
    store.set_captures([first, Capture(photo_id=ids[1], time_issue="year 1970", captured_at="1970-01-01T00:00:00")])
    got = store.captures([ids[0], ids[1], ids[2]])
    assert set(got) == {ids[0], ids[1]}
    assert got[ids[0]] == first  # its ids were resolved in place, the keys filled on read
    assert got[ids[0]].deployment_id is not None and got[ids[0]].event_id is not None
    assert got[ids[1]].deployment_key is None and got[ids[1]].file_public is True
    store.set_captures([Capture(photo_id=ids[0], media_key="m-1")])  # the whole row is replaced
    assert store.captures([ids[0]])[ids[0]].deployment_id is None
    assert store.photo_ids_for_media(["m-1", "m-2"]) == {"m-1": ids[0]}
    with pytest.raises(ValueError, match="unknown deployment key"):
        store.set_captures([Capture(photo_id=ids[2], deployment_key="missing")])
    assert ids[2] not in store.captures([ids[2]])  # nothing of the failed write was kept


def test_events_group_their_frames_in_time_order(tmp_path):
    _, store, ids = _stores(tmp_path)
    store.upsert_deployments([Deployment(key="A")])
    keys = store.upsert_events([Event(key="A#1", deployment_key="A"), Event(key="A#2", deployment_key="A")])
    store.set_captures([Capture(photo_id=i, deployment_key="A", utc_epoch=1000.0 - i) for i in ids[:4]])
    store.assign_events({ids[0]: keys["A#1"], ids[1]: keys["A#1"], ids[2]: keys["A#1"], ids[3]: keys["A#2"]})
    frames = store.event_photos([keys["A#1"], keys["A#2"]])
    assert frames == {keys["A#1"]: [ids[2], ids[1], ids[0]], keys["A#2"]: [ids[3]]}  # earliest epoch first
    store.upsert_events([Event(key="A#1", deployment_key="A", frames=3, max_n=2)])
    events = store.events()
    assert [(e.key, e.frames, e.max_n, e.deployment_key) for e in events] == [("A#1", 3, 2, "A"), ("A#2", 0, None, "A")]
    assert [e.key for e in store.events([keys["A#2"]])] == ["A#2"]
    assert store.captures([ids[0]])[ids[0]].event_key == "A#1"


def test_detections_replace_per_model_and_crop_membership_follows(tmp_path):
    _, store, ids = _stores(tmp_path)
    md = [Detection(0.1, 0.2, 0.3, 0.4, "animal", 0.9, "MDV5a", photo_id=ids[0]),
          Detection(0.5, 0.5, 0.1, 0.1, "person", 0.15, "MDV5a", photo_id=ids[0]),
          Detection(0.0, 0.0, 1.0, 1.0, "animal", 0.6, "MDV5a", photo_id=ids[1], label="Vulpes vulpes", label_conf=0.8)]
    new = store.add_detections(md)
    assert len(set(new)) == 3 and [d.id for d in md] == new
    other = store.add_detections([Detection(0.2, 0.2, 0.2, 0.2, "vehicle", 0.7, "other", photo_id=ids[0])])
    got = store.detections(ids)
    assert [d.conf for d in got[ids[0]]] == [0.9, 0.7, 0.15] and got[ids[1]] == [md[2]]
    _vector_set(store)
    store.mark_crops_indexed(1, [new[0]])
    assert [d.id for d in store.unindexed_detections(1, 0.2)] == [new[2], other[0]]
    replaced = store.add_detections([Detection(0.1, 0.1, 0.5, 0.5, "animal", 0.95, "MDV5a", photo_id=ids[0])],
                                    replace_model="MDV5a")
    got = store.detections(ids)
    assert {(d.model, d.conf) for d in got[ids[0]]} == {("MDV5a", 0.95), ("other", 0.7)}
    assert got[ids[1]] == [md[2]]  # another photo's boxes of the same model stay
    assert replaced[0] > max(new + other)  # ids are never given again (they name crops)
    assert [d.id for d in store.unindexed_detections(1, 0.2)] == [new[2], other[0], replaced[0]]


def _vector_set(store: SqlCamtrapStore) -> None:
    with store.engine.begin() as conn:
        conn.execute(text("INSERT INTO vector_sets (id, model_id, dim, created_at) VALUES (1, 'm', 4, '2024-01-01')"))


def test_empty_frames_are_those_a_detector_looked_at_and_found_nothing_above_the_threshold(tmp_path):
    _, store, ids = _stores(tmp_path)
    store.mark_looked(ids[:4])  # makes capture rows where there were none
    store.set_captures([Capture(photo_id=ids[4], captured_at="2021-01-01T00:00:00")])  # never looked at
    store.add_detections([Detection(0, 0, 1, 1, "animal", 0.9, "m", photo_id=ids[0]),
                          Detection(0, 0, 1, 1, "animal", 0.1, "m", photo_id=ids[1])])
    assert store.empty_ids(0.2).tolist() == [ids[1], ids[2], ids[3]]
    assert store.empty_ids(0.05).tolist() == [ids[2], ids[3]]
    store.set_captures([Capture(photo_id=ids[5])])
    store.mark_looked([ids[5]])
    assert store.captures([ids[5]])[ids[5]].detector_looked is True


def test_observations_resolve_keys_replace_by_key_and_are_read_by_photo_event_or_all(tmp_path):
    _, store, ids = _stores(tmp_path)
    store.upsert_deployments([Deployment(key="A")])
    ev = store.upsert_events([Event(key="e1", deployment_key="A")])["e1"]
    store.set_captures([Capture(photo_id=ids[0], deployment_key="A", media_key="m0", event_key="e1"),
                        Capture(photo_id=ids[1], deployment_key="A", media_key="m1")])
    media = Observation(level="media", type="animal", key="o1", deployment_key="A", media_key="m0",
                        scientific_name="Vulpes vulpes", count=1, life_stage="adult", sex="female", behavior="walking",
                        individual_id="F1", bbox_x=0.1, bbox_y=0.2, bbox_w=0.3, bbox_h=0.4, method="machine",
                        classified_by="MegaDetector 5", probability=0.87, classified_at="2021-03-01T10:00:00Z",
                        event_start="2021-03-01T10:00:00+01:00", event_end="2021-03-01T10:00:00+01:00",
                        comments="x", extra={"cameraSetupType": "calibration"})
    event = Observation(level="event", type="animal", key="o2", deployment_key="A", event_key="e1",
                        scientific_name="Anas platyrhynchos", count=3, method="human", classified_by="Ana",
                        annotator="Ana")
    blank = Observation(level="media", type="blank", photo_id=ids[1], deployment_key="A")
    added = store.add_observations([media, event, blank])
    assert media.photo_id == ids[0] and event.event_id == ev and len(set(added)) == 3
    every = store.observations()
    blank = replace(blank, media_key="m1")  # keys are filled on read
    assert every == [media, event, blank]
    assert store.observations(photo_ids=[ids[0]]) == [media]
    assert store.observations(event_ids=[ev]) == [event]
    assert store.observations(photo_ids=[ids[1]], event_ids=[ev]) == [event, blank]
    store.add_observations([Observation(level="event", type="animal", key="o2", event_key="e1", count=4)])
    assert [(o.key, o.count) for o in store.observations()] == [("o1", 1), (None, None), ("o2", 4)]
    with pytest.raises(ValueError, match="unknown media keys"):
        store.add_observations([Observation(level="media", type="animal", media_key="nope")])


def test_the_camera_trap_filters_select_what_a_plain_reading_of_the_rows_selects(tmp_path):
    _, store, ids = _stores(tmp_path)
    store.upsert_deployments([Deployment(key="A"), Deployment(key="B")])
    e = store.upsert_events([Event(key="eA", deployment_key="A")])
    store.set_captures([Capture(photo_id=ids[0], deployment_key="A", event_key="eA"),
                        Capture(photo_id=ids[1], deployment_key="A", event_key="eA"),
                        Capture(photo_id=ids[2], deployment_key="B"),
                        Capture(photo_id=ids[3], deployment_key="B")])
    store.add_detections([Detection(0, 0, 1, 1, "person", 0.5, "m", photo_id=ids[2]),
                          Detection(0, 0, 1, 1, "animal", 0.1, "m", photo_id=ids[3])])
    store.add_observations([
        Observation(level="event", type="animal", event_id=e["eA"], scientific_name="Vulpes vulpes", method="human"),
        Observation(level="media", type="animal", photo_id=ids[3], scientific_name="Meles meles", method="machine"),
        Observation(level="media", type="animal", photo_id=ids[0], event_id=e["eA"], scientific_name="Martes foina")])

    def ids_of(**kw):
        got = store.camtrap_ids(CamtrapFilters(**kw), 0.2)
        return None if got is None else got.tolist()

    assert ids_of() is None and ids_of(include_empty=True, times_of_day=("night",)) is None
    assert ids_of(deployments=("A",)) == [ids[0], ids[1]]
    assert ids_of(deployments=("A", "B")) == ids[:4]
    assert ids_of(categories=("person", "animal")) == [ids[2]]  # the animal box is under the threshold
    assert ids_of(species="VULPES vulpes ") == [ids[0], ids[1]]  # through their event
    assert ids_of(species="martes foina") == [ids[0]]  # a frame's own observation is about that frame only
    assert ids_of(classified="machine") == [ids[3]]
    assert ids_of(classified="human") == [ids[0], ids[1]]
    assert ids_of(classified="none") == [ids[2]]
    assert ids_of(classified="none", deployments=("A",)) == []
    store.set_captures([Capture(photo_id=ids[5], deployment_key="B")])  # no event at all
    assert ids_of(classified="none") == [ids[2], ids[5]]
    store.set_captures([Capture(photo_id=ids[4], utc_epoch=5.0, deployment_key="A")])
    store.upsert_deployments([Deployment(key="A", latitude=10.0, longitude=20.0)])
    assert store.timed_places() == [(ids[4], 5.0, 10.0, 20.0)]
    assert store.timed_places([ids[0]]) == []


def test_filters_with_camera_trap_parts_say_what_is_set():
    f = Filters(camtrap=CamtrapFilters(deployments=("A",), include_empty=True))
    assert f.to_json() == {"camtrap": {"deployments": ["A"], "include_empty": True}}
    assert not f.is_empty() and Filters(camtrap=None).is_empty()
    assert hash(f) == hash(Filters(camtrap=CamtrapFilters(deployments=("A",), include_empty=True)))


def test_deleting_a_photo_takes_its_camera_trap_rows_with_it(tmp_path):
    cat, store, ids = _stores(tmp_path)
    store.set_captures([Capture(photo_id=ids[0])])
    store.add_detections([Detection(0, 0, 1, 1, "animal", 0.9, "m", photo_id=ids[0])])
    store.add_observations([Observation(level="media", type="animal", photo_id=ids[0])])
    with cat.engine.begin() as conn:
        conn.execute(text("DELETE FROM photos WHERE id = :i"), {"i": ids[0]})
    assert store.captures([ids[0]]) == {} and store.detections([ids[0]]) == {} and store.observations() == []


def test_a_package_s_metadata_is_kept_and_replaced_by_key(tmp_path):
    _, store, _ = _stores(tmp_path)
    store.save_package("pkg-1", {"title": "first", "project": {"acronym": "MICA"}})
    store.save_package("pkg-2", {"title": "second"})
    store.save_package("pkg-1", {"title": "again"})
    assert store.packages() == {"pkg-1": {"title": "again"}, "pkg-2": {"title": "second"}}


def test_only_stand_ins_of_media_without_a_file_are_removed(tmp_path):
    cat, store, ids = _stores(tmp_path)
    stand_in = cat.add_photos([Photo(path="https://host/x", sha256="media:pkg:m1")])[0]
    store.set_captures([Capture(photo_id=stand_in, media_key="m1"), Capture(photo_id=ids[0], media_key="m0")])
    store.add_observations([Observation(level="media", type="blank", photo_id=stand_in)])
    assert store.remove_stand_ins([stand_in, ids[0], ids[1]]) == 1
    assert cat.count() == len(ids) and store.captures([stand_in, ids[0]]).keys() == {ids[0]}
    assert store.observations() == []
