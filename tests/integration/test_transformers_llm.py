"""The in-process transformers LLM (llm='transformers:MODEL') on a tiny random Llama built here: the model's
own chat template, JSON held to its schema by xgrammar (a random model's reply still parses and validates),
greedy replies repeatable, seeded sampling, the JSON tasks validated like any LLM's, and failures to load."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("xgrammar")

from core.backends.base import ChatMessage
from core.backends.registry import Backends, list_backends
from core.config import Settings
from core.contracts.errors import BackendError
from core.methods import llm_schemas, llm_tasks
from tests.tiny_llm import folder, llm  # noqa: F401  (the module's tiny Llama fixtures)

CHAT = [ChatMessage("system", "Reply with JSON only."), ChatMessage("user", "Request: a heron eating a fish")]


def test_registry_names_it():
    assert "transformers:" in list_backends()["llm"]


def test_prompt_is_the_models_chat_template(llm):
    turns = [{"role": m.role, "content": m.content} for m in CHAT]
    text = llm.tokenizer.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)
    assert text.startswith("<|im_start|>system\nReply with JSON only.<|im_end|>")
    assert text.endswith("<|im_start|>assistant\n")
    ids = llm.prompt_ids(CHAT)["input_ids"][0].tolist()
    assert ids == llm.tokenizer(text, add_special_tokens=False)["input_ids"]


def test_json_reply_is_held_to_its_schema(llm):
    schema = llm_schemas.schema_for(llm_schemas.SubQuestionsReply, items={"questions": (2, 2)})
    text = llm.chat(CHAT, max_tokens=160, json_schema=schema)
    reply = llm_schemas.SubQuestionsReply.model_validate(json.loads(text))  # random weights, still valid JSON
    assert len(reply.questions) == 2
    assert llm.chat(CHAT, max_tokens=160, json_schema=schema) == text  # greedy: the same reply again
    free = llm.chat(CHAT, max_tokens=40)  # unconstrained, a random model writes no JSON
    with pytest.raises(ValueError):
        json.loads(free)


def test_sampling_follows_the_seed(llm):
    a = llm.chat(CHAT, temperature=1.0, seed=3, max_tokens=12)
    b = llm.chat(CHAT, temperature=1.0, seed=3, max_tokens=12)
    assert a == b


def test_tiny_model_facts_and_notice(llm):
    assert llm.n_params < 1_000_000 and llm.own_words and "very small" in llm.notice
    assert llm.model_id.startswith("transformers:") and not llm.is_standin


def test_tasks_validate_its_answers(llm):
    """A random model's questions are nonsense words: the checks refuse them and the rules fill in, said in a
    notice (as for any LLM); the tiny-model notice is there too."""
    notices: list[str] = []
    questions = llm_tasks.subquestions(llm, "a heron eating a fish", "", 2, notices)
    assert len(questions) == 2 and all(q.endswith("?") for q in questions)
    assert any("very small" in n for n in notices)
    assert any("rule" in n or "refused" in n or "unusable" in n for n in notices if "very small" not in n)


def test_failures_to_load(tmp_path, folder):
    with pytest.raises(BackendError, match="does not exist"):
        Backends(Settings(llm=f"transformers:{tmp_path / 'nothing'}", device="cpu")).llm
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(BackendError, match="Could not load the language model"):
        Backends(Settings(llm=f"transformers:{broken}", device="cpu")).llm
    bare = tmp_path / "no-template"
    import shutil

    shutil.copytree(folder, bare)
    config = json.loads((bare / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (bare / "tokenizer_config.json").write_text(json.dumps(config))
    for extra in bare.glob("chat_template.*"):
        extra.unlink()
    with pytest.raises(BackendError, match="no chat template"):
        Backends(Settings(llm=f"transformers:{bare}", device="cpu")).llm
