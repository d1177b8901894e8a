"""The field-guide world's camera card goes in through the generic ingest of a folder, like a real card: every
frame is added (the deployments CSV, the detector's results and the notes beside them are not photos), and the
world's plug-in draws it into its demo folder."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from app import build_services
from core.config import load_settings


def test_the_card_ingests_as_a_folder_of_photos(tmp_path):
    from fieldguide.camtrap_card import build_camtrap_demo

    card = build_camtrap_demo(tmp_path / "world", seed=0)
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash")
    services = build_services(settings)
    report = services.ingestor().run(card.folder)
    assert report.added == card.frames and not report.skipped
    assert {Path(p).name for p in report.ignored} >= {"detections.json", "deployments.csv", "truth.json"}
    paths = {Path(p.path).resolve() for p in services.catalog.all_photos()}
    assert paths == {p.resolve() for p in Path(card.folder).rglob("*.jpg")}


def test_the_plugin_draws_the_card_inside_the_demo_folder(tmp_path):
    from fieldguide.plugin import register

    world = register()
    card = world.build_card(tmp_path / world.demo_folder, seed=0)
    assert Path(card.folder).parent == tmp_path / world.demo_folder
    assert Path(card.detections).is_file() and Path(card.deployments).is_file()


def _rank(scores, truth_index: int) -> int:
    return int((scores > scores[truth_index]).sum())


def test_the_worlds_encoder_finds_the_species_inside_the_box_not_in_the_whole_frame(tmp_path):
    """What the card is for: a small animal is noise in the whole frame and findable in its box. By day the
    world's encoder ranks the true species (of 12) in its top 3 for most crops, and far less often for the
    whole frames; by night (grey) the colours that tell the species apart are gone, as in the field."""
    from fieldguide.camtrap_card import build_camtrap_demo
    from fieldguide.encoder import ASSET_DIR, WEIGHTS_NAME, FieldGuideEmbedder
    from fieldguide.species import SPECIES, by_name

    if not (ASSET_DIR / WEIGHTS_NAME).exists():
        pytest.skip("committed field-guide weights not present")
    card = build_camtrap_demo(tmp_path, seed=0)
    crops, frames, wanted = [], [], []
    for t in json.loads((Path(card.folder) / "truth.json").read_text()):
        if t["light"] != "day":
            continue
        img = Image.open(Path(card.folder) / t["file"]).convert("RGB")
        for s in t["shown"]:
            if s["category"] == "animal":
                x, y, w, h = s["bbox"]
                side = max(w * img.width, h * img.height) * 1.2
                cx, cy = (x + w / 2) * img.width, (y + h / 2) * img.height
                crops.append(img.crop((round(cx - side / 2), round(cy - side / 2), round(cx + side / 2),
                                       round(cy + side / 2))))
                frames.append(img)
                wanted.append([sp.scientific_name for sp in SPECIES].index(by_name(s["species"]).scientific_name))
    embedder = FieldGuideEmbedder()
    names = embedder.embed_texts([sp.common_name for sp in SPECIES])
    by_crop = [_rank(row, k) for row, k in zip(embedder.embed_images(crops) @ names.T, wanted)]
    by_frame = [_rank(row, k) for row, k in zip(embedder.embed_images(frames) @ names.T, wanted)]
    assert len(wanted) >= 20
    crop_top3 = sum(r < 3 for r in by_crop) / len(wanted)
    frame_top3 = sum(r < 3 for r in by_frame) / len(wanted)
    assert crop_top3 >= 0.7 and crop_top3 >= frame_top3 + 0.3, (by_crop, by_frame)


def test_the_card_ingests_with_its_detections_and_is_searched_inside_the_animals(tmp_path):
    """The generic `ingest FOLDER --detections FILE` reads the world's results file like MegaDetector's: every
    frame matched, the boxes it drew stored, the frames with nothing drawn called empty, and a text query for
    a species finds its frames through the animal's crop (the world's own encoder)."""
    from core.search.presets import request_for
    from fieldguide.camtrap_card import DETECTOR, build_camtrap_demo

    card = build_camtrap_demo(tmp_path / "world", seed=0)
    truth = {t["file"]: t for t in json.loads((Path(card.folder) / "truth.json").read_text())}
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), checkpoint_s=0.0)
    services = build_services(settings)
    report = services.ingestor().run(card.folder, detections=card.detections)
    drawn = sum(len(t["shown"]) for t in truth.values())
    assert report.added == card.frames and report.crops == drawn
    assert f"{card.frames} frame(s) matched, {drawn + 3} box(es) stored" in " | ".join(report.notices)
    id_of = {str(Path(p.path).resolve().relative_to(Path(card.folder).resolve())): p.id
             for p in services.catalog.all_photos()}
    store = services.camtrap
    assert sorted(store.empty_ids(0.2).tolist()) == sorted(id_of[f] for f, t in truth.items() if not t["shown"])
    stored = store.detections(list(id_of.values()))
    for name, t in truth.items():
        sure = [d for d in stored.get(id_of[name], []) if d.conf >= 0.2]
        assert sorted((d.category, round(d.x, 4), round(d.y, 4)) for d in sure) == \
            sorted((s["category"], round(s["bbox"][0], 4), round(s["bbox"][1], 4)) for s in t["shown"])
        assert all(DETECTOR in d.model for d in sure)
    result = services.engine.search(request_for("Fast", "Firebacked Shieldbug"))
    top = result.hits[0].to_json()
    assert truth[next(f for f, i in id_of.items() if i == top["id"])]["shown"][0]["species"] == "Shieldicora ignea"
    assert top["matched_detection"] is not None and top["matched_detection"]["category"] == "animal"
