"""Which photos the banner says are searched, read from the catalog of a real data directory: the demo world
(built by EcoLens into data_dir/fieldguide) is SYNTHETIC after a restart too, and the user's own photos beside
it make it OWN."""
from __future__ import annotations

from pathlib import Path

from app import build_services
from tests.photos import shaded_photos as _photos
from core.search.banner import OWN, SYNTHETIC
from core.config import load_settings



def test_the_world_stays_synthetic_after_a_restart_and_own_photos_make_it_own(tmp_path):
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash")
    services = build_services(settings)
    assert services.corpus_kind() == SYNTHETIC  # nothing yet, stand-in embedder: the world will be built
    world = _photos(Path(settings.path("fieldguide")) / "images", 3, 10)
    services.ingestor().run(world)
    restarted = build_services(settings)  # a new process on the same data directory
    assert restarted.corpus_kind() == SYNTHETIC
    assert restarted.banner().startswith("SYNTHETIC DEMO")
    restarted.ingestor().run(_photos(tmp_path / "mine", 2, 200))
    assert build_services(settings).corpus_kind() == OWN
    assert "YOUR PHOTOS" in build_services(settings).banner()
    # the banner of the process that was running follows the catalog: the demo photos are still searched
    assert restarted.banner().startswith("Searching 3 demo photos and 2 of your photos")

    line, whole = restarted.banner_parts()  # the page's one line, and the whole text one click away
    assert line == "Searching 3 demo photos and 2 of your photos with stand-in models" and whole == restarted.banner()
