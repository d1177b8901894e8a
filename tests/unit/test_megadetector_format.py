"""The MegaDetector results format: reading (SpeciesNet classifications included), path matching, writing and
the round trip."""
import json
from pathlib import Path

import pytest

from core.camtrap import megadetector as md

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "megadetector"


def results(images, **extra):
    data = {"info": {"format_version": "1.4", "detector": "md_v5a.0.0.pt"},
            "detection_categories": {"1": "animal", "2": "person", "3": "vehicle"}, "images": images}
    data.update(extra)
    return data


def test_reads_the_real_fixture():
    r = md.read_results(FIXTURE / "md_results.json")
    assert r.format_version == "1.4" and len(r.entries) == 6
    fox = next(e for e in r.entries if e.file.endswith("channel-islands-thumb.jpg"))
    assert [(b.category, b.conf) for b in fox.boxes] == [("animal", 0.98)]
    assert abs(fox.boxes[0].w - 0.4637) < 1e-9
    empty = next(e for e in r.entries if "left" in e.file)
    assert empty.boxes == [] and empty.failure is None


def test_speciesnet_classifications_give_the_label():
    r = md.parse_results(results(
        [{"file": "a.jpg", "detections": [{"category": "1", "conf": 0.9, "bbox": [0.1, 0.1, 0.2, 0.2],
                                           "classifications": [["3", 0.7], ["0", 0.2]]}]}],
        classification_categories={"0": "fox", "3": "black bear"},
        info={"format_version": "1.5", "detector": "MDV5A", "classifier": "speciesnet v4"}))
    box = r.entries[0].boxes[0]
    assert (box.label, box.label_conf) == ("black bear", 0.7)
    assert r.model == "MDV5A + speciesnet v4"


def test_boxes_sorted_most_confident_first_and_unknown_categories_left_out_with_a_notice():
    r = md.parse_results(results([{"file": "a.jpg", "detections": [
        {"category": "1", "conf": 0.3, "bbox": [0, 0, 0.1, 0.1]},
        {"category": "2", "conf": 0.8, "bbox": [0.5, 0.5, 0.1, 0.1]},
        {"category": "7", "conf": 0.9, "bbox": [0.5, 0.5, 0.1, 0.1]}]}]))
    assert [b.category for b in r.entries[0].boxes] == ["person", "animal"]
    assert r.notices and "id 7" in r.notices[0]


def test_failures_and_videos():
    r = md.parse_results(results([
        {"file": "bad.jpg", "failure": "Failure image access", "detections": None},
        {"file": "clip.mp4", "frame_rate": 20, "frames_processed": [0], "detections": []},
        {"file": "ok.jpg", "detections": []}]))
    assert [e.file for e in r.failures] == ["bad.jpg"]
    assert r.skipped == [("clip.mp4", "is a video; videos are skipped for now")]
    assert [e.file for e in r.entries] == ["bad.jpg", "ok.jpg"]


def test_old_detector_without_a_name():
    r = md.parse_results(results([], info={"format_version": "1.0"}))
    assert r.model == md.NO_DETECTOR


@pytest.mark.parametrize("file,expected", [
    ("north/a.jpg", "north/a.jpg"),
    ("./north//a.jpg", "north/a.jpg"),
    ("north\\sub\\a.jpg", "north/sub/a.jpg"),
    ("../elsewhere/a.jpg", None),
])
def test_relative_names(file, expected, tmp_path):
    assert md.relative_name(file, tmp_path) == expected


def test_absolute_paths_inside_the_folder_are_accepted(tmp_path):
    (tmp_path / "north").mkdir()
    (tmp_path / "north" / "a.jpg").write_bytes(b"x")
    r = md.parse_results(results([{"file": str(tmp_path / "north" / "a.jpg"), "detections": []},
                                  {"file": "/somewhere/else/b.jpg", "detections": []},
                                  {"file": "north/missing.jpg", "detections": []}]))
    found, missing = md.match_folder(r, tmp_path)
    assert list(found) == ["north/a.jpg"]
    assert missing == ["/somewhere/else/b.jpg", "north/missing.jpg"]


def test_write_and_read_back(tmp_path):
    class D:
        def __init__(self, x, y, w, h, category, conf, label=None, label_conf=None):
            self.x, self.y, self.w, self.h, self.category, self.conf = x, y, w, h, category, conf
            self.label, self.label_conf = label, label_conf

    frames = [("north/a.jpg", [D(0.1, 0.2, 0.3, 0.4, "animal", 0.93, "red fox", 0.8),
                               D(0.5, 0.5, 0.2, 0.2, "person", 0.4)]),
              ("north/empty.jpg", []), ("north/never.jpg", None)]
    out = tmp_path / "md.json"
    data = md.write_megadetector(frames, out, detector="MDV5A", classifier="speciesnet",
                                 failures={"north/broken.jpg": "Failure image access"})
    assert json.loads(out.read_text()) == data
    back = md.read_results(out)
    assert back.model == "MDV5A + speciesnet"
    by_file = {e.file: e for e in back.entries}
    assert set(by_file) == {"north/a.jpg", "north/empty.jpg", "north/broken.jpg"}  # "never" was not looked at
    a = by_file["north/a.jpg"].boxes
    assert [(b.category, b.conf, b.label) for b in a] == [("animal", 0.93, "red fox"), ("person", 0.4, None)]
    assert (a[0].x, a[0].y, a[0].w, a[0].h) == (0.1, 0.2, 0.3, 0.4)
    assert by_file["north/broken.jpg"].failure == "Failure image access"


def test_the_fixture_round_trips_through_the_writer(tmp_path):
    first = md.read_results(FIXTURE / "md_results.json")
    md.write_megadetector([(e.file, e.boxes) for e in first.entries], tmp_path / "again.json",
                          detector=first.model)
    again = md.read_results(tmp_path / "again.json")
    assert [(e.file, e.boxes) for e in again.entries] == [(e.file, e.boxes) for e in first.entries]


def test_writer_names_the_detections_model_when_not_told(tmp_path):
    class D:
        x, y, w, h, category, conf, model = 0.1, 0.1, 0.2, 0.2, "animal", 0.5, "MDV5A + speciesnet v4"
    data = md.write_megadetector([("a.jpg", [D()])])
    assert data["info"]["detector"] == "MDV5A" and data["info"]["classifier"] == "speciesnet v4"
