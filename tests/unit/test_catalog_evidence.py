"""Catalog facts as evidence (issue 20 item 2), with fakes: what a question asks that the catalog records, what a
photo's fields say to it, and the rerank that answers such questions from the catalog, sends the photos that lack
the field to the judge with a reason that says so, and ranks catalogued look-alikes last."""
from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from core.config import Settings, load_settings, parse_places
from core.contracts.errors import ConfigError
from core.contracts.records import Photo
from core.contracts.search_request import SearchRequest
from core.contracts.world import CatalogTopic
from core.methods.catalog_evidence import (
    CatalogEvidence,
    Vocabulary,
    asks_only,
    check,
    generic_topics,
    question_topics,
    verdict,
)
from core.methods.rerank import catalog_tier
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge, FakeSearch

DIM = 8
NAMES = [("Anas platyrhynchos", "species"), ("Mallard", "common name"), ("Anas", "genus"), ("Anatidae", "family"),
         ("Anas acuta", "species"), ("Northern Pintail", "common name"), ("Aves", "class")]
KENYA = (33.9, -4.7, 41.9, 5.0)
VOCAB = Vocabulary.of(NAMES, {"Kenya": KENYA})


def _fields(topics) -> list[tuple[str, tuple]]:
    return [(t.field, t.values) for t in topics]


@pytest.mark.parametrize("question, expected", [
    ("Is there a Mallard in the photo?", [("taxon", ("mallard",))]),
    ("Are these Mallards?", [("taxon", ("mallard",))]),
    ("Is this an Anas platyrhynchos?", [("taxon", ("anas platyrhynchos",))]),
    ("Is it in the family Anatidae?", [("taxon", ("anatidae",))]),
    ("Was it photographed in May?", [("month", (5,))]),
    ("Was the photo taken in 2021?", [("year", (2021,))]),
    ("Was it observed on 2021-05-03?", [("date", (date(2021, 5, 3),))]),
    ("Is the photo licensed CC-BY?", [("license", ("CC-BY",))]),
    ("Was it taken in Kenya?", [("place", (KENYA,))]),
    ("Was it taken within 33.9, -4.7, 41.9, 5.0?", [("place", (KENYA,))]),
    ("Was this Mallard photographed in May?", [("taxon", ("mallard",)), ("month", (5,))]),
])
def test_a_question_that_asks_only_what_the_catalog_records_has_its_topics(question, expected):
    assert _fields(question_topics(question, VOCAB)) == expected


@pytest.mark.parametrize("question", [
    "Is the Mallard feeding?", "Is there a Mallard in water?", "Are there two Mallards in the photo?",
    "Is the whole Mallard visible?", "Is this a young Mallard?", "May it be seen from the side?",
    "Is there a heron in the photo?", "Is the frog calling at night?",
])
def test_a_question_that_asks_anything_else_is_left_to_the_judge(question):
    assert question_topics(question, VOCAB) == ()


def test_a_month_inside_a_name_is_part_of_the_name():
    vocab = Vocabulary.of([("May beetle", "common name")])
    assert _fields(question_topics("Is there a May beetle in the photo?", vocab)) == [("taxon", ("may beetle",))]


def test_words_left_over_decide_and_group_words_may_be_allowed():
    t = generic_topics("Is this bird a Mallard?", VOCAB)
    assert not asks_only("Is this bird a Mallard?", t)
    assert asks_only("Is this bird a Mallard?", t, allowed={"bird"})


MALLARD = Photo("m.png", id=1, scientific_name="Anas platyrhynchos", common_name="Mallard", genus="Anas",
                family="Anatidae", class_name="Aves", observed_on=date(2021, 5, 3), latitude=-1.3, longitude=36.8,
                license="CC-BY-4.0")
PINTAIL = Photo("p.png", id=2, scientific_name="Anas acuta", common_name="Northern Pintail", family="Anatidae",
                observed_on=date(2021, 6, 1), latitude=52.0, longitude=5.0, license="CC-BY-NC")
BARE = Photo("b.png", id=3)
SCIENTIFIC_ONLY = Photo("s.png", id=4, scientific_name="Anas platyrhynchos")


def _say(photo, question, photos=(MALLARD, PINTAIL, BARE)):
    ev = CatalogEvidence([question], VOCAB, photos)
    return ev.verdict(photo, 0)


def test_the_photos_fields_answer_yes_or_no_with_the_fact_as_reason():
    v = _say(MALLARD, "Is there a Mallard in the photo?")
    assert (v.outcome, v.reason) == ("yes", "catalog: species = Anas platyrhynchos (Mallard)")
    v = _say(PINTAIL, "Is there a Mallard in the photo?")
    assert (v.outcome, v.reason) == ("no", "catalog: species = Anas acuta (Northern Pintail)")
    assert _say(PINTAIL, "Is it in the genus Anas?").outcome == "yes"  # the genus read from the binomial
    assert _say(PINTAIL, "Is it in the family Anatidae?").reason == "catalog: family = Anatidae"
    assert _say(MALLARD, "Was it photographed in May?").reason == "catalog: date = 2021-05-03"
    assert _say(PINTAIL, "Was it photographed in May?").outcome == "no"
    assert _say(MALLARD, "Was the photo taken in 2021?").outcome == "yes"
    v = _say(MALLARD, "Was it taken in Kenya?")
    assert (v.outcome, v.reason) == ("yes", "catalog: place = -1.3000, 36.8000 (inside Kenya)")
    assert _say(PINTAIL, "Was it taken in Kenya?").outcome == "no"
    v = _say(MALLARD, "Was it taken inside the box 33.9,-4.7,41.9,5.0?")
    assert (v.outcome, v.reason) == ("yes", "catalog: place = -1.3000, 36.8000 (inside 33.9,-4.7,41.9,5.0)")
    assert _say(MALLARD, "Is the photo licensed CC-BY?").reason == "catalog: licence = CC-BY-4.0"
    assert _say(PINTAIL, "Is the photo licensed CC-BY?").outcome == "no"  # cc-by-nc is not cc-by


def test_a_photo_without_the_field_is_missing_and_the_reason_names_the_field():
    v = _say(BARE, "Is there a Mallard in the photo?")
    assert (v.outcome, v.fields) == ("missing", ("species",))
    assert v.reason == "the catalog records no species for this photo"
    assert _say(BARE, "Was it photographed in May?").fields == ("date",)
    assert _say(BARE, "Was it taken in Kenya?").fields == ("place",)
    assert _say(BARE, "Is the photo licensed CC-BY?").fields == ("licence",)


def test_a_common_name_is_matched_through_photos_that_record_both_names():
    assert _say(SCIENTIFIC_ONLY, "Is there a Mallard in the photo?").outcome == "yes"
    assert _say(SCIENTIFIC_ONLY, "Is there a Northern Pintail in the photo?").outcome == "no"
    # with no photo pairing the names the catalog cannot tell
    assert _say(SCIENTIFIC_ONLY, "Is there a Mallard in the photo?", photos=()).outcome == "missing"


def test_a_photo_identified_only_to_genus_or_family_is_not_a_no_to_a_species_of_that_genus():
    to_genus = Photo("g.png", id=5, scientific_name="Anas", genus="Anas")
    to_family = Photo("f.png", id=6, scientific_name="Anatidae", family="Anatidae")
    other_genus = Photo("o.png", id=7, scientific_name="Aythya", genus="Aythya")
    v = _say(to_genus, "Is there a Mallard in the photo?")
    assert (v.outcome, v.reason) == ("missing", "the catalog records no species for this photo")
    assert _say(to_genus, "Is this an Anas platyrhynchos?").outcome == "missing"
    assert _say(to_family, "Is this an Anas platyrhynchos?").outcome == "missing"
    assert _say(other_genus, "Is there a Mallard in the photo?").reason == "catalog: genus = Aythya"
    assert _say(other_genus, "Is there a Mallard in the photo?").outcome == "no"
    assert _say(to_genus, "Is it in the genus Anas?").outcome == "yes"


def test_several_topics_a_no_wins_all_yes_is_yes_and_any_name_of_either_may_match():
    assert _say(MALLARD, "Was this Mallard photographed in May?").outcome == "yes"
    assert _say(MALLARD, "Was this Mallard photographed in June?").outcome == "no"
    either = CatalogTopic("taxon", ("Anas acuta", "Anas platyrhynchos"), ("x",))
    assert verdict(MALLARD, [either], VOCAB, {}).outcome == "yes"
    assert check(BARE, either, VOCAB, {}).outcome == "missing"


def test_named_places_are_read_and_bad_entries_are_refused_with_the_fix():
    assert parse_places("Kenya=33.9,-4.7,41.9,5.0; Lake  Victoria=31.5,-3.1,34.9,0.5") == {
        "Kenya": KENYA, "Lake Victoria": (31.5, -3.1, 34.9, 0.5)}
    assert Settings(named_places="Kenya=33.9,-4.7,41.9,5.0").place_boxes() == {"Kenya": KENYA}
    for bad in ("Kenya", "Kenya=1,2,3", "=1,2,3,4", "Kenya=1,95,3,96", "Kenya=a,b,c,d"):
        with pytest.raises(ConfigError) as err:
            load_settings(environ={"ECOLENS_NAMED_PLACES": bad})
        assert err.value.message.startswith(f"Setting named_places={bad!r}: {bad!r}")
        assert "NAME=WEST,SOUTH,EAST,NORTH" in err.value.message + err.value.hint


# ---- the rerank -------------------------------------------------------------------------------------------
def _photos() -> list[Photo]:
    """Two catalogued Mallards, two look-alikes catalogued as pintails, two with no species recorded."""
    out = []
    for i, (sci, common) in enumerate([("Anas platyrhynchos", "Mallard")] * 2 + [("Anas acuta", "Northern Pintail")] * 2
                                      + [("", "")] * 2):
        out.append(Photo(f"p{i}.png", id=i + 1, scientific_name=sci, common_name=common, genus=sci.split(" ")[0],
                         caption=f"a duck {i}"))
    return out


def _engine(tmp_path, judge, on=True):
    photos = _photos()
    vecs = np.eye(DIM)[[i % DIM for i in range(len(photos))]].astype(np.float32)
    s = Settings(data_dir=str(tmp_path), k=6, rerank_k=6, catalog_evidence=on)
    search = FakeSearch(photos, vecs, s, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge))
    return SearchEngine(search, search.backends)


def _lookalike_judge() -> FakeJudge:
    # the judge is fooled by the look-alikes (ids 3, 4) and unsure of the real ones
    return FakeJudge(rule=lambda r: {3: 0.99, 4: 0.98}.get(r.photo.id, 0.6),
                     reason=lambda r, p: f"read from the picture: duck {p:.2f} -> p(yes) {p:.2f}")


def test_the_rerank_answers_from_the_catalog_and_reads_the_rest_from_the_picture(tmp_path):
    judge = _lookalike_judge()
    res = _engine(tmp_path, judge).search(SearchRequest("a Mallard", method="baseline", rerank="subq", k=6, rerank_k=6))
    ids = [h.photo_id for h in res.hits]
    assert set(ids[:2]) == {1, 2} and set(ids[2:4]) == {5, 6} and set(ids[4:]) == {3, 4}, ids
    assert {r.photo.id for r in judge.calls} == {5, 6}  # only the photos with no species recorded
    stage = res.stages["rerank"]
    by_id = {p["id"]: p for p in stage["photos"]}
    assert all(a["source"] == "catalog" and a["p_yes"] == 1.0 for a in by_id[1]["answers"])
    assert by_id[3]["answers"][0]["reason"] == "catalog: species = Anas acuta (Northern Pintail)"
    assert by_id[3]["answers"][0]["p_yes"] == 0.0
    first = by_id[5]["answers"][0]
    assert first["source"] == "picture"
    assert first["reason"] == ("the catalog records no species for this photo, so it was read from the picture: "
                               "duck 0.60 -> p(yes) 0.60")
    assert stage["catalog_evidence"]["from_catalog"] == 4 and stage["catalog_evidence"]["from_picture"] == 2
    assert ("catalog facts: 4 of 6 checked photos were answered from the catalog (species or taxon); 2 without that "
            "in the catalog were checked from the picture") in res.notices
    assert [catalog_tier(by_id[i]) for i in ids] == [0, 0, 1, 1, 2, 2]


def test_with_the_setting_off_the_judge_answers_everything_and_the_lookalike_wins(tmp_path):
    judge = _lookalike_judge()
    res = _engine(tmp_path, judge, on=False).search(
        SearchRequest("a Mallard", method="baseline", rerank="subq", k=6, rerank_k=6))
    assert [h.photo_id for h in res.hits][:2] == [3, 4]  # the look-alikes the judge is fooled by
    assert {r.photo.id for r in judge.calls} == {1, 2, 3, 4, 5, 6}
    assert res.stages["rerank"]["catalog_evidence"]["on"] is False
    assert not [n for n in res.notices if n.startswith("catalog facts")]


def test_an_edited_catalog_is_not_answered_from_the_remembered_stage(tmp_path):
    judge = _lookalike_judge()
    engine = _engine(tmp_path, judge)
    req = SearchRequest("a Mallard", method="baseline", rerank="subq", k=6, rerank_k=6)
    engine.search(req)
    engine.corpus._photos[3].scientific_name, engine.corpus._photos[3].common_name = "Anas platyrhynchos", "Mallard"
    again = engine.search(req)
    by_id = {p["id"]: p for p in again.stages["rerank"]["photos"]}
    assert by_id[3]["answers"][0]["answer"] == "yes"


def test_the_page_keeps_the_catalog_reason_and_words_the_picture_reason():
    from ui.badges import reason_text

    assert reason_text("catalog: species = Anas acuta (Northern Pintail)") == \
        "catalog: species = Anas acuta (Northern Pintail)"
    said = reason_text("the catalog records no species for this photo, so it was read from the picture: species "
                       "Ember-crested Tuftling 0.93 -> p(yes) 0.93")
    assert said == ("the catalog records no species for this photo, so it was seen in the picture: Ember-crested "
                    "Tuftling (93% sure)")


def test_the_badge_shows_the_catalog_answer_as_certain_with_its_reason():
    from ui.badges import badges_html

    html = badges_html([{"question": "Is this a Gold-crested Tuftling?", "answer": "no", "p_yes": 0.0, "checked": True,
                         "reason": "catalog: species = Tuftilla rubrifrons (Ember-crested Tuftling)",
                         "source": "catalog"}])
    assert "badge-no" in html and "0% sure it is yes" in html
    assert "catalog: species = Tuftilla rubrifrons (Ember-crested Tuftling)" in html
