"""The offline rules on text outside the field-guide world (a user's own photo collection): plain grammatical
questions built from whole phrases of the user's words, never words stitched from different places, and a
plain statement when a query cannot be broken into parts."""
from __future__ import annotations

import re

from core.methods import llm_tasks, rules
from tests.fakes import FakeLLM
from tests.photos import world_book

REAL = ["a nest showing brood parasitism by a cowbird", "albino American robin",
        "what colour is the underside of a tawny pipit's wings?", "Does the red-spotted newt have orange spots?",
        "a hummingbird feeding on a red flower", "Which one has a longer tail, Eastern bluebird or Western bluebird?",
        "monarch butterfly caterpillar on milkweed", "two bald eagles fighting over a fish"]


def _phrases_of(text: str) -> str:
    return " " + " ".join(re.findall(r"[a-z0-9'-]+", text.lower())) + " "


def test_generic_sub_questions_are_grammatical_and_use_whole_phrases():
    assert rules.subquestions("albino American robin", 3) == ["Is there an American robin in the photo?",
                                                              "Is the American robin albino?"]
    assert rules.subquestions("a nest showing brood parasitism by a cowbird", 3) == [
        "Is there a nest in the photo?", "Is the nest showing brood parasitism by a cowbird?",
        'Does the photo match the description "a nest showing brood parasitism by a cowbird"?']
    assert rules.subquestions("what colour is the underside of a tawny pipit's wings?", 3) == [
        "Is there a tawny pipit in the photo?", "Is the underside of a tawny pipit's wings clearly visible?"]
    assert rules.subquestions("two bald eagles fighting over a fish", 3)[0] == "Are there two bald eagles in the photo?"
    for q in REAL:
        notices: list[str] = []
        qs = llm_tasks.subquestions(FakeLLM(is_standin=True), q, "", 3, notices)
        assert notices == [] and 2 <= len(qs) <= 3
        for s in qs:
            assert s[0].isupper() and s.endswith("?") and "  " not in s
            words = s.lower().split()
            assert all(a != b for a, b in zip(words, words[1:])), s


def test_generic_decomposition_keeps_whole_phrases_or_says_it_cannot_split():
    for q in REAL:
        notices: list[str] = []
        parts = llm_tasks.decompose(FakeLLM(is_standin=True), q, notices)
        for p in parts:  # every part and its core are runs of the user's own words
            assert _phrases_of(p.text).strip() in _phrases_of(q), (q, p.text)
            assert _phrases_of(p.core).strip() in _phrases_of(p.text), (p.text, p.core)
        if len(parts) == 1:
            assert notices == [rules.CANNOT_SPLIT], q
        else:
            assert notices == []
    parts = llm_tasks.decompose(FakeLLM(is_standin=True), "a lily in full bloom next to a bee in flight", [])
    assert [p.text for p in parts] == ["lily in full bloom", "bee in flight"]


def test_generic_context_and_answer_say_plainly_what_they_are():
    assert "No field notes are at hand" in rules.context("albino American robin")
    notices: list[str] = []
    out = llm_tasks.evidence_answer(FakeLLM(is_standin=True), "albino American robin", [(4, "a robin"), (9, "x")],
                                    notices)
    assert out["verified"] is False and out["cited_ids"] == [4, 9]
    assert out["text"].startswith("No answer can be written")
    assert notices == []


def test_world_colour_question_is_answered_from_the_notes_and_stays_unverified():
    notes = [(7, "Note 7: one Gold-crested Tuftling (Tuftilla aurifrons), perched. Visible: yellow crest, brown "
                 "back."), (8, "Note 8: one Gold-crested Tuftling (Tuftilla aurifrons), flying. Visible: white belly.")]
    out = llm_tasks.evidence_answer(FakeLLM(is_standin=True), "What colour is the crest of the Gold-crested "
                                                               "Tuftling?", notes, [], book=world_book())
    assert out["verified"] is False and out["cited_ids"] == [7]
    assert "describe the crest of the Gold-crested Tuftling as yellow [7]" in out["text"]
