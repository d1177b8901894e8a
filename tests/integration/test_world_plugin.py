"""The demo world as a plug-in: its rule book and answer reader are in use only while the collection is the
world; on a user's own photos the generic rules word every request and the photo notes answer questions."""
from __future__ import annotations

from app import build_services
from core.config import load_settings
from core.contracts import world
from core.methods import rules
from tests.photos import shaded_photos as _photos

WORLD_REQUEST = "a Slate Reedpiper carrying a twig"



def test_the_world_reads_requests_only_while_the_collection_is_the_world(tmp_path):
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash")
    services = build_services(settings)  # empty catalog, stand-in embedder: the world will be built here
    assert services.engine.rules().request.name == "fieldguide"
    in_world = rules.subquestions(WORLD_REQUEST, 3, services.engine.rules().request)

    services.ingestor().run(_photos(tmp_path / "mine", 3, 200))
    own = build_services(settings)  # a restart on a catalog of the user's own photos
    assert own.engine.rules().request is world.GENERIC
    assert own.choose_world() == "generic"
    generic = rules.subquestions(WORLD_REQUEST, 3, own.engine.rules().request)
    assert generic != in_world  # the world's wording is gone ...
    assert all(q.endswith("?") for q in generic)  # ... and the generic rules still ask yes/no questions
    assert world.GENERIC.text_facts("a Slate Reedpiper with red wings") == set()


def test_the_worlds_reader_answers_only_in_the_world(tmp_path):
    """With the world's own encoder and judge (the defaults), 'auto' picks the world's reader for the world and
    the photo notes (no reader) for the user's photos."""
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"))
    assert build_services(settings).backends.reader is not None  # the world will be built: its reader
    build_services(settings).ingestor().run(_photos(tmp_path / "mine", 2, 90))
    assert build_services(settings).backends.reader is None  # own photos: questions are answered from notes


def test_settings_for_own_photos_never_reach_the_world(tmp_path):
    folder = _photos(tmp_path / "mine", 2, 120)
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", corpus=str(folder))
    services = build_services(settings)
    assert services.choose_world() == "generic"
    assert rules.context(WORLD_REQUEST, services.engine.rules().request).startswith("No field notes are at hand")


def test_the_world_drawn_elsewhere_is_still_the_world(tmp_path):
    """The world's photos ingested from a folder of their own (as the tests and `eval` do) are recognised by
    their species, so the web app and a command-line search on that catalog read requests alike."""
    from fieldguide.world import build_world

    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash")
    build_services(settings).ingestor().run(str(build_world(tmp_path / "world", seed=0, per_species=1,
                                                            benchmark=False)))
    assert build_services(settings).choose_world() == "fieldguide"
    build_services(settings).ingestor().run(_photos(tmp_path / "mine", 2, 60))
    assert build_services(settings).choose_world() == "generic"


def test_a_mixed_collection_reads_the_worlds_photos_in_its_terms_and_the_rest_generically(tmp_path):
    """The world's photos beside a user's own: the request and the user's photos get the generic rules, the
    world's photos (by their source) the world's rule book; a search keeps the rule books it started with."""
    from fieldguide.world import build_world

    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash")
    services = build_services(settings)
    services.ingestor().run(str(build_world(tmp_path / "world", seed=0, per_species=1, benchmark=False)))
    assert services.rule_books().request.name == "fieldguide"
    services.ingestor().run(_photos(tmp_path / "mine", 2, 60))
    books = build_services(settings).rule_books()
    assert books.request is world.GENERIC
    photos = services.catalog.get_photos(list(range(1, services.catalog.count() + 1)))
    by_source = {p.source: books.for_photo(p).name for p in photos}
    assert by_source == {"fieldguide": "fieldguide", "folder": "generic"}
    assert services.banner() and services.rule_books() == books  # the banner only reads; the books follow the count
