"""Hostile detections files: each is refused with what is wrong and how to fix it, never guessed at."""
import json

import pytest

from core.camtrap import megadetector as md
from core.contracts.errors import InputError

CATS = {"1": "animal", "2": "person", "3": "vehicle"}


def good(images=None, **over):
    data = {"info": {"format_version": "1.4"}, "detection_categories": CATS,
            "images": images if images is not None else [{"file": "a.jpg", "detections": []}]}
    data.update(over)
    return data


def det(bbox, conf=0.9, category="1"):
    return good([{"file": "a.jpg", "detections": [{"category": category, "conf": conf, "bbox": bbox}]}])


CASES = [
    ("pixel boxes", det([120, 80, 300, 200]), "pixel values", "divide"),
    ("corner boxes", det([0.5, 0.5, 0.9, 0.8]), "corner boxes", "[x_min, y_min, width, height]"),
    ("negative origin", det([-0.2, 0.1, 0.1, 0.1]), "inside the image", "fraction"),
    ("zero width", det([0.2, 0.1, 0.0, 0.1]), "inside the image", "fraction"),
    ("three numbers", det([0.2, 0.1, 0.1]), "four numbers", "unchanged"),
    ("text in a box", det(["0.2", 0.1, 0.1, 0.1]), "four numbers", "unchanged"),
    ("NaN in a box", det([float("nan"), 0.1, 0.1, 0.1]), "four numbers", "unchanged"),
    ("confidence above 1", det([0.1, 0.1, 0.1, 0.1], conf=93), "confidence", "unchanged"),
    ("confidence missing", det([0.1, 0.1, 0.1, 0.1], conf=None), "confidence", "unchanged"),
    ("version 2", good(info={"format_version": "2.0"}), "format_version '2.0'", "1.x"),
    ("no version", good(info={}), "no info.format_version", "1.x"),
    ("no info", {k: v for k, v in good().items() if k != "info"}, "no info.format_version", "1.x"),
    ("no categories", good(detection_categories={}), "no detection_categories", "animal"),
    ("SpeciesNet predictions", {"predictions": [{"filepath": "a.jpg", "prediction": "x;y;z;fox"}]},
     "SpeciesNet's own predictions file", "speciesnet.scripts.speciesnet_to_md"),
    ("a list", [1, 2, 3], "not a MegaDetector results file", "run_detector_batch"),
    ("COCO file", {"annotations": [], "categories": []}, "not a MegaDetector results file", "run_detector_batch"),
    ("detection not an object", good([{"file": "a.jpg", "detections": ["box"]}]), "not an object", "unchanged"),
]


@pytest.mark.parametrize("name,data,says,fix", CASES, ids=[c[0] for c in CASES])
def test_refused_with_reason_and_fix(name, data, says, fix, tmp_path):
    path = tmp_path / "md.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        md.read_results(path)
    assert says in err.value.message
    assert fix in err.value.hint


@pytest.mark.parametrize("content,says", [
    (b"{not json", "is not JSON"),
    (b"\xff\xfe\x00garbage", "is not JSON"),
    (b"", "is not JSON"),
])
def test_unreadable_bytes(content, says, tmp_path):
    path = tmp_path / "md.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as err:
        md.read_results(path)
    assert says in err.value.message


def test_missing_file(tmp_path):
    with pytest.raises(InputError) as err:
        md.read_results(tmp_path / "nope.json")
    assert "--detections" in err.value.hint


def test_too_large(tmp_path, monkeypatch):
    path = tmp_path / "md.json"
    path.write_text(json.dumps(good()))
    monkeypatch.setattr(md, "MAX_BYTES", 10)
    with pytest.raises(InputError) as err:
        md.read_results(path)
    assert "split it" in err.value.hint


def test_broken_entries_are_skipped_not_fatal(tmp_path):
    data = good([{"detections": []}, {"file": ""}, {"file": "b.jpg", "detections": "none"},
                 {"file": "c.jpg", "detections": []}])
    r = md.parse_results(data)
    assert [e.file for e in r.entries] == ["c.jpg"]
    assert [name for name, _ in r.skipped] == ["images[0]", "images[1]", "b.jpg"]


def test_rounding_past_the_edge_is_tolerated():
    r = md.parse_results(det([0.5, 0.5, 0.5002, 0.5001]))
    assert r.entries[0].boxes[0].w == 0.5002
