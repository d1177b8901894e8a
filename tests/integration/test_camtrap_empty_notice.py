"""The "N empty frames hidden" notice says only what a search hid from its results: the field-guide world's camera
card (its empty frames: a detector looked and found nothing) ingested with the stand-in embedder, searched
through the engine. With room for every frame, every empty frame is counted; with few results asked for, the
notice counts the empty frames that would have been among them, and a search showing empty frames
(include_empty) shows none of them when the notice said nothing and no more than it counted; a filter that
lets empty frames in (a deployment) always says how many it hid."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app import build_services
from core.config import load_settings
from core.contracts.camtrap import CamtrapFilters
from core.contracts.records import Filters
from core.contracts.search_request import SearchRequest

HIDDEN = re.compile(r"^([\d,]+) empty frames? hidden ")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from fieldguide.camtrap_card import build_camtrap_demo

    tmp = tmp_path_factory.mktemp("empty")
    card = build_camtrap_demo(tmp / "world", seed=0)
    services = build_services(load_settings(environ={}, data_dir=str(tmp / "data"), embedder="hash"))
    services.ingestor().run(card.folder, detections=card.detections, deployments=card.deployments)
    services.corpus.reload()
    truth = json.loads((Path(card.folder) / "truth.json").read_text())
    by_path = {Path(p.path).resolve(): p.id for p in services.catalog.all_photos()}
    root = Path(card.folder).resolve()
    empty = {by_path[root / t["file"]] for t in truth if not t["shown"]}
    deployments = {}
    for t in truth:
        deployments.setdefault(t["deployment"], set()).add(by_path[root / t["file"]])
    assert len(empty) >= 5, "the card should hold several empty frames"
    return services, empty, deployments, len(truth)


def _said(result) -> int:
    counts = [int(m.group(1).replace(",", "")) for m in map(HIDDEN.match, result.notices) if m]
    assert len(counts) <= 1, result.notices
    return counts[0] if counts else 0


def _search(services, query: str, k: int, **camtrap):
    filters = Filters(camtrap=CamtrapFilters(**camtrap)) if camtrap else None
    return services.engine.search(SearchRequest(query, k=k, filters=filters))


def test_with_room_for_every_frame_every_empty_frame_is_counted(world):
    services, empty, _, frames = world
    result = _search(services, "a bird on a branch", frames + 10)
    assert not {h.photo_id for h in result.hits} & empty
    assert _said(result) == len(empty)


@pytest.mark.parametrize("query", ["a bird on a branch", "an empty meadow with grass", "a fox at night",
                                   "a deer in the forest", "reeds by the pond"])
def test_with_few_results_only_the_empty_frames_that_would_have_shown_are_counted(world, query):
    services, empty, _, _ = world
    k = 3
    result = _search(services, query, k)
    said = _said(result)
    assert 0 <= said <= min(k, len(empty))
    shown = _search(services, query, k, include_empty=True)
    assert _said(shown) == 0
    among = len({h.photo_id for h in shown.hits} & empty)
    assert among <= said, (query, among, said, result.notices)  # nothing shown that the notice did not count
    if said == 0:
        assert among == 0


def test_the_counts_over_several_questions_differ_from_the_catalogs_total(world):
    """The notice is not the catalog's number of empty frames said on every search: over several questions
    with three results, at least one says fewer than all of them (usually none)."""
    services, empty, _, _ = world
    said = [_said(_search(services, q, 3)) for q in ("a bird on a branch", "a heron in the water",
                                                      "a woodpecker on a trunk", "a fox at night")]
    assert min(said) < len(empty), said


def test_a_filter_that_lets_empty_frames_in_says_how_many_it_hid(world):
    services, empty, deployments, _ = world
    name, frames = max(deployments.items(), key=lambda kv: len(kv[1] & empty))
    result = _search(services, "a bird on a branch", 2, deployments=(name,))
    assert _said(result) == len(frames & empty) > 0
