"""Structured output for real LLMs: every JSON task sends a real JSON Schema with the counts it wants, and
every parsed answer is checked for meaning before it is used (else the rule, with a notice)."""
from __future__ import annotations

import json
import re

import pytest

from core.methods import llm_tasks, rules
from core.backends.model_facts import model_facts
from core.methods.llm_schemas import DecompositionReply, schema_for
from tests.fakes import FakeLLM


class SchemaRecordingLLM(FakeLLM):
    """FakeLLM that also keeps the json_schema of every call."""

    def __init__(self, *args, notice: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.schemas: list = []
        self.notice = notice

    def chat(self, messages, *, json_schema=None, **kwargs):
        self.schemas.append(json_schema)
        return super().chat(messages, json_schema=json_schema, **kwargs)


def _run_every_json_task(llm) -> list:
    notices: list[str] = []
    llm_tasks.visual_instruction(llm, "a heron eating a fish", notices)
    llm_tasks.subquestions(llm, "a heron eating a fish", "", 3, notices)
    llm_tasks.decompose(llm, "a heron eating a fish", notices, limit=4)
    llm_tasks.propose_questions(llm, "a heron", [], ["heron, standing", "heron, flying"], 2, notices)
    llm_tasks.filter_questions(llm, "a heron", [], ["Is it flying?", "Is it wet?", "Is it night?"], notices)
    return llm.schemas


def test_every_json_task_sends_a_closed_schema_with_its_counts():
    schemas = _run_every_json_task(SchemaRecordingLLM())
    assert len(schemas) == 5 and all(s and s.get("properties") for s in schemas)
    for s in schemas:
        assert s["type"] == "object" and s["additionalProperties"] is False
        assert set(s["required"]) == set(s["properties"])
    instruction, subq, parts, questions, filt = schemas
    assert instruction["properties"]["kind"]["enum"] == ["feature", "comparison", "scene"]
    assert (subq["properties"]["questions"]["minItems"], subq["properties"]["questions"]["maxItems"]) == (3, 3)
    assert parts["properties"]["parts"]["maxItems"] == 4 and "$defs" in parts
    assert questions["properties"]["questions"]["maxItems"] == 2
    assert (filt["properties"]["answers"]["minItems"], filt["properties"]["answers"]["maxItems"]) == (3, 3)


def test_part_schema_requires_text_and_core():
    part = schema_for(DecompositionReply)["$defs"]["Part"]
    assert part["required"] == ["text", "core"] and part["additionalProperties"] is False


def test_instruction_without_the_subject_falls_back_to_the_rule():
    notices: list[str] = []
    llm = FakeLLM({"ecologist's request": json.dumps({"kind": "scene", "descriptions": ["a sunny meadow"]})})
    instr = llm_tasks.visual_instruction(llm, "a heron eating a fish", notices)
    assert instr.source == "rule" and "heron" in instr.descriptions[0]
    assert "refused the text written by fake-llm" in notices[0]
    good = FakeLLM({"ecologist's request": json.dumps({"kind": "Scene",
                                                        "descriptions": ["grey herons, a fish in the bill"]})})
    assert llm_tasks.visual_instruction(good, "a heron eating a fish", []).source == "llm"  # plural, any case


def test_comparison_must_name_each_organism():
    query = "compare house sparrow vs tree sparrow"
    bad = FakeLLM({"ecologist's request": json.dumps({"kind": "comparison", "descriptions": ["a finch", "a finch"]})})
    assert llm_tasks.visual_instruction(bad, query, []).source == "rule"
    good = FakeLLM({"ecologist's request": json.dumps(
        {"kind": "comparison", "descriptions": ["a tree sparrow, head", "a house sparrow, head"]})})
    assert llm_tasks.visual_instruction(good, query, []).source == "llm"


def test_subquestions_must_start_with_the_subject():
    notices: list[str] = []
    llm = FakeLLM({"yes/no questions": json.dumps({"questions": ["Is it sunny?", "Is there water?"]})})
    qs = llm_tasks.subquestions(llm, "a heron eating a fish", "", 2, notices)
    assert qs[0].startswith("Is there a heron") and "refused the text written by fake-llm" in notices[0]  # the rule's


def test_decomposition_keeps_only_parts_made_of_the_query_words():
    notices: list[str] = []
    llm = FakeLLM({"smallest independent parts": json.dumps(
        {"parts": [{"text": "red flowers", "core": "flower"}, {"text": "honey bee", "core": "bee"},
                   {"text": "blue sky", "core": "sky"}]})})
    subs = llm_tasks.decompose(llm, "a honey bee on a red flower", notices)
    assert [(s.text, s.core) for s in subs] == [("red flowers", "flower"), ("honey bee", "bee")]
    assert any("blue sky" in n for n in notices)
    notices.clear()
    invented = FakeLLM({"smallest independent parts": json.dumps({"parts": [{"text": "a cat", "core": "cat"}]})})
    subs = llm_tasks.decompose(invented, "a honey bee on a red flower", notices)
    assert [s.text for s in subs] == ["honey bee", "red flower"]
    assert "refused the text written by fake-llm" in notices[0]


def test_the_models_answer_is_returned_for_the_evidence_check():
    """Whether it is verified is answer_check's to say (tests/unit/test_answer_check.py): here it is the model's
    text, its citations among the photos given, unverified until checked."""
    notices: list[str] = []
    ans = llm_tasks.evidence_answer(FakeLLM(default="Red [3, 4] and [77]."), "what colour?",
                                    [(3, "red frog"), (4, "leaf")], notices)
    assert ans == {"text": "Red [3, 4] and [77].", "cited_ids": [3, 4], "verified": False, "by_model": True}
    assert notices == []


def test_an_enormous_answer_is_not_an_answer():
    notices: list[str] = []
    ans = llm_tasks.evidence_answer(FakeLLM(default="[3] " + "x" * 100_000), "q", [(3, "note")], notices)
    assert ans["verified"] is False and len(ans["text"]) < 1000 and "unusable" in notices[0]


def test_reformulation_that_drops_the_subject_is_not_used():
    notices: list[str] = []
    llm = FakeLLM({"First description": "red wings at dusk"})
    out = llm_tasks.reformulate(llm, "a moth on bark", "a moth on bark", [("Colour?", "red wings")], notices)
    # the offline rule's text instead (in the world's words: "bark" is the world's "tree bark")
    assert out == rules.reformulate("a moth on bark", [("Colour?", "red wings")])
    assert "refused the text written by fake-llm" in notices[0]
    assert "moth" in out and out.endswith("red wings") and "dusk" not in out
    kept = FakeLLM({"First description": "a moth with red wings on bark"})
    assert llm_tasks.reformulate(kept, "a moth on bark", "a moth on bark", [("Colour?", "red wings")], []) == \
        "a moth with red wings on bark"


def test_questioner_drops_questions_already_asked():
    llm = FakeLLM({"clarifying questions": json.dumps({"questions": ["Is it flying?", "Is it wet"]})})
    qs = llm_tasks.propose_questions(llm, "a heron", [("Is it flying?", "no")], ["a", "b"], 3, [])
    assert qs == ["Is it wet?"]


def test_the_tiny_model_notice_is_shown_once():
    notices: list[str] = []
    llm = SchemaRecordingLLM(notice="SmolLM2-135M is a very small model")
    llm_tasks.visual_instruction(llm, "a heron", notices)
    llm_tasks.subquestions(llm, "a heron", "", 2, notices)
    assert notices.count("SmolLM2-135M is a very small model") == 1


def _subq_reply(*questions: str) -> FakeLLM:
    return FakeLLM({"yes/no questions": json.dumps({"request": "a heron eating a fish", "questions": list(questions)})})


def test_repeated_subquestions_are_completed_by_the_rule_with_a_notice():
    notices: list[str] = []
    same, eats = "Is there a heron in the photo?", "Is the heron eating a fish?"
    qs = llm_tasks.subquestions(_subq_reply(same, eats, same), "a heron eating a fish", "", 3, notices)
    assert qs[:2] == [same, eats] and len(qs) == 3 and len(set(qs)) == 3
    assert any("2 usable different question(s) were left, the offline rule added the rest" in n for n in notices)


def test_subquestions_that_check_nothing_beyond_the_subject_fall_back_to_the_rule():
    notices: list[str] = []
    same = "Is there a heron in the photo?"
    qs = llm_tasks.subquestions(_subq_reply(same, same, "Are they in the picture?"), "a heron eating a fish", "", 3,
                                notices)
    assert qs == rules.subquestions("a heron eating a fish", 3)
    assert any("refused the text written by fake-llm: no question checks anything beyond the subject" in n
               for n in notices)


def test_questions_a_yes_no_judge_cannot_answer_are_dropped():
    notices: list[str] = []
    qs = llm_tasks.subquestions(_subq_reply("Is there a heron in the photo?", "What is a heron?",
                                            "Are they in the picture?", "Is the heron eating a fish?"),
                                "a heron eating a fish", "", 3, notices)
    assert qs[:2] == ["Is there a heron in the photo?", "Is the heron eating a fish?"]
    assert "What is a heron?" not in qs and "Are they in the picture?" not in qs
    assert any("2 usable different question(s) were left" in n and '"What is a heron?": not a yes/no question' in n
               for n in notices)


def test_a_first_question_that_is_not_yes_no_makes_the_answer_unusable():
    notices: list[str] = []
    qs = llm_tasks.subquestions(_subq_reply("What is a heron?", "Is the heron eating a fish?"),
                                "a heron eating a fish", "", 2, notices)
    assert qs == rules.subquestions("a heron eating a fish", 2)
    assert any("refused the text written by fake-llm" in n and "not a yes/no question" in n for n in notices)


@pytest.mark.parametrize("own_words", [False, True])
def test_subquestion_schema_holds_questions_to_yes_no_form_and_a_small_model_to_the_requests_words(own_words):
    llm = SchemaRecordingLLM()
    llm.own_words = own_words
    llm_tasks.subquestions(llm, "a heron eating a fish", "", 2, [])
    pattern = llm.schemas[0]["properties"]["questions"]["items"]["pattern"]
    assert re.fullmatch(pattern, "Is the heron eating a fish?")
    assert not re.fullmatch(pattern, "What is the heron eating?")  # not a yes/no question
    assert not re.fullmatch(pattern, 'Is it "big"?')  # a quote would end the JSON string
    assert bool(re.fullmatch(pattern, "Is the heron nesting in the Pacific Northwest?")) is not own_words


def test_only_the_tiny_model_is_held_to_the_requests_words():
    assert model_facts("llm", "SmolLM2-135M-Instruct").own_words
    assert not model_facts("llm", "gpt-4o-mini").own_words and not model_facts("llm", "Qwen2.5-7B").own_words


def test_subquestion_schema_asks_to_repeat_the_request_first():
    llm = SchemaRecordingLLM()
    llm_tasks.subquestions(llm, "a  heron eating a fish", "", 2, [])
    schema = llm.schemas[0]
    assert list(schema["properties"])[0] == "request" and schema["required"][0] == "request"
    assert schema["properties"]["request"]["enum"] == ["a heron eating a fish"]
