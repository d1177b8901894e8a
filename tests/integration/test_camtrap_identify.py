"""The page's door to camera-trap data (core.camtrap.desk) on a real SQLite store: a frame's facts, an event's
frames, a person's identification of a frame or an event (a human observation, one per annotator and target,
refused with a fix for bad input), and the photo view's boxes drawn on their outline only."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from core.camtrap.desk import CamtrapDesk
from core.contracts.camtrap import Capture, Deployment, Detection, Event
from core.contracts.errors import InputError, NotFoundError
from core.contracts.records import Photo
from storage.camtrap_store import SqlCamtrapStore
from storage.catalog import SqlCatalog
from storage.db import open_engine


@pytest.fixture()
def world(tmp_path):
    """Two deployments; siteA has an event of three frames (photos 0-2) and an empty frame (3); siteB one
    frame with a person (4); photo 5 is a plain photo."""
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    ids = cat.add_photos([Photo(path=f"/cards/p{i}.jpg", sha256=f"{i + 1:064x}") for i in range(6)])
    store = SqlCamtrapStore(cat.engine)
    store.upsert_deployments([Deployment(key="siteA", location_name="Oak ridge", latitude=51.0, longitude=4.0,
                                         utc_offset="+02:00"),
                              Deployment(key="siteB")])
    events = store.upsert_events([Event(key="siteA#1", deployment_key="siteA", start="2024-06-01T03:12:00",
                                        end="2024-06-01T03:12:40", frames=3, max_n=2)])
    store.set_captures([Capture(photo_id=ids[i], deployment_key="siteA", captured_at=f"2024-06-01T03:12:{i * 20:02d}",
                                utc_offset="+02:00", event_id=events["siteA#1"], detector_looked=True)
                        for i in range(3)]
                       + [Capture(photo_id=ids[3], deployment_key="siteA", captured_at="2024-06-01T09:00:00",
                                  detector_looked=True),
                          Capture(photo_id=ids[4], deployment_key="siteB", captured_at="2024-06-02T10:00:00",
                                  detector_looked=True)])
    store.add_detections([Detection(0.25, 0.25, 0.5, 0.5, "animal", 0.93, "MDV5a", photo_id=ids[i]) for i in range(3)]
                         + [Detection(0.1, 0.1, 0.3, 0.6, "person", 0.88, "MDV5a", photo_id=ids[4])])
    settings = SimpleNamespace(detection_threshold=0.2)
    return SimpleNamespace(ids=ids, store=store, desk=CamtrapDesk(store, settings), settings=settings)


def test_a_frames_facts_name_its_deployment_time_event_and_boxes(world):
    ids = world.ids
    facts = world.desk.facts(ids)
    assert ids[5] not in facts  # a plain photo has no camera-trap facts
    f = facts[ids[1]]
    assert f["deployment_id"] == "siteA" and f["place"] == "Oak ridge"
    assert f["timestamp"] == "2024-06-01T03:12:20+02:00"
    assert facts[ids[3]]["timestamp"] == "2024-06-01T09:00:00"  # offset unknown: no offset written
    assert f["event_id"] == "siteA#1" and f["event_frames"] == 3 and f["event_frame_ids"] == ids[:3]
    assert f["max_n"] == 2
    assert f["detections"] == [{"bbox": [0.25, 0.25, 0.5, 0.5], "category": "animal", "conf": 0.93, "model": "MDV5a"}]
    assert facts[ids[3]]["detections"] == [] and facts[ids[3]]["detector_looked"]


def test_an_events_frames_reach_every_frame_and_a_lone_photo_is_its_own(world):
    ids = world.ids
    frames = world.desk.event_frames([ids[2], ids[3], ids[5]])
    assert frames[ids[2]] == ids[:3]
    assert frames[ids[3]] == [ids[3]] and frames[ids[5]] == [ids[5]]


def test_an_identification_of_an_event_is_a_human_observation_and_a_second_one_replaces_it(world):
    first = world.desk.identify("Vulpes vulpes", "Renée", event="siteA#1", count=2)
    assert (first.level, first.type, first.method, first.classified_by) == ("event", "animal", "human", "Renée")
    assert first.classified_at and first.deployment_id is not None and first.count == 2
    world.desk.identify("Meles meles", "RENÉE", event="siteA#1", count="1")  # the same person corrects it
    stored = [o for o in world.store.observations() if o.method == "human"]
    assert [(o.scientific_name, o.count, o.level) for o in stored] == [("Meles meles", 1, "event")]
    # every frame of the event shows it
    facts = world.desk.facts(world.ids[:3])
    assert all(any(o["scientific_name"] == "Meles meles" for o in facts[i]["observations"]) for i in world.ids[:3])


def test_an_identification_of_a_frame_and_by_another_person_are_kept_apart(world):
    world.desk.identify("Vulpes vulpes", "Ann", photo_id=world.ids[0])
    world.desk.identify("blank", "Bo", photo_id=world.ids[0])
    stored = sorted((o.annotator, o.type, o.scientific_name, o.level) for o in world.store.observations())
    assert stored == [("Ann", "animal", "Vulpes vulpes", "media"), ("Bo", "blank", None, "media")]


def test_an_event_is_found_by_its_key_through_the_keys_index_not_by_reading_every_event(world, monkeypatch):
    found = world.store.event("siteA#1")
    assert (found.key, found.deployment_key, found.frames, found.max_n) == ("siteA#1", "siteA", 3, 2)
    assert world.store.event("siteA#2") is None and world.store.event("") is None
    # the migrated schema's plan for the lookup searches an index on events.key (no scan of the table)
    with world.store.engine.connect() as conn:
        plan = " ".join(str(r[-1]) for r in conn.exec_driver_sql(
            "EXPLAIN QUERY PLAN SELECT id FROM events WHERE key = ?", ("siteA#1",)))
    assert "USING" in plan and "INDEX" in plan and "SCAN" not in plan, plan

    # identifying an event asks the store for that one event, never for all of them
    def every_event(*args, **kwargs):
        raise AssertionError("identify read every event to find one")
    monkeypatch.setattr(world.store, "events", every_event)
    obs = world.desk.identify("Vulpes vulpes", "Ann", event="siteA#1")
    assert obs.event_id == found.id and obs.deployment_id == found.deployment_id


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(species="Vulpes vulpes", annotator=" ", photo_id=1), InputError, "annotator"),
    (dict(species="  ", annotator="Ann", photo_id=1), InputError, "species"),
    (dict(species="Vulpes vulpes", annotator="Ann"), InputError, "photo"),
    (dict(species="Vulpes vulpes", annotator="Ann", photo_id=1, event="siteA#1"), InputError, "not both"),
    (dict(species="Vulpes vulpes", annotator="Ann", event="nowhere#9"), NotFoundError, "nowhere#9"),
    (dict(species="Vulpes vulpes", annotator="Ann", photo_id=6), NotFoundError, "not a camera-trap frame"),
    (dict(species="Vulpes vulpes", annotator="Ann", photo_id=1, count=-1), InputError, "count"),
    (dict(species="Vulpes vulpes", annotator="Ann", photo_id=1, count=2.5), InputError, "count"),
    (dict(species="Vulpes\x00vulpes", annotator="Ann", photo_id=1), InputError, "control characters"),
    (dict(species="Vulpes vulpes", annotator="Ann", photo_id=1, count=0), InputError, "count of 0"),
    (dict(species="person", annotator="Ann", event="siteA#1", count="0"), InputError, "count of 0"),
])
def test_bad_identifications_are_refused_with_a_fix_and_nothing_is_stored(world, kwargs, error, words):
    if kwargs.get("photo_id") == 6:
        kwargs["photo_id"] = world.ids[5]
    elif kwargs.get("photo_id") == 1:
        kwargs["photo_id"] = world.ids[0]
    with pytest.raises(error) as caught:
        world.desk.identify(**kwargs)
    assert words in caught.value.message and caught.value.hint
    assert world.store.observations() == []


def test_a_count_of_0_is_only_for_blank_where_no_count_is_kept(world):
    """0 animals is 'blank' (Camtrap DP's count is at least 1): a blank keeps no count, whatever was typed, and
    makes the event's MaxN 0 (the newest person saw no animal, whatever the machine's boxes said); an animal's
    count of 1 or more is kept."""
    for count in (0, 3, None):
        assert world.desk.identify("blank", "Ann", photo_id=world.ids[3], count=count).count is None
    assert world.store.event("siteA#1").max_n == 2  # a frame's blank leaves its event's MaxN alone
    assert world.desk.identify("blank", "Bo", event="siteA#1", count=0).count is None
    assert world.store.event("siteA#1").max_n == 0
    assert world.desk.identify("Vulpes vulpes", "Cy", event="siteA#1", count=1).count == 1
    assert world.store.event("siteA#1").max_n == 1


def test_the_photo_views_identify_reads_a_count_as_the_api_does(world):
    """The page's box passes its count on as it is: 0 for an animal is refused as the API refuses it (it was
    taken as 'no count' by the page only), emptied says no count, 0 with 'blank' is a blank."""
    from ui.identify_handlers import IdentifyHandlers

    page = SimpleNamespace(desk=world.desk, facts=world.desk.facts)
    h = IdentifyHandlers(SimpleNamespace(camtrap=page), names=lambda typed: typed)
    with pytest.raises(InputError) as caught:
        h._save("event", world.ids[0], "Vulpes vulpes", 0, "Ann")
    assert "count of 0" in caught.value.message and "blank" in caught.value.hint
    assert world.store.observations() == [] and world.store.event("siteA#1").max_n == 2
    assert "identified by Ann" in h._save("event", world.ids[0], "Vulpes vulpes", None, "Ann")
    assert [o.count for o in world.store.observations()] == [None]
    assert "is no animal" in h._save("frame", world.ids[3], "blank", 0, "Ann")
    assert "Vulpes vulpes, 3 seen" in h._save("frame", world.ids[1], "Vulpes vulpes", 3, "Ann")


def _frame() -> Image.Image:
    rng = np.random.default_rng(3)
    return Image.fromarray(rng.integers(0, 255, (200, 300, 3), dtype=np.uint8))


def test_the_boxes_are_drawn_on_their_outline_and_nothing_far_from_them_changes(world):
    facts = world.desk.facts([world.ids[0]])[world.ids[0]]
    shown = world.desk.boxes_worth_showing(facts)
    assert shown == facts["detections"]
    edit = world.desk.picture_edit(shown, ["animal 93%"])
    assert edit is not None
    plain = _frame()
    drawn = np.asarray(edit[1](plain)).astype(int)
    before = np.asarray(plain).astype(int)
    changed = np.abs(drawn - before).sum(axis=2) > 0
    # the box spans x 75-225, y 50-150: its outline changed, the frame's corners far from it did not
    assert changed[50:150, 75:225].any()
    assert not changed[170:, :60].any() and not changed[:20, 250:].any()
    assert world.desk.picture_edit([]) is None
    world.settings.detection_threshold = 0.95
    assert world.desk.boxes_worth_showing(facts) == []  # under the threshold: not drawn in the photo view
