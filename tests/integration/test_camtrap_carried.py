"""A person's count of an event survives later ingests of the card (core.camtrap.carried), on real SQLite with
the hash stand-in embedder: the card ingested with a MegaDetector results file (three boxes on one frame), the
event identified with a count of one, then the card ingested again as it was and again with an earlier frame
added (which renumbers the made events): the identification goes with its frames, its count stays the event's
MaxN (not the machine's three), and the Camtrap DP package says so."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from app import build_services
from core.camtrap import camtrapdp_validate, frame_facts
from core.camtrap.camtrapdp_write import write_package
from core.camtrap.identifications import identify
from core.config import load_settings
from tests.camtrap_photos import exif_jpeg, write

DEPLOYMENTS = "deploymentID,latitude,longitude,deploymentStart\ns1,51.4779,-0.0015,2024-06-01T00:00:00+01:00\n"


@pytest.fixture
def card(tmp_path):
    """s1: a burst a (one fox box), b (three boxes) at 13:00, and a lone frame c an hour later."""
    folder = tmp_path / "card"
    write(folder / "s1" / "a.jpg", exif_jpeg("2024:06:21 13:00:00", colour=(10, 20, 30)))
    write(folder / "s1" / "b.jpg", exif_jpeg("2024:06:21 13:00:05", colour=(90, 20, 30)))
    write(folder / "s1" / "c.jpg", exif_jpeg("2024:06:21 14:00:00", colour=(10, 90, 30)))
    boxes = [{"category": "1", "conf": 0.9, "bbox": [0.1 + 0.2 * k, 0.1, 0.1, 0.1]} for k in range(3)]
    results = {"info": {"format_version": "1.4", "detector": "MDV5a"}, "detection_categories": {"1": "animal"},
               "images": [{"file": "s1/a.jpg", "detections": boxes[:1]}, {"file": "s1/b.jpg", "detections": boxes},
                          {"file": "s1/c.jpg", "detections": boxes[:2]}]}
    write(tmp_path / "md.json", json.dumps(results).encode())
    write(tmp_path / "deployments.csv", DEPLOYMENTS.encode())
    return folder


def _ingest(tmp_path, card):
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0,
                             batch_size=4)
    services = build_services(settings)
    services.ingestor().run(card, detections=tmp_path / "md.json", deployments=str(tmp_path / "deployments.csv"))
    return services


def _names(services) -> dict[str, int]:
    return {Path(p.path).stem: int(p.id) for p in services.catalog.get_photos(list(range(1, 30)))}


def _events(services) -> dict[str, tuple[int, int | None]]:
    """event key -> (frames, MaxN) of the events that hold frames."""
    return {e.key: (e.frames, e.max_n) for e in services.camtrap.events() if e.frames}


def _package(services, folder: Path) -> list[dict[str, str]]:
    write_package(folder, services.camtrap, services.catalog.get_photos, services.settings)
    descriptor = json.loads((folder / "datapackage.json").read_text(encoding="utf-8"))
    assert camtrapdp_validate.profile_problems(descriptor) == []
    assert camtrapdp_validate.check(descriptor, folder).bad_rows == {}
    with (folder / "observations.csv").open(encoding="utf-8", newline="") as f:
        return [r for r in csv.DictReader(f) if r["observationLevel"] == "event"]


def test_a_persons_count_stays_the_maxn_when_the_card_is_ingested_again(tmp_path, card):
    services = _ingest(tmp_path, card)
    assert _events(services) == {"s1#1": (2, 3), "s1#2": (1, 2)}  # the machine's MaxN: most boxes in one frame
    identify(services.camtrap, "Vulpes vulpes", "Ann", event="s1#1", count=1, now=lambda: "2026-11-28T08:00:00Z")
    assert _events(services)["s1#1"] == (2, 1)

    services = _ingest(tmp_path, card)  # the same card again: regrouped, the person's count kept
    assert _events(services) == {"s1#1": (2, 1), "s1#2": (1, 2)}
    rows = _package(services, tmp_path / "same")
    assert [(r["eventID"], r["count"], r["classifiedBy"], r["classificationMethod"]) for r in rows] == [
        ("s1#1", "1", "Ann", "human")]

    write(card / "s1" / "0.jpg", exif_jpeg("2024:06:21 12:00:00", colour=(200, 200, 30)))  # earlier: renumbers
    services = _ingest(tmp_path, card)
    names = _names(services)
    assert _events(services) == {"s1#1": (1, 0), "s1#2": (2, 1), "s1#3": (1, 2)}
    facts = frame_facts.facts(services.camtrap, [names["a"], names["b"], names["0"]])
    assert facts[names["a"]]["event_id"] == facts[names["b"]]["event_id"] == "s1#2"
    assert facts[names["a"]]["max_n"] == 1 and facts[names["0"]]["max_n"] == 0  # the photo view's MaxN
    ann = [o for o in services.camtrap.observations() if o.classified_by == "Ann"]
    assert [(o.event_key, o.count, o.key) for o in ann] == [("s1#2", 1, "ecolens:ann:event:s1#2")]
    rows = _package(services, tmp_path / "added")
    assert [(r["eventID"], r["count"], r["eventStart"][:19]) for r in rows] == [("s1#2", "1", "2024-06-21T13:00:00")]

    # the carried identification is still that person's one answer for the event: a correction replaces it
    identify(services.camtrap, "Vulpes vulpes", "Ann", event="s1#2", count=2, now=lambda: "2026-11-28T09:00:00Z")
    assert [(o.event_key, o.count) for o in services.camtrap.observations() if o.classified_by == "Ann"] == [
        ("s1#2", 2)]
    assert _events(_ingest(tmp_path, card)) == {"s1#1": (1, 0), "s1#2": (2, 2), "s1#3": (1, 2)}


def test_a_blank_from_the_newest_person_makes_the_events_maxn_0_and_a_regroup_keeps_it(tmp_path, card):
    """Ann counts one fox on s1#1 (the machine's boxes say 3), then Bo says it is blank: the event shows no
    animal by the newest person's word, now and after the card is ingested again (it kept Ann's 1 until the
    next ingest, which then gave the machine's 3)."""
    services = _ingest(tmp_path, card)
    identify(services.camtrap, "Vulpes vulpes", "Ann", event="s1#1", count=1, now=lambda: "2026-11-28T08:00:00Z")
    identify(services.camtrap, "blank", "Bo", event="s1#1", now=lambda: "2026-11-28T09:00:00Z")
    assert _events(services)["s1#1"] == (2, 0)
    assert _events(_ingest(tmp_path, card)) == {"s1#1": (2, 0), "s1#2": (1, 2)}
    identify(services.camtrap, "Vulpes vulpes", "Ann", event="s1#1", count=2, now=lambda: "2026-11-28T10:00:00Z")
    assert _events(_ingest(tmp_path, card))["s1#1"] == (2, 2)  # a count said after the blank is the newest
