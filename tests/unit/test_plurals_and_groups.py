"""Number and group words (issue 20 item 3): plural names, counts ("two", "a pair of", "several") and group words
(frog, birds, moths ...) in the generic language rules and in the field-guide world's rule book; the world's
groups read from its taxonomy; a group's photos put first; INQUIRE's iconic group written as a taxon."""
from __future__ import annotations

import numpy as np
import pytest

from core.contracts.records import Filters, Photo
from core.ingest.iconic import apply_iconic_group
from core.methods import rules
from core.search.groups import Group, find_group, group_first, real_group
from fieldguide.judge import FieldGuideJudge
from fieldguide.reading import read_text
from fieldguide.species import SPECIES, by_name
from fieldguide.taxa import group_taxa, plan_taxa
from tests.photos import world_book

BOOK = world_book()  # the field-guide world's rule book, for the world's requests

# ---- the generic language rules (text outside any world) ------------------------------------------------


@pytest.mark.parametrize("word, singular", [("frogs", "frog"), ("butterflies", "butterfly"), ("foxes", "fox"),
                                            ("larvae", "larva"), ("moss", "moss"), ("species", "species"),
                                            ("ibis", "ibis"), ("heron", "heron"), ("geese", "goose")])
def test_singular_of_english_nouns(word, singular):
    assert rules.singular(word) == singular
    assert rules.is_plural(word) == (word != singular)


def test_count_phrases_say_how_many_and_leave_the_rest():
    assert rules.count_phrases("a pair of mallards swimming") == ("mallards swimming", "two")
    assert rules.count_phrases("A couple of herons") == ("herons", "two")
    assert rules.count_phrases("two herons side by side on sand") == ("two herons on sand", None)
    assert rules.count_phrases("bees together on a flower") == ("bees on a flower", None)
    assert rules.count_phrases("a heron eating a fish") == ("a heron eating a fish", None)


def test_generic_sub_questions_are_grammatical_for_plurals_and_counts():
    assert rules.subquestions("two herons side by side on sand", 3)[:2] == [
        "Are there two herons in the photo?", "Are the herons on sand?"]
    assert rules.subquestions("a pair of mallards swimming", 3)[:2] == [
        "Are there two mallards in the photo?", "Are the mallards swimming?"]
    assert rules.subquestions("several snails on a leaf", 3)[:2] == [
        "Are there several snails in the photo?", "Are the snails on a leaf?"]
    assert rules.subquestions("frogs on a log", 3)[:2] == ["Are there frogs in the photo?", "Are the frogs on a log?"]
    assert rules.subquestions("Are there frogs on the log?", 3)[0] == "Are there frogs in the photo?"
    # the singular is as before
    assert rules.subquestions("a frog sitting on sand", 3)[:2] == ["Is there a frog in the photo?",
                                                                   "Is the frog sitting on sand?"]
    assert rules.subquestions("moss on a rock", 3)[0] == "Is there a moss in the photo?"
    for q in ("two herons side by side on sand", "a pair of mallards swimming", "frogs on a log"):
        for sq in rules.subquestions(q, 3):
            assert "Is there a " not in sq or not rules.is_plural(sq.split()[4]), sq
            assert " side in " not in sq


def test_generic_parts_keep_the_number_and_drop_the_count_phrase():
    parts, split = rules.decomposition("two herons side by side on sand", 4)
    assert split and [(p.text, p.core) for p in parts] == [("two herons", "herons"), ("sand", "sand")]
    parts, _ = rules.decomposition("a pair of mallards swimming", 4)
    assert [(p.text, p.core) for p in parts] == [("two mallards swimming", "mallards")]


# ---- the field-guide world's rule book ----------------------------------------------------------------------


def test_world_reads_plural_species_names_and_counts():
    r = read_text("two Cobalt Pondhoppers side by side on sand")
    assert [sp.common_name for sp in r.species] == ["Cobalt Pondhopper"] and r.plural
    assert r.attrs["count"] == 2 and r.attrs["habitat"] == "sand" and not r.unknown
    assert read_text("a pair of Gold-crested Tuftlings").attrs["count"] == 2
    assert read_text("several frogs").attrs == {"count": 2, "plan": "frog"}
    assert read_text("butterflies and bugs on plants").attrs["plan"] == "moth"
    assert not read_text("a Cobalt Pondhopper").plural


def test_world_sub_questions_are_plural_and_checkable():
    qs = rules.subquestions("two Cobalt Pondhoppers side by side on sand", 3, BOOK)
    assert qs == ["Are these Cobalt Pondhoppers?", "Are there two of them?", "Are they on sand?"]
    assert not any(FieldGuideJudge.unseen(q) for q in qs)  # the checker can see each of them
    assert rules.subquestions("a pair of Slate Reedpipers perched on a branch", 3, BOOK)[:2] == [
        "Are these Slate Reedpipers?", "Are there two of them?"]
    assert rules.subquestions("several frogs sitting on sand", 3, BOOK)[:2] == ["Are these frogs?",
                                                                               "Are there several of them?"]
    assert rules.subquestions("Gold-crested Tuftlings feeding on a berry", 3, BOOK) == [
        "Are these Gold-crested Tuftlings?", "Are they feeding on a berry?"]
    # the singular is unchanged
    assert rules.subquestions("a Cobalt Pondhopper on sand", 3, BOOK) == ["Is this a Cobalt Pondhopper?",
                                                                         "Is it on sand?"]
    # the plural description names the species in the plural
    assert rules.instruction("two Cobalt Pondhoppers side by side on sand", BOOK).descriptions == [
        "two Cobalt Pondhoppers on sand"]


def test_the_judge_checks_a_plural_species_as_the_singular():
    judge = FieldGuideJudge(reader=object())
    probs = {"species": {sp.scientific_name: (0.9 if sp.common_name == "Cobalt Pondhopper" else 0.01)
                         for sp in SPECIES}, "count": {1: 0.1, 2: 0.9}}
    for part in ("crest", "underside"):
        probs[f"colour:{part}"] = {"none": 1.0}
    plural = judge.checks("Are these Cobalt Pondhoppers?", probs)
    assert plural == judge.checks("Is this a Cobalt Pondhopper?", probs)
    assert judge.checks("Are there several of them?", probs) == [("count 2", 0.9)]
    # a number the world never draws is not something it can check: named, not guessed
    assert judge.unseen("Are there three Cobalt Pondhoppers in the photo?") == ["three"]


def test_world_groups_come_from_its_taxonomy():
    for plan in ("bird", "moth", "frog", "beetle", "flower"):
        taxa = plan_taxa(plan)
        assert taxa, plan
        for taxon in taxa:  # each holds every species of the plan and no other
            holders = {sp.plan for sp in SPECIES if taxon in sp.taxonomy}
            assert holders == {plan}, (plan, taxon)
    assert group_taxa("a frog sitting on sand") == ("frog", plan_taxa("frog"))
    assert group_taxa("two birds perched together") == ("birds", plan_taxa("bird"))
    assert group_taxa("a caterpillar larva curled up") == ("caterpillar", plan_taxa("moth"))
    assert group_taxa("a frog calling at night")[1] == plan_taxa("frog")  # words outside the world do not matter
    assert group_taxa("Cobalt Pondhoppers on sand") is None  # a species is no group word
    assert group_taxa("a nest of a cowbird") is None
    assert by_name("Cobalt Pondhopper").taxonomy[2] == plan_taxa("frog")[0]  # frogs: their class


def test_real_group_words_name_real_taxa_most_specific_first():
    assert real_group("two frogs on a log") == ("frogs", ("Anura", "Amphibia"))
    assert real_group("a bird carrying a frog") == ("bird", ("Aves",))  # the subject, not the object
    assert real_group("butterflies feeding on nectar") == ("butterflies", ("Lepidoptera", "Insecta"))
    assert real_group("a nest showing brood parasitism by a cowbird") is None
    assert real_group("albino American robin") is None


# ---- a group first ---------------------------------------------------------------------------------------------


class _Corpus:
    """A catalog of five photos: 1, 3 and 5 are class Aves, 2 and 4 class Insecta."""

    classes = {1: "Aves", 2: "Insecta", 3: "Aves", 4: "Insecta", 5: "Aves"}

    def pool(self, filters):
        from core.contracts.errors import NotFoundError

        if filters.taxon and filters.taxon not in self.classes.values():
            raise NotFoundError("no such taxon", "")
        return np.asarray([i for i, c in self.classes.items() if c == filters.taxon], dtype=np.int64)


def test_find_group_uses_the_first_taxon_the_catalog_records():
    group = find_group(_Corpus(), "birds on a wire", None)
    assert group == Group("birds", ("Aves",), frozenset({1, 3, 5}), (3,))
    assert group.taxon == "Aves"
    assert find_group(_Corpus(), "a frog on a leaf", None) is None  # the catalog records no Anura or Amphibia
    assert find_group(_Corpus(), "birds on a wire", Filters(taxon="Insecta")) is None  # the user's filter rules
    assert find_group(_Corpus(), "a mantis eating a fly", None) is None  # no group word
    # a heron is a bird: a catalog that records the class alone puts its birds first
    assert find_group(_Corpus(), "a heron eating a fish", None) == Group("heron", ("Aves",), frozenset({1, 3, 5}),
                                                                         (3,))


class _WorldBook:
    """A world's rule book that names its own bird group for 'bird'."""

    def group_taxa(self, query):
        return ("bird", ("Avifictae",)) if "bird" in query else None


class _MixedCorpus(_Corpus):
    """The five photos above plus the world's birds 11 and 12 (its own group Avifictae)."""

    classes = {**_Corpus.classes, 11: "Avifictae", 12: "Avifictae"}


def test_on_a_mixed_collection_a_group_word_takes_the_worlds_group_and_the_real_one():
    from core.search import groups

    group = find_group(_MixedCorpus(), "a bird with a red crest", None, _WorldBook())
    assert group.taxa == ("Avifictae", "Aves") and group.ids == frozenset({1, 3, 5, 11, 12})
    assert group.counts == (2, 3)
    text = groups.notice_text(group)
    assert "Avifictae (2 photos) and Aves (3 photos)" in text and "groups" in text
    assert "names nothing" not in text
    mixed = groups.notice_text(group, mixed_in=2)
    assert "2 photos the catalog names nothing for keep their place among them" in mixed
    # a world alone: its group alone, as before
    assert find_group(_Corpus(), "a bird", None).taxa == ("Aves",)


def test_group_first_keeps_each_part_in_order_and_fetches_missing_members():
    group = Group("birds", ("Aves",), frozenset({1, 3, 5}))
    ranked = [(2, 0.9), (1, 0.8), (4, 0.7), (3, 0.6)]
    asked = []

    def rank_group(ids, n):
        asked.append((list(ids), n))
        return [(5, 0.5), (3, 0.6), (1, 0.8)]

    assert group_first(ranked, group, 10, rank_group) == [(1, 0.8), (3, 0.6), (5, 0.5), (2, 0.9), (4, 0.7)]
    assert asked == [([1, 3, 5], 3)]
    # depth 0 (after the judge): a stable partition only, nothing fetched
    assert group_first(ranked, group, 0, rank_group) == [(1, 0.8), (3, 0.6), (2, 0.9), (4, 0.7)]
    assert len(asked) == 1


# ---- ingest: the iconic group as a taxon ------------------------------------------------------------------


def test_iconic_group_fills_the_taxon_of_its_rank_and_above():
    p = Photo(path="x.jpg", scientific_name="Ardea herodias")
    assert apply_iconic_group(p, "Aves") == ["kingdom", "phylum", "class_name"]
    assert (p.kingdom, p.phylum, p.class_name, p.order) == ("Animalia", "Chordata", "Aves", "")
    plant = Photo(path="y.jpg")
    apply_iconic_group(plant, "plantae")
    assert plant.kingdom == "Plantae" and plant.class_name == ""
    kept = Photo(path="z.jpg", class_name="Insecta", kingdom="Animalia")
    assert apply_iconic_group(kept, "Insecta") == ["phylum"]  # what the source gave is never overwritten
    for unknown in ("bird", "", None):  # the field-guide benchmark writes its body plans there
        q = Photo(path="w.jpg")
        assert apply_iconic_group(q, unknown) == [] and q.taxon_names() == []


def test_photos_with_no_taxon_keep_their_place_among_the_group():
    from core.search.groups import Group, group_first

    group = Group("frogs", ("Anura",), frozenset({1, 2, 3}))
    ranked = [(9, 0.9), (7, 0.8), (1, 0.7), (8, 0.6), (2, 0.5)]
    # 7 is the user's own photo with no species: the picture decides; 9 and 8 are catalogued outside the group
    out = group_first(ranked, group, 0, lambda ids, n: [], unplaced={7})
    assert [i for i, _ in out] == [7, 1, 2, 9, 8]
