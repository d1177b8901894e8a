"""Hybrid retrieval and group words on a mixed collection (issue 35 items 1 and 2): the demo world, a folder of
the user's own photos and a CSV that catalogues half of them. A catalogued species name, its plural, its
scientific name, a synonym, a higher taxon and a group word bring the catalogued photos into the first 10 with
the stand-in embedder; the names, plurals, scientific names and higher taxa put them in the top 5 in Fast and
in Verify, and the result and the page say which catalog words matched."""
from __future__ import annotations

import json

import pytest

from tests.integration.test_methods_end_to_end import BACKENDS


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    from tests.mixed_collection import add_user_photos
    from tests.world_services import world_services

    root = tmp_path_factory.mktemp("mixed")
    services, _ = world_services(root / "data", 2, BACKENDS, rerank_k=20, k=10, judge_concurrency=2)
    return services, add_user_photos(services, root)


def _search(services, preset: str, query: str, **options) -> dict:
    from core.search.presets import request_for

    res = services.engine.search(request_for(preset, query, k=10, rerank_k=20, **options))
    return json.loads(json.dumps(res.to_json(), default=str))


# (query, the taxon whose catalogued photos it must find, the catalog word the result says matched)
FIRST_TEN = [("ocelot", "Leopardus pardalis", "ocelot"), ("Ocelots", "Leopardus pardalis", "ocelots"),
             ("an ocelot at night", "Leopardus pardalis", "ocelot"),
             ("Leopardus pardalis", "Leopardus pardalis", "pardalis"),
             ("Felis pardalis", "Leopardus pardalis", "felis"),  # the synonym the CSV gives
             ("red foxes", "Vulpes vulpes", "foxes"), ("grey herons", "Ardea cinerea", "herons"),
             ("Carnivora", "Carnivora", "carnivora"), ("Mammalia", "Mammalia", "mammalia"),
             ("Aves", "Aves", "aves"), ("Cervidae", "Cervidae", "cervidae")]
# group words: (query, the real taxon whose photos come into the first 10)
GROUP_WORDS = [("a bird", "Aves"), ("birds in a marsh", "Aves"), ("a cat", "Felidae"), ("a deer", "Cervidae"),
               ("two deer", "Cervidae"), ("a mammal", "Mammalia")]
# the "done when": name, plural, scientific name and a higher taxon put the taxon's photos in the top 5
TOP_FIVE = [("ocelot", "Leopardus pardalis"), ("ocelots", "Leopardus pardalis"),
            ("Leopardus pardalis", "Leopardus pardalis"), ("Carnivora", "Carnivora"), ("Mammalia", "Mammalia")]


@pytest.mark.parametrize("query, taxon, word", FIRST_TEN)
def test_catalogued_words_bring_their_photos_into_the_first_ten(mixed, query, taxon, word):
    services, truth = mixed
    out = _search(services, "Fast", query)
    ids = [r["id"] for r in out["results"][:10]]
    assert truth[taxon] <= set(ids), (query, ids, truth[taxon])
    for r in out["results"]:
        if r["id"] in truth[taxon]:
            assert word in r["catalog_match"], r
    assert out["stages"]["catalog_text"]["matched"], out["stages"]["catalog_text"]
    assert any("matched what the catalog records" in n and f"“{word}”" in n for n in out["notices"]), out["notices"]


@pytest.mark.parametrize("query, taxon", GROUP_WORDS)
def test_group_words_bring_the_real_groups_photos_into_the_first_ten(mixed, query, taxon):
    services, truth = mixed
    out = _search(services, "Fast", query)
    ids = [r["id"] for r in out["results"][:10]]
    assert truth[taxon] <= set(ids), (query, ids, truth[taxon])
    assert taxon in out["stages"]["group"]["taxa"], out["stages"]["group"]
    said = [n for n in out["notices"] if "was read as the group" in n]
    assert said and taxon in said[0], out["notices"]


def test_a_bird_takes_the_worlds_birds_and_the_class_aves_together(mixed):
    from fieldguide.species import by_name

    services, truth = mixed
    out = _search(services, "Fast", "a bird")
    group = out["stages"]["group"]
    assert len(group["taxa"]) == 2 and "Aves" in group["taxa"], group  # the world's own bird group and Aves
    said = [n for n in out["notices"] if "was read as the groups" in n]
    assert said and all(t in said[0] for t in group["taxa"]), out["notices"]
    world_birds = [r for r in out["results"] if r["taxon"] and r["id"] not in truth["Aves"]
                   and by_name(r["taxon"]).plan == "bird"]
    assert world_birds and truth["Aves"] <= {r["id"] for r in out["results"]}
    # the notice is true of the page: an uncatalogued photo among the group's is said to be there
    untaxed = services.catalog.untaxed([r["id"] for r in out["results"]])
    last = max(n for n, r in enumerate(out["results"]) if r["id"] not in untaxed and r["taxon"])
    mixed_in = sum(1 for r in out["results"][:last + 1] if r["id"] in untaxed)
    assert ("names nothing for" in said[0]) == (mixed_in > 0), (said, mixed_in)


@pytest.mark.parametrize("preset", ["Fast", "Verify"])
@pytest.mark.parametrize("query, taxon", TOP_FIVE)
def test_done_when_the_top_five_are_the_catalogued_photos_of_the_taxon(mixed, preset, query, taxon):
    services, truth = mixed
    out = _search(services, preset, query)
    want = min(5, len(truth[taxon]))
    top = [r["id"] for r in out["results"][:want]]
    assert len(set(top)) == want and set(top) <= truth[taxon], (preset, query, top, truth[taxon])
    assert all(r["catalog_match"] for r in out["results"][:want])
    assert any("matched what the catalog records" in n for n in out["notices"]), out["notices"]


def test_the_page_says_which_catalog_words_matched(mixed):
    from ui.present import explanation_html, gallery_items

    services, truth = mixed
    out = _search(services, "Verify", "ocelots")
    first = out["results"][0]
    caption = gallery_items(out["results"][:1], out["stages"], ["x.jpg"])[0][1]
    assert "catalog: “ocelots”" in caption, caption
    assert "“ocelots”" in explanation_html(first, out["stages"]), first


def test_hybrid_off_ranks_by_the_pictures_alone(mixed):
    services, truth = mixed
    engine = services.engine
    on = engine.settings
    engine.settings = on.replace(hybrid_retrieval=False)
    try:
        out = _search(services, "Fast", "ocelot")
    finally:
        engine.settings = on
    assert "catalog_text" not in out["stages"]
    assert not any("catalog_match" in r for r in out["results"])
    assert not [n for n in out["notices"] if "matched what the catalog records" in n]
