"""LLM tasks: JSON parsing and validation, rule fallbacks (silent for the rule LLM, noticed otherwise)."""
from __future__ import annotations

import json

from core.methods import llm_tasks, rules
from core.methods.decompose import rule_decompose, satisfies, tokens
from tests.fakes import FakeLLM
from tests.photos import world_book


def test_rule_llm_uses_rules_without_notice():
    notices: list[str] = []
    instr = llm_tasks.visual_instruction(FakeLLM(is_standin=True), "a frog calling at night", notices)
    assert instr.source == "rule" and instr.kind == "scene" and notices == []
    extra = instr.descriptions[0][len("a frog calling at night"):]
    assert len(extra.split()) <= 30


def test_unusable_and_failing_llm_fall_back_with_notice():
    notices: list[str] = []
    out = llm_tasks.subquestions(FakeLLM(default="I cannot help"), "albino American robin", "", 3, notices)
    assert out[0] == "Is there an American robin in the photo?" and "unusable" in notices[0]
    notices.clear()
    llm_tasks.expert_context(FakeLLM({"": TimeoutError("slow")}), "robin", notices)
    assert "failed" in notices[0]
    notices.clear()
    llm_tasks.expert_context(FakeLLM(default="   "), "robin", notices)
    assert "returned nothing" in notices[0]


def test_llm_outputs_are_parsed_and_validated():
    notices: list[str] = []
    llm = FakeLLM({"yes/no questions": "```json\n" + json.dumps(
        {"questions": ["Is there an American robin?", "Is the plumage mostly white", "Are the eyes pink?",
                       "Extra?"]}) + "\n```"})
    qs = llm_tasks.subquestions(llm, "albino American robin", "White plumage, pink eyes.", 3, notices)
    assert qs == ["Is there an American robin?", "Is the plumage mostly white?", "Are the eyes pink?"]
    assert "White plumage, pink eyes." in llm.calls[0][1].content
    # used model text is labelled with the model; the question past the three asked for is named as refused
    assert notices == ['sub-questions: written by fake-llm; refused "Extra?": not a yes/no question']
    comp = FakeLLM({"ecologist's request": json.dumps({"kind": "comparison", "descriptions": ["a", "b"]})})
    instr = llm_tasks.visual_instruction(comp, "compare house sparrow vs tree sparrow", notices)
    assert instr.kind == "comparison" and instr.organisms == ["house sparrow", "tree sparrow"]
    parts = FakeLLM({"smallest independent parts": json.dumps({"parts": [{"text": "red flower", "core": "flower"},
                                                                        {"text": "bee"}]})})
    subs = llm_tasks.decompose(parts, "a bee on a red flower", notices)
    assert [(s.text, s.core) for s in subs] == [("red flower", "flower"), ("bee", "bee")]


def test_feature_instruction_leaves_out_the_value():
    instr = rules.instruction("What colour is the underside of the Monarch butterfly's wings?")
    assert instr.kind == "feature"
    text = instr.descriptions[0].lower()
    assert "monarch" in text and "wings" in text and not set(text.split()) & rules.COLOURS
    yn = rules.instruction("Does the red-spotted newt have orange spots?")
    assert "orange" not in yn.descriptions[0]


def test_comparison_rule_gives_one_instruction_per_organism():
    instr = rules.instruction("Which one has a longer tail, Eastern bluebird or Western bluebird?")
    assert instr.kind == "comparison" and instr.organisms == ["Eastern bluebird", "Western bluebird"]
    assert all("tail" in d for d in instr.descriptions)


def test_decomposition_and_token_match():
    subs = rule_decompose("a photo of a hummingbird feeding on a red flower")
    assert [(s.text, s.core) for s in subs] == [("hummingbird feeding", "hummingbird"), ("red flower", "flower")]
    cap = set(tokens("Two hummingbirds feeding; red flowers nearby"))
    assert satisfies("hummingbird feeding", cap) and satisfies("red flower", cap)
    assert not satisfies("blue flower", cap)
    assert satisfies("gray heron", set(tokens("a grey heron")))
    assert satisfies("moth", set(tokens("Scarlet-underwing Veilmoth"))) and not satisfies("ant", {"plant"})


def test_plugir_rules():
    # "yes" adds the question's content in the world's words, so does free text in them ("red wings" -> "with red
    # wings"); "no" / "not sure" add nothing
    book = world_book()
    assert rules.reformulate("a bird", [("Is the bird perching?", "yes"), ("Colour?", "red wings"),
                                        ("Is it night?", "not sure"), ("Is it wet?", "no")], book) == \
        "a bird, perched, with red wings"
    assert rules.reformulate("a nest", [("Does the photo show a cowbird egg?", "yes: a speckled egg")], book) == \
        "a nest, a cowbird egg"  # outside the world's words: the question's content, never the reason
    qs = rules.questions("a bird", [], ["bird, perching, red wings", "bird, flying, red wings", "bird, perching"], 3,
                         book)
    assert len(qs) == 3 and all(q.endswith("?") for q in qs)
    kept = rules.uncertain_questions("a bird with red wings", [], ["Does the photo show red wings?",
                                                                   "Does the photo show a nest?"], book)
    assert kept == ["Does the photo show a nest?"]


def test_filter_keeps_uncertain_and_never_empties():
    notices: list[str] = []
    llm = FakeLLM({"try to answer": json.dumps({"answers": ["yes", "uncertain"]})})
    assert llm_tasks.filter_questions(llm, "c", [], ["q1?", "q2?"], notices) == ["q2?"]
    assert notices == []
    # nothing uncertain: not the redundant proposals but the rule's questions about the candidates, new ones only
    llm2 = FakeLLM({"try to answer": json.dumps({"answers": ["yes", "no"]})})
    turns = [("Does the photo show red wings?", "no")]
    kept = llm_tasks.filter_questions(llm2, "c", turns, ["q1?", "q2?"], notices,
                                      ["red wings, perching", "blue wings, flying", "perching on a twig"], n=3,
                                      book=world_book())
    assert kept and not {"q1?", "q2?", turns[0][0]} & set(kept)
    assert kept[0] == "Are its wings blue?"  # the rule's best split that the dialogue does not settle yet
    assert any("already answer every proposed question" in n for n in notices)


def test_reformulation_asks_for_paraphrase_when_unchanged():
    llm = FakeLLM({"did not change": "a bird with red wings", "First description": "a bird"})
    out = llm_tasks.reformulate(llm, "a bird", "a bird", [("Colour?", "red wings")], [])
    assert out == "a bird with red wings" and len(llm.calls) == 2


def test_rule_reads_how_does_part_of_a_differ_from_that_of_b():
    from core.methods.rules import instruction

    ins = instruction("How does the crest of the Ember-crested Tuftling (Tuftilla rubrifrons) differ from that of "
                      "the Gold-crested Tuftling (Tuftilla aurifrons)?", world_book())
    assert ins.kind == "comparison"
    assert ins.organisms == ["Ember-crested Tuftling (Tuftilla rubrifrons)",
                             "Gold-crested Tuftling (Tuftilla aurifrons)"]
    # each description names its own organism, the part and the view that shows it, not the other name
    assert ins.descriptions == ["an Ember-crested Tuftling seen from the side showing its crest",
                                "a Gold-crested Tuftling seen from the side showing its crest"]
