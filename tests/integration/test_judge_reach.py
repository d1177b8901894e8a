"""Checks that know their reach, on the demo world: a part of a query that the photo checker cannot see is never
a confident yes, is shown as "not checked", and is named in one notice; "a frog calling at night" (the README's
API example) still returns frogs, checked for what can be seen."""
from __future__ import annotations

import json

import pytest

from tests.integration.test_methods_end_to_end import BACKENDS, FIELDGUIDE

pytestmark = pytest.mark.skipif(not FIELDGUIDE, reason="the field-guide weights are not present")

# each query has parts no checker of the demo world can see (sounds, time of day, weather, smell)
INVISIBLE = ["a frog calling at night", "a bird singing at dawn in the rain",
             "a Slate Reedpiper carrying a twig at night", "a moth on bark smelling of vanilla",
             "a beetle buzzing loudly on a leaf"]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from tests.world_services import world_services

    services, _ = world_services(tmp_path_factory.mktemp("data"), 4, BACKENDS, rerank_k=20, k=10,
                                 judge_concurrency=2)
    return services


def _search(services, query: str) -> dict:
    from core.contracts.search_request import SearchRequest

    res = services.engine.search(SearchRequest(query, method="baseline", rerank="full", k=10, rerank_k=20))
    return json.loads(json.dumps(res.to_json(), default=str))


@pytest.mark.parametrize("query", INVISIBLE)
def test_no_top_photo_is_a_confident_yes_to_what_no_checker_sees(world, query):
    from fieldguide.judge import FieldGuideJudge

    out = _search(world, query)
    rr = out["stages"]["rerank"]
    top = {r["id"] for r in out["results"][:10]}
    unseen_query = FieldGuideJudge.unseen(query)
    assert unseen_query, "the query should have a part the checker cannot see"
    for photo in rr["photos"]:
        if photo["id"] not in top:
            continue
        for a in photo["answers"]:
            if FieldGuideJudge.unseen(a["question"]):  # a question about something invisible
                assert a["answer"] == "not checked" and a["p_yes"] is None and a["checked"] is False
                assert not (a["answer"] == "yes" and (a["p_yes"] or 0) >= 0.9)
    notices = [n for n in out["notices"] if n.startswith("not checked by the photo checker:")]
    assert len(notices) == 1, out["notices"]
    named = notices[0].split(":", 1)[1]
    for part in unseen_query:
        assert part in named
    assert rr["unchecked"][:len(unseen_query)] == unseen_query


def test_a_frog_calling_at_night_returns_frogs_with_calling_at_night_not_checked(world):
    from fieldguide.species import by_name

    out = _search(world, "a frog calling at night")
    assert "not checked by the photo checker: calling, at night" in out["notices"]
    plans = []
    for r in out["results"][:5]:
        plans.append(by_name(r["taxon"]).plan)
    assert plans.count("frog") >= 4, plans
    rr = out["stages"]["rerank"]
    first = next(p for p in rr["photos"] if p["id"] == out["results"][0]["id"])
    calling = [a for a in first["answers"] if "calling" in a["question"]]
    assert calling and all(a["answer"] == "not checked" for a in calling)
    assert all(a["checked"] for a in first["answers"] if "calling" not in a["question"])
    # the score is the share of the questions asked that passed: the unchecked ones count as undecided (0.5),
    # so it cannot reach 100% and says how many checks were made
    checked = [a["p_yes"] for a in first["answers"] if a["checked"]]
    asked = len(first["answers"])
    assert first["score"] == pytest.approx(100 * (sum(checked) + 0.5 * (asked - len(checked))) / asked, abs=1e-3)
    assert (first["checks_made"], first["checks_asked"]) == (len(checked), asked) and first["score"] < 100


def test_a_query_the_checker_fully_sees_gets_no_notice(world):
    out = _search(world, "a Slate Reedpiper carrying a twig")
    assert not [n for n in out["notices"] if n.startswith("not checked")]
    rr = out["stages"]["rerank"]
    assert rr["unchecked"] == [] and all(a["checked"] for p in rr["photos"] for a in p["answers"])


def test_a_query_part_no_question_asks_about_is_named(world):
    """The world's rule writes three questions; the fourth part of the query is named as not checked."""
    out = _search(world, "a Slate Reedpiper carrying a twig over water seen from the side")
    notices = [n for n in out["notices"] if n.startswith("not checked by the photo checker:")]
    assert notices == ["not checked by the photo checker: over water"]
