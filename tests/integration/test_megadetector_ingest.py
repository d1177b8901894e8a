"""`ingest FOLDER --detections FILE.json` on real SQLite + real FAISS with the hash stand-in embedder, on the real
camera-trap fixture (tests/fixtures/megadetector): boxes stored, empty frames marked, crops embedded and searched
(a photo found through its animal's crop carries matched_detection), a second ingest embeds nothing again, and
a bad results file is refused before anything is written."""
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

from app import build_services
from core.camtrap import boxes
from core.camtrap.crop_index import CropIndex
from core.config import load_settings
from core.contracts.errors import InputError
from core.search.presets import request_for

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "megadetector"
PHEASANT_BOX = [0.1575, 0.2, 0.5788, 0.5667]


def _settings(tmp_path, **kw):
    base = dict(data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0, batch_size=4,
                max_image_pixels=4_000_000)
    base.update(kw)
    return load_settings(environ={}, **base)


@pytest.fixture
def card(tmp_path):
    folder = tmp_path / "card"
    shutil.copytree(FIXTURE, folder)  # the results file lies inside the folder, as MegaDetector leaves it
    Image.new("RGB", (320, 240), (90, 140, 60)).save(folder / "north" / "not-in-the-file.jpg")
    return folder


def test_ingest_with_detections_then_search_inside_the_animal(tmp_path, card):
    services = build_services(_settings(tmp_path))
    report = services.ingestor().run(card, detections=card / "md_results.json")
    assert report.added == 7 and report.crops == 5
    assert not any("md_results.json" in n for n in report.ignored)  # the results file is not a photo
    said = " | ".join(report.notices)
    assert "6 frame(s) matched, 5 box(es) stored" in said and "1 frame(s) have no box at or above 0.2" in said
    assert "already had the same boxes" not in said  # a fresh catalog: nothing was there before
    by_name = {Path(p.path).name: p.id for p in services.catalog.get_photos(list(range(1, 20)))}
    store = services.camtrap
    assert store.empty_ids(0.2).tolist() == [by_name["idaho-camera-traps-left.jpg"]]  # not the unlisted photo
    dets = store.detections([by_name["pheasant_web.jpg"]])[by_name["pheasant_web.jpg"]]
    assert [(d.category, d.conf) for d in dets] == [("animal", 0.96)]

    frame = Image.open(card / "south" / "pheasant_web.jpg").convert("RGB")
    query = boxes.crop(frame, tuple(PHEASANT_BOX), 0.1)  # the animal, as the crop index holds it
    result = services.engine.search(request_for("Fast", "", examples=[query]))
    top = result.hits[0].to_json()
    assert top["id"] == by_name["pheasant_web.jpg"]
    assert top["matched_detection"] == {"bbox": PHEASANT_BOX, "category": "animal", "conf": 0.96,
                                        "model": "megadetector (version unknown)"}
    whole = services.engine.search(request_for("Fast", "", examples=[frame]))
    assert whole.hits[0].photo_id == by_name["pheasant_web.jpg"]
    assert whole.hits[0].to_json()["matched_detection"] is None  # the whole frame matched better than any crop


def test_second_ingest_of_the_same_results_embeds_nothing_again(tmp_path, card):
    build_services(_settings(tmp_path)).ingestor().run(card, detections=card / "md_results.json")
    services = build_services(_settings(tmp_path))
    vs = services.catalog.vector_set(services.backends.embedder.model_id, services.backends.embedder.dim)
    before = CropIndex(services.index_store.root, vs.id, vs.dim).load().detection_ids().tolist()
    again = services.ingestor().run(card, detections=card / "md_results.json")
    assert (again.added, again.reembedded, again.crops) == (0, 0, 0)
    assert "6 frame(s) already had the same boxes" in " | ".join(again.notices)
    assert CropIndex(services.index_store.root, vs.id, vs.dim).load().detection_ids().tolist() == before


def test_changed_boxes_replace_the_old_ones_and_their_crops(tmp_path, card):
    build_services(_settings(tmp_path)).ingestor().run(card, detections=card / "md_results.json")
    data = json.loads((card / "md_results.json").read_text())
    data["images"][5]["detections"][0]["bbox"] = [0.2, 0.25, 0.5, 0.5]  # the pheasant's box, redrawn
    data["images"].append({"file": "south/gone.jpg", "detections": []})
    data["images"].append({"file": "south/broken.jpg", "failure": "Failure image access", "detections": None})
    changed = card / "md_results_v2.json"
    changed.write_text(json.dumps(data))
    services = build_services(_settings(tmp_path))
    report = services.ingestor().run(card, detections=changed)
    said = " | ".join(report.notices)
    assert report.crops == 1 and report.added == 0
    assert "1 entry of the detections file matches no photo of the folder: south/gone.jpg" in said
    assert "the detector failed on 1 frame(s)" in said and "south/broken.jpg (Failure image access)" in said
    vs = services.catalog.vector_set(services.backends.embedder.model_id, services.backends.embedder.dim)
    crops = CropIndex(services.index_store.root, vs.id, vs.dim).load()
    assert len(crops) == 5  # the old pheasant crop left with its box
    assert all(crops.box(int(d))[1][0] != 0.1575 for d in crops.detection_ids())


def test_a_bad_results_file_is_refused_before_anything_is_written(tmp_path, card):
    bad = card / "pixels.json"
    data = json.loads((card / "md_results.json").read_text())
    data["images"][0]["detections"][0]["bbox"] = [17, 168, 313, 329]
    bad.write_text(json.dumps(data))
    services = build_services(_settings(tmp_path))
    with pytest.raises(InputError) as err:
        services.ingestor().run(card, detections=bad)
    assert "pixel values" in err.value.message
    assert services.catalog.count() == 0
    with pytest.raises(InputError) as err:
        services.ingestor().run(card / "north" / "nacti.jpg", detections=card / "md_results.json")
    assert "goes with a folder" in err.value.message


def test_a_lost_or_damaged_crop_index_is_embedded_again(tmp_path, card):
    build_services(_settings(tmp_path)).ingestor().run(card, detections=card / "md_results.json")
    services = build_services(_settings(tmp_path))
    vs = services.catalog.vector_set(services.backends.embedder.model_id, services.backends.embedder.dim)
    crops = CropIndex(services.index_store.root, vs.id, vs.dim)
    crops.path.write_bytes(crops.path.read_bytes()[:100])  # a damaged crop index
    report = services.ingestor().run(card)
    assert report.crops == 5 and report.added == 0
    said = " | ".join(report.notices)
    assert "crop index:" in said and "5 crop vector(s) recorded in the catalog were missing" in said
    assert len(CropIndex(services.index_store.root, vs.id, vs.dim).load()) == 5
    assert len(services.camtrap.crop_ids(vs.id)) == 5


def test_round_trip_ingest_export_ingest(tmp_path, card):
    """The fixture's results in, the detections out as MegaDetector results, and into a fresh catalog: the same
    boxes on the same frames, the same empty frame, the unlisted photo still not called empty."""
    from core import exporting
    from core.contracts.records import Filters

    first = build_services(_settings(tmp_path))
    first.ingestor().run(card, detections=card / "md_results.json")
    sources = exporting.ExportSources(first.settings, None, first.corpus.photos, first.camtrap,
                                      lambda: first.catalog.filter_ids(Filters()))
    out = tmp_path / "exported.json"
    exporting.export(sources, "megadetector", out)

    def boxes_by_name(services):
        photos = services.catalog.get_photos(list(range(1, 20)))
        dets = services.camtrap.detections([p.id for p in photos])
        empty = set(services.camtrap.empty_ids(0.2).tolist())
        return ({Path(p.path).name: [(d.x, d.y, d.w, d.h, d.category, d.conf, d.model) for d in dets.get(p.id, [])]
                 for p in photos}, {Path(p.path).name for p in photos if p.id in empty})

    second = build_services(_settings(tmp_path, data_dir=str(tmp_path / "data2")))
    report = second.ingestor().run(card, detections=out)
    assert report.crops == 5
    assert boxes_by_name(second) == boxes_by_name(first)
    assert boxes_by_name(second)[1] == {"idaho-camera-traps-left.jpg"}


def test_a_frame_ranked_through_its_animals_box_shows_the_boxs_similarity(tmp_path, card):
    """A words search ranks a frame by its frame's or its best box's cosine, whichever is higher; the number
    shown (similarity) is that same cosine. It was the frame's alone: '#1 · 0.03 (matched in the animal's
    box)' above '#2 · 0.15' read as a ranking that contradicts its numbers."""
    services = build_services(_settings(tmp_path))
    services.ingestor().run(card, detections=card / "md_results.json")
    through_box = 0
    for query in ("a deer at night", "a fox on a rock", "a bird in the grass", "a cat in the snow"):
        result = services.engine.search(request_for("Fast", query, k=7))
        assert result.stages["score"]["kind"] == "cosine"
        for hit in result.hits:
            assert hit.similarity == pytest.approx(max(hit.score, 0.0), abs=1e-5), (query, hit)
            through_box += hit.matched_detection is not None
        shown = [h.similarity for h in result.hits]
        assert shown == sorted(shown, reverse=True), (query, shown)
    assert through_box  # some frame was ranked through its box: the check above saw that case
