"""The field-guide world's camera card goes in through the generic ingest of a folder, like a real card: every
frame is added (the deployments CSV, the detector's results and the notes beside them are not photos), and the
world's plug-in draws it into its demo folder."""
from __future__ import annotations

from pathlib import Path

from app import build_services
from core.contracts.settings import load_settings


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
