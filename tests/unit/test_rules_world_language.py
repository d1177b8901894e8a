"""The offline LLM stand-in on 50 queries of the field-guide world: grammatical sub-questions in the world's
words, decompositions that keep each organism with one modifier, and coverage that never calls a part
uncovered when the world holds a photo that shows it (by ground truth)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from core.backends.metadata_captioner import describe
from core.contracts.records import Photo
from core.methods import llm_tasks
from core.methods.constraints import question_key
from core.methods.decompose import CaptionTerms, satisfies
from core.methods.pareto import uncovered
from fieldguide.benchmark import build_queries
from fieldguide.facts import scene_facts, text_facts
from fieldguide.reading import read_text
from fieldguide.request import read_request
from fieldguide.world import sample_observations
from tests.fakes import FakeLLM
from tests.photos import world_book

BOOK = world_book()  # every request here is in the field-guide world's terms

QUESTION_WORDS = ("Is", "Are", "Does", "Do", "Did", "Can", "Has", "Have", "What", "Which", "How")
# words a garbled question repeats ("Does the photo show does the crest of ..."); articles may repeat
FUNCTION_WORDS = {"is", "are", "does", "do", "did", "can", "has", "have", "this", "it", "its", "there", "photo",
                  "show", "that", "of"}


@pytest.fixture(scope="module")
def world():
    obs = sample_observations(seed=0, per_species=40)
    qs = build_queries(obs, seed=0)
    by_kind = {k: [q for q in qs if q["kind"] == k] for k in ("feature", "comparison", "behaviour", "many_part")}
    chosen = by_kind["many_part"] + by_kind["comparison"][::2] + by_kind["feature"][::3] + by_kind["behaviour"][::3]
    assert len(chosen) == 50
    return obs, chosen


def _species_named(text: str):
    return read_text(text).species


def test_sub_questions_read_as_a_naturalist_would_write_them(world):
    _, queries = world
    for q in queries:
        notices: list[str] = []
        qs = llm_tasks.subquestions(FakeLLM(is_standin=True), q["text"], "", 3, notices, book=BOOK)
        assert notices == [], (q["text"], notices)  # the rule's answer passed the same checks as an LLM's
        assert 2 <= len(qs) <= 3
        for s in qs:
            assert s.split()[0] in QUESTION_WORDS and s.endswith("?") and s.count("?") == 1, s
            words = [w.lower() for w in re.findall(r"[A-Za-z'-]+", s)]
            assert all(a != b for a, b in zip(words, words[1:])), s
            repeated = [w for w in FUNCTION_WORDS if words.count(w) > 1]
            assert not repeated, (s, repeated)
        names = [sp.common_name for sp in _species_named(q["text"])]
        if names:
            assert qs[0].count(names[0]) == 1, (q["text"], qs)  # the identity question names the species once
            for name in names[:3]:
                assert sum(s.count(name) for s in qs) == 1, (q["text"], qs)
        keys = [question_key(s, BOOK) for s in qs]  # no two questions alike in meaning (one per compared organism)
        assert len(set(keys)) == len(keys), (q["text"], qs)
        if q["kind"] == "comparison":
            assert " or " in keys[0] and "species=" not in keys[1]  # "Is this an A or a B?", then the part


def test_decomposition_parts_keep_their_organism_with_one_modifier(world):
    _, queries = world
    for q in queries:
        notices: list[str] = []
        parts = llm_tasks.decompose(FakeLLM(is_standin=True), q["text"], notices, book=BOOK)
        assert notices == [], (q["text"], notices)
        req = read_request(q["text"])
        assert req is not None, q["text"]
        for part in parts:
            r = read_request(part.text)
            assert r is not None and len(r.targets) == 1, part.text
            t = r.targets[0]
            assert t.noun.split()[0] in part.text and part.core and part.core in part.text
            assert any(t.species is x.species and t.plan == x.plan for x in req.targets), part.text
            # one attribute; a pair ("two birds") or a life stage ("Streaked Mossleaper tadpole") belongs to the
            # organism's name when there is another attribute, and is the modifier when there is none
            modifiers = len(t.attrs) or int(t.count == 2 or t.stage not in (None, "adult"))
            assert modifiers == 1, (part.text, t)
            assert "both" not in part.text and "showing both" not in part.text


def test_in_bud_and_full_bloom_stay_with_their_plant():
    parts = llm_tasks.decompose(FakeLLM(is_standin=True), "Snowcup Bellwort in full bloom, Streaked Mossleaper "
                                                           "tadpole and Violet Starbloom in bud", [], book=BOOK)
    assert [p.text for p in parts] == ["Snowcup Bellwort in full bloom", "Streaked Mossleaper tadpole",
                                       "Violet Starbloom in bud"]
    subs = llm_tasks.decompose(FakeLLM(is_standin=True), "Slate Reedpiper showing both its black crest and its "
                                                          "orange belly", [], book=BOOK)
    assert [p.text for p in subs] == ["Slate Reedpiper with a black crest", "Slate Reedpiper with an orange belly"]


def test_no_part_is_uncovered_when_the_world_holds_a_photo_of_it(world):
    obs, queries = world
    captions = []
    for o in obs:
        photo = Photo(path=o.path, scientific_name=o.species.scientific_name, common_name=o.species.common_name,
                      caption=o.caption, observed_on=o.observed_on, latitude=o.latitude, longitude=o.longitude)
        captions.append(CaptionTerms(describe(photo)))
    truths = [scene_facts(o.species, o.scene) for o in obs]
    checked = 0
    for q in queries:
        parts = llm_tasks.decompose(FakeLLM(is_standin=True), q["text"], [], book=BOOK)
        sat = np.array([[satisfies(p.text, c, BOOK) for p in parts] for c in captions], dtype=np.int8)
        for j, p in enumerate(parts):
            need = text_facts(p.text, defaults=False)
            shown = [i for i, t in enumerate(truths) if need <= t]
            if shown:
                assert j not in uncovered(sat), (q["text"], p.text)
                checked += 1
            assert set(np.flatnonzero(sat[:, j])) == set(shown), p.text  # and nothing it does not show
    assert checked >= 60


def test_reformulation_keeps_the_whole_description_and_adds_what_was_confirmed(world):
    notices: list[str] = []

    def say(description: str, turns: list[tuple[str, str]]) -> str:
        return llm_tasks.reformulate(FakeLLM(is_standin=True), description, description, turns, notices,
                                   book=BOOK)

    start = "a bird perched on a branch"
    # "no" and "not sure" add nothing; nothing of the description is lost (the pose and where it sits)
    assert say(start, [("Is it in grass?", "no"), ("Are its wings black?", "not sure")]) == start
    # a confirmed species names the bird; other answers follow as a naturalist writes them
    assert say(start, [("Is this a Slate Reedpiper?", "yes"), ("Is it seen from below?", "yes"),
                       ("Are its wings black?", "yes: black with a white bar")]) == \
        "a Slate Reedpiper perched on a branch, seen from below, with black wings"
    assert say(start, [("Are there two of them?", "yes"), ("Is it in grass?", "yes")]) == \
        "two birds perched on a branch, in grass"
    assert say("a moth on bark", [("Is it a caterpillar?", "yes"), ("Colour?", "green body")]) == \
        "a moth caterpillar on bark, with a green body"
    assert notices == []  # the rule's answers pass the same checks as an LLM's (the subject is still named)
    # every scene query of the benchmark keeps all its words, in order, whatever is confirmed after it
    _, queries = world
    for q in queries:
        if q["kind"] not in ("behaviour", "many_part"):
            continue
        text = " ".join(q["text"].split()).rstrip(".?!")
        out = say(text, [("Is it seen from above?", "yes")])
        assert out.startswith(text) and text_facts(text, defaults=False) <= text_facts(out, defaults=False), \
            (text, out)
    assert notices == []
