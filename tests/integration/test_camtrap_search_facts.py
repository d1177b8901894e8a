"""The camera-trap side of a search on a real SQLite store: empty frames hidden with a count (frames no detector
looked at never empty), the category filter at the threshold, events regrouped with MaxN from the boxes (a
source's events left as they are), one result per event, and the facts each result carries."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from core.camtrap import hit_facts
from core.camtrap.events import regroup
from core.camtrap.pool import CamtrapPool
from core.contracts.camtrap import CamtrapFilters, Capture, Deployment, Detection, Event
from core.contracts.errors import InputError, NotFoundError
from core.contracts.records import Filters, Hit, Photo
from storage.camtrap_store import SqlCamtrapStore
from storage.catalog import SqlCatalog
from storage.db import open_engine


@pytest.fixture
def world(tmp_path):
    cat = SqlCatalog(open_engine(tmp_path / "c.sqlite"))
    ids = cat.add_photos([Photo(path=f"/card/A/p{i}.jpg", sha256=f"{i + 1:064x}") for i in range(6)])
    store = SqlCamtrapStore(cat.engine)
    store.upsert_deployments([Deployment(key="A", latitude=51.4779, longitude=-0.0015)])
    base = 1718967600.0  # 2024-06-21 11:00 UTC
    store.upsert_events([Event(key="given-7", deployment_key="A")])
    store.set_captures([Capture(photo_id=ids[0], deployment_key="A", utc_epoch=base, captured_at="2024-06-21T12:00:00"),
                        Capture(photo_id=ids[1], deployment_key="A", utc_epoch=base + 10,
                                captured_at="2024-06-21T12:00:10"),
                        Capture(photo_id=ids[2], deployment_key="A", utc_epoch=base + 15,
                                captured_at="2024-06-21T12:00:15", utc_offset="+01:00"),
                        Capture(photo_id=ids[3], deployment_key="A", utc_epoch=base + 3600),
                        Capture(photo_id=ids[4], deployment_key="A", utc_epoch=base + 20, event_key="given-7")])
    # photo 0: one animal; photo 1: three animals and a weak box; photo 2: looked at, nothing above 0.2 (empty);
    # photo 3: looked at, no box at all (empty); photo 5: a plain photo nobody looked at
    boxes = [Detection(0.1, 0.1, 0.2, 0.2, "animal", 0.9, "MDV5a", photo_id=ids[0])]
    boxes += [Detection(0.1 * k, 0.1, 0.1, 0.1, "animal", 0.8, "MDV5a", photo_id=ids[1]) for k in range(3)]
    boxes += [Detection(0.5, 0.5, 0.1, 0.1, "person", 0.1, "MDV5a", photo_id=ids[1]),
              Detection(0.5, 0.5, 0.1, 0.1, "animal", 0.1, "MDV5a", photo_id=ids[2])]
    store.add_detections(boxes)
    store.mark_looked(ids[:4])
    return cat, store, ids


def _narrow(store, ids, filters=None, pool=None):
    return CamtrapPool(store, 0.2).narrow(pool, filters, lambda: np.asarray(ids, dtype=np.int64))


def test_empty_frames_are_hidden_with_a_count_and_shown_on_request(world):
    _, store, ids = world
    pool, notices = _narrow(store, ids)
    assert pool.tolist() == [ids[0], ids[1], ids[4], ids[5]]  # ids[5] no detector looked at: never empty
    assert notices == ["2 empty frames hidden (a detector found nothing in them; --include-empty shows them)"]
    pool, notices = _narrow(store, ids, CamtrapFilters(include_empty=True))
    assert pool is None and notices == []
    pool, _ = _narrow(store, ids, None, pool=np.asarray([ids[2], ids[5]]))
    assert pool.tolist() == [ids[5]]


def test_category_at_the_threshold(world):
    _, store, ids = world
    assert _narrow(store, ids, CamtrapFilters(categories=("animal",)))[0].tolist() == [ids[0], ids[1]]
    assert _narrow(store, ids, CamtrapFilters(categories=("person",)))[0].tolist() == []  # 0.1 < 0.2


def test_bad_and_unknown_values(world):
    _, store, ids = world
    with pytest.raises(NotFoundError, match="No deployment named 'Z'") as err:
        _narrow(store, ids, CamtrapFilters(deployments=("Z",)))
    assert "A" in err.value.hint
    with pytest.raises(InputError, match="'bird' is not one of animal, person, vehicle"):
        _narrow(store, ids, CamtrapFilters(categories=("bird",)))
    with pytest.raises(InputError, match="'robot' is not human, machine or none"):
        _narrow(store, ids, CamtrapFilters(classified="robot"))


def test_regroup_makes_events_with_maxn_and_keeps_the_sources(world):
    _, store, ids = world
    assert regroup(store, ["A"], 60, 0.2) == 3  # given-7, A#1 (0, 1, 2), A#2 (3)
    caps = store.captures(ids)
    assert caps[ids[0]].event_key == caps[ids[1]].event_key == caps[ids[2]].event_key == "A#1"
    assert caps[ids[3]].event_key == "A#2" and caps[ids[4]].event_key == "given-7"
    events = {e.key: e for e in store.events()}
    assert (events["A#1"].frames, events["A#1"].max_n) == (3, 3)  # the weak boxes do not count
    assert (events["A#1"].start, events["A#1"].end) == ("2024-06-21T12:00:00", "2024-06-21T12:00:15")
    assert events["given-7"].frames == 0  # the source's row is the source's: not rewritten
    # a frame added later between the two events joins nothing (an hour apart) but regrouping is stable
    assert regroup(store, ["A"], 60, 0.2) == 3 and store.captures([ids[3]])[ids[3]].event_key == "A#2"
    # a larger gap joins them: the event that is no longer needed stays, with no frames
    regroup(store, ["A"], 7200, 0.2)
    events = {e.key: e for e in store.events()}
    assert events["A#1"].frames == 4 and events["A#2"].frames == 0


def test_by_event_and_the_facts_of_each_result(world):
    _, store, ids = world
    regroup(store, ["A"], 60, 0.2)
    corpus = SimpleNamespace(camtrap=store)
    by = Filters(camtrap=CamtrapFilters(by_event=True))
    ranked = [(ids[1], 0.9), (ids[0], 0.8), (ids[5], 0.7), (ids[2], 0.6), (ids[3], 0.5)]
    assert hit_facts.by_event(corpus, Filters(), ranked) == ranked
    collapsed = hit_facts.by_event(corpus, by, ranked)
    assert collapsed == [(ids[1], 0.9), (ids[5], 0.7), (ids[3], 0.5)]
    hits = [Hit(rank=r, photo_id=i, score=s) for r, (i, s) in enumerate(collapsed, 1)]
    hit_facts.attach(corpus, hits, by)
    first, plain, lone = (h.to_json() for h in hits)
    assert first["deployment_id"] == "A" and first["event_id"] == "A#1"
    assert first["timestamp"] == "2024-06-21T12:00:10"  # no offset known: none shown
    assert first["event_frames"] == 3 and first["event_frame_ids"] == [ids[0], ids[1], ids[2]]
    assert [d["category"] for d in first["detections"]] == ["animal"] * 3 + ["person"]
    assert first["detections"][0] == {"bbox": [0.0, 0.1, 0.1, 0.1], "category": "animal", "conf": 0.8,
                                      "model": "MDV5a"}
    assert first["matched_detection"] is None
    assert (plain["deployment_id"], plain["event_id"], plain["timestamp"]) == (None, None, None)
    assert plain["detections"] == []
    assert plain["event_frames"] == 1 and plain["event_frame_ids"] == [ids[5]]
    assert lone["event_frames"] == 1
    hits = [Hit(rank=1, photo_id=ids[2], score=1.0)]
    hit_facts.attach(corpus, hits, Filters())
    assert hits[0].to_json()["timestamp"] == "2024-06-21T12:00:15+01:00" and "event_frames" not in hits[0].to_json()


def test_what_is_kept_between_searches_follows_the_store(world):
    cat, store, ids = world
    pool = CamtrapPool(store, 0.2)
    def every():
        return np.asarray(ids, dtype=np.int64)

    assert pool.narrow(None, None, every)[1][0].startswith("2 empty frames hidden")
    store.add_detections([Detection(0.2, 0.2, 0.3, 0.3, "animal", 0.95, "MDV5a", photo_id=ids[3])])
    assert pool.narrow(None, None, every)[1][0].startswith("1 empty frame hidden")
    other = SqlCamtrapStore(cat.engine)  # another process's store: its writes are seen once its ingest ends
    run = cat.start_ingest("detections.json")
    other.mark_looked([ids[5]])
    cat.finish_ingest(run, {})
    assert pool.narrow(None, None, every)[1][0].startswith("2 empty frames hidden")
    night = CamtrapFilters(times_of_day=("day",), include_empty=True)
    kept, notices = pool.narrow(None, night, every)  # 11:00-12:00 UTC at Greenwich in June
    said = "1 photo without a known place or a trusted capture time left out by the time-of-day filter"
    assert kept.tolist() == ids[:5] and len(notices) == 1 and notices[0].startswith(said)
    assert "--deployments FILE.csv" in notices[0]  # and how to give the frames a place
    store.set_captures([replace(store.captures([ids[3]])[ids[3]], time_issue="year 1970", utc_epoch=None)])
    assert pool.narrow(None, night, every)[0].tolist() == [ids[0], ids[1], ids[2], ids[4]]
