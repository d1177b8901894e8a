"""The shape of every JSON answer the methods ask a text LLM for, as pydantic models.

Each model does two jobs: `schema_for(...)` gives the JSON Schema sent to the server (llama.cpp turns it into
a grammar, OpenAI-style servers into structured output), with the exact counts the task wants; and
`model_validate` checks the reply. Validation is more lenient than the schema (extra keys ignored, a few
surplus list items allowed and cut later) because a server without schema support may still send usable JSON.
What the words mean is checked afterwards, in llm_tasks.py."""
from __future__ import annotations

import copy
from typing import Annotated, Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

Description = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=400)]
Question = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=200)]
Phrase = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
ShortAnswer = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class VisualInstructionReply(_Reply):
    """VisRet: what kind of request it is and one picture description (two for a comparison)."""

    kind: Literal["feature", "comparison", "scene"]
    descriptions: list[Description] = Field(min_length=1, max_length=2)

    @field_validator("kind", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class SubQuestionsReply(_Reply):
    """Structured rerank: yes/no questions, the first about the main subject."""

    questions: list[Question] = Field(min_length=2, max_length=6)


class Part(_Reply):
    text: Phrase
    core: Phrase = ""  # required by the schema; a reply without it gets the rule's core


class DecompositionReply(_Reply):
    """Pareto coverage: the query's smallest independent parts, each with its core thing."""

    parts: list[Part] = Field(min_length=1, max_length=12)

    @field_validator("parts", mode="before")
    @classmethod
    def _bare_strings(cls, value: Any) -> Any:  # ["red flower", "bee"] is a usable answer too
        return [{"text": v} if isinstance(v, str) else v for v in value] if isinstance(value, list) else value


class QuestionsReply(_Reply):
    """PlugIR questioner: clarifying questions."""

    questions: list[Question] = Field(min_length=1, max_length=10)


class FilterReply(_Reply):
    """PlugIR filter: one answer (or 'uncertain') per question."""

    answers: list[ShortAnswer] = Field(min_length=1, max_length=20)


def _strict(node: Any) -> None:
    """Every object closed (additionalProperties false) with all its properties required: what strict
    structured output asks for, and it keeps a grammar from wandering into extra keys."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node["additionalProperties"] = False
            node["required"] = list(node["properties"])
        for value in node.values():
            _strict(value)
    elif isinstance(node, list):
        for value in node:
            _strict(value)


YES_NO_OPENERS = ("Is", "Are", "Does", "Do", "Did", "Can", "Has", "Have", "Was", "Were")
_FREE_TEXT = r'[^"\\?\n]'  # any character but a quote, a backslash, a question mark or a new line


def yes_no_pattern(words: Sequence[str] | None = None) -> str:
    """A regular expression for one yes/no question: an opener ("Is", "Does", ...), then free text, or, given
    `words`, two to fifteen of those words only, then "?". Sent as the questions' pattern, llama.cpp makes it
    part of the grammar (OpenAI-style strict output takes `pattern` too)."""
    opener = "(" + "|".join(YES_NO_OPENERS) + ")"
    if not words:
        return f"^{opener} {_FREE_TEXT}{{3,150}}\\?$"
    word = "(" + "|".join(sorted(set(words), key=lambda w: (-len(w), w))) + ")"
    return f"^{opener} {word}( {word}){{1,14}}\\?$"


def schema_for(model: type[BaseModel], *, items: dict[str, tuple[int, int]] | None = None,
               echo: str | None = None, patterns: dict[str, str] | None = None) -> dict[str, Any]:
    """The JSON Schema sent for `model`; `items` sets (minItems, maxItems) of list fields by name, so the
    server is asked for exactly the count the task wants; `echo` adds a first field "request" that must repeat
    the given request word for word (a grammar then writes it before the answer, which keeps a small model on
    the subject); `patterns` gives list fields of strings a pattern for each item (yes_no_pattern)."""
    schema = copy.deepcopy(model.model_json_schema())
    if echo is not None:
        schema["properties"] = {"request": {"type": "string", "enum": [echo]}, **schema["properties"]}
    _strict(schema)
    for name, (lo, hi) in (items or {}).items():
        prop = schema["properties"][name]
        prop["minItems"], prop["maxItems"] = int(lo), int(hi)
    for name, pattern in (patterns or {}).items():
        schema["properties"][name]["items"] = {"type": "string", "pattern": pattern}
    return schema
