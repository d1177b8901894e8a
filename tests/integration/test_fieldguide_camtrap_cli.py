"""The world's camera card end to end through the command line, as a user would take a real one: `ingest CARD
--detections FILE --deployments FILE`, then `search --json` with the camera-trap flags. What comes back is what
the world drew: deployments, true capture times (the slow camera's corrected), day and night by the sun, the
drawn boxes, empty frames hidden until asked for, bursts as events."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(args, data_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(data_dir), ECOLENS_EMBEDDER="hash", CI="true")
    out = subprocess.run([sys.executable, str(ROOT / "app.py"), *args], env=env, capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    from fieldguide.camtrap_card import build_camtrap_demo

    card = build_camtrap_demo(tmp_path_factory.mktemp("world"), seed=0)
    data = tmp_path_factory.mktemp("data")
    report = _run(["ingest", card.folder, "--detections", card.detections, "--deployments", card.deployments,
                   "--json"], data)
    truth = {t["file"]: t for t in json.loads((Path(card.folder) / "truth.json").read_text())}
    return card, data, report, truth


def _search(ingested, *flags):
    card, data, _, truth = ingested
    out = _run(["search", "an animal", "--k", "100", "--json", *flags], data)
    root = Path(card.folder).resolve()
    return {str(Path(r["path"]).resolve().relative_to(root)): r for r in out["results"]}, out


def test_every_frame_in_with_its_deployment_true_time_and_boxes(ingested):
    card, _, report, truth = ingested
    assert report["added"] == card.frames
    found, _ = _search(ingested, "--include-empty")
    assert set(found) == set(truth)
    for name, r in found.items():
        t = truth[name]
        assert r["deployment_id"] == t["deployment"]
        assert datetime.fromisoformat(r["timestamp"]) == datetime.fromisoformat(t["time"])  # the slow clock mended
        assert r["timestamp"] == t["time"]  # local wall time with its offset, never converted to UTC
        sure = [d for d in r["detections"] if d["conf"] >= 0.2]
        assert sorted((d["category"], *d["bbox"]) for d in sure) == \
            sorted((s["category"], *(round(v, 4) for v in s["bbox"])) for s in t["shown"])
    events = {}
    for name, r in found.items():
        events.setdefault(r["event_id"], set()).add(truth[name]["event"])
    assert all(len(v) == 1 for v in events.values())  # the card's bursts are its events, one for one
    assert len(events) == len({t["event"] for t in truth.values()})


def test_empty_frames_are_hidden_until_asked_for(ingested):
    _, _, _, truth = ingested
    shown, out = _search(ingested)
    assert set(shown) == {f for f, t in truth.items() if t["shown"]}
    assert any("empty" in n for n in out["notices"])


@pytest.mark.parametrize("light", ["day", "night", "dusk"])
def test_time_of_day_is_the_suns(ingested, light):
    _, _, _, truth = ingested
    found, _ = _search(ingested, "--time-of-day", light, "--include-empty")
    assert set(found) == {f for f, t in truth.items() if t["light"] == light}


def test_deployment_and_by_event(ingested):
    _, _, _, truth = ingested
    found, _ = _search(ingested, "--deployment", "fg-pond-edge", "--by-event", "--include-empty")
    expected = {t["event"] for t in truth.values() if t["deployment"] == "fg-pond-edge"}
    assert len(found) == len(expected)
    frames = sorted(r["event_frames"] for r in found.values())
    assert frames == sorted(sum(1 for t in truth.values() if t["event"] == e) for e in expected)
