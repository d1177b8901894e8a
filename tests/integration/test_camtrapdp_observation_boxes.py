"""A Camtrap DP package's media-level boxes become detections of their frames (core.camtrap.observation_boxes):
on the standard's example (tests/fixtures/camtrap-dp-example: 20 boxed observations, 10 of them on the JPEGs in
media/), their crops are embedded and a search finds a frame through its animal's crop, with the box in its
`detections`; the frames are not marked as looked at by a detector (none is called empty); a second ingest adds
nothing; the MegaDetector export does not write them as a detector's results."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from PIL import Image

from app import build_services
from core import exporting
from core.camtrap import boxes, observation_boxes
from core.camtrap.crop_index import CropIndex
from core.config import load_settings
from core.contracts.camtrap import Observation
from core.contracts.errors import InputError
from core.search.presets import request_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "fixtures" / "camtrap-dp-example"


@pytest.fixture
def services(tmp_path, monkeypatch):
    import socket

    def lookup(host, *args, **kwargs):  # the example's 413 URLs: never reached from a test
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (offline test)")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return build_services(load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash",
                                        checkpoint_s=0.0, batch_size=16, max_image_pixels=4_000_000))


def _boxed() -> tuple[list[dict[str, str]], dict[str, str]]:
    with open(EXAMPLE / "observations.csv", newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["bboxX"]]
    with open(EXAMPLE / "media.csv", newline="", encoding="utf-8") as fh:
        paths = {r["mediaID"]: r["filePath"] for r in csv.DictReader(fh)}
    return rows, paths


def test_the_example_s_boxes_are_detections_with_crops_found_by_a_search(services):
    report = services.ingestor().run(EXAMPLE)
    rows, paths = _boxed()
    local = [r for r in rows if not paths[r["mediaID"]].startswith("https://")]
    assert len(rows) == 20 and len(local) == 10
    assert report.crops == len(local)  # the URL media have no file here: no crop
    assert any(n.startswith("20 observation boxes of the package are detections") for n in report.notices)
    store = services.camtrap
    ids = store.photo_ids_for_media([r["mediaID"] for r in rows])
    found = store.detections(list(ids.values()))
    for r in rows:
        (d,) = found[ids[r["mediaID"]]]
        assert [d.x, d.y, d.w, d.h] == [float(r[c]) for c in ("bboxX", "bboxY", "bboxWidth", "bboxHeight")]
        assert (d.category, d.conf, d.label) == ("animal", float(r["classificationProbability"]), r["scientificName"])
        assert d.model == "camtrap-dp: " + r["classifiedBy"]
    captures = store.captures(list(ids.values()))
    assert not any(c.detector_looked for c in captures.values()) and store.empty_ids(0.2).tolist() == []
    vs = services.catalog.vector_sets()[0]
    assert len(CropIndex(services.index_store.root, vs.id, vs.dim).load()) == len(local)

    r = local[0]
    box = tuple(float(r[c]) for c in ("bboxX", "bboxY", "bboxWidth", "bboxHeight"))
    frame = Image.open(EXAMPLE / paths[r["mediaID"]]).convert("RGB")
    query = boxes.crop(frame, box, services.settings.crop_margin)  # the animal, as the crop index holds it
    result = services.engine.search(request_for("Fast", "", examples=[query]))
    top = json.loads(json.dumps(result.hits[0].to_json()))  # as `search --json` prints it
    assert top["id"] == ids[r["mediaID"]]
    assert top["matched_detection"]["bbox"] == [round(v, 6) for v in box]
    assert top["detections"][0]["bbox"] == [round(v, 6) for v in box]

    again = services.ingestor().run(EXAMPLE)  # nothing doubles, nothing is embedded again
    assert again.crops == 0
    assert sum(len(v) for v in store.detections(list(ids.values())).values()) == 20


def test_the_megadetector_export_does_not_write_imported_boxes(services, tmp_path):
    services.ingestor().run(EXAMPLE)
    ids = [int(i) for i in services.camtrap.photo_ids_for_media(list(_boxed()[1])).values()]
    sources = exporting.ExportSources(services.settings, None, services.catalog.get_photos, services.camtrap,
                                      lambda: ids)
    with pytest.raises(InputError, match="looked at by a detector"):
        exporting.export(sources, "megadetector", tmp_path / "md.json")


@pytest.mark.parametrize("kind, method, probability, made", [
    ("human", "human", None, ("person", 1.0)),
    ("vehicle", "human", 0.7, ("vehicle", 0.7)),
    ("animal", "machine", None, None),  # a machine's box without its confidence: left out
    ("blank", "human", None, None),
    ("unknown", "human", None, None),
])
def test_which_observation_boxes_become_detections(kind, method, probability, made):
    o = Observation(level="media", type=kind, photo_id=3, bbox_x=0.1, bbox_y=0.2, bbox_w=0.3, bbox_h=0.4,
                    method=method, probability=probability)
    d = observation_boxes.detection_of(o)
    assert (None if d is None else (d.category, d.conf)) == made
    if d is not None:
        assert d.model == f"camtrap-dp: {method}" and observation_boxes.is_imported(d)
    o.level = "event"
    assert observation_boxes.detection_of(o) is None
