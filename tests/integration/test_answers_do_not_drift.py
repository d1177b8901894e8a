"""Answers that do not drift (issue 35 item 3): the answer to a question about the demo world's photos does not
change because unrelated photos were added to the collection, and no notice calls the world's photos "not of
it". The same question is asked before and after a folder of the user's own photos (and a CSV cataloguing half
of them) joins the catalog; the rule books are handed in per search (house-core), so the world's photos are
read in the world's terms on the mixed collection too."""
from __future__ import annotations

import json

import pytest

from tests.integration.test_methods_end_to_end import BACKENDS

QUESTION = "what colour is the belly of the Gold-crested Tuftling?"


def _ask(services) -> dict:
    from core.search.presets import request_for

    res = services.engine.search(request_for("Verify", QUESTION, k=20, rerank_k=20, answer=True))
    return json.loads(json.dumps(res.to_json(), default=str))


def _false_notices(out: dict) -> list[str]:
    return [n for n in out["notices"] if "not of it" in n or "are not of" in n]


@pytest.mark.parametrize("added", ["folder and CSV"])
def test_adding_unrelated_photos_does_not_change_the_answer(tmp_path, added):
    from tests.mixed_collection import add_user_photos
    from tests.world_services import world_services

    services, _ = world_services(tmp_path / "data", 2, BACKENDS, rerank_k=20, k=10, judge_concurrency=2)
    before = _ask(services)
    answer = before["stages"]["answer"]
    # the world's own reader read the world's photos (what it answers, or why its answer was refused, is its
    # own matter; here it must be the same answer both times)
    assert answer.get("reader", "").startswith("fieldguide-reader"), answer
    assert answer["text"], answer
    assert not _false_notices(before), before["notices"]

    add_user_photos(services, tmp_path)
    assert services.catalog.count() > len(before["results"])
    after = _ask(services)
    assert after["stages"]["answer"].get("reader") == answer["reader"], after["stages"]["answer"]
    assert after["stages"]["answer"]["text"] == answer["text"], (answer["text"], after["stages"]["answer"]["text"])
    assert after["stages"]["answer"].get("cited_ids") == answer.get("cited_ids")
    assert not _false_notices(after), after["notices"]
    # the photos the answer read are the same world photos, in the same order
    assert after["stages"]["answer"]["photos"] == answer["photos"]
