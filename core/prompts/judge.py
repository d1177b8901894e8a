"""Wording of the vision-language judge's prompt (our own words).

The judge must put its answer word first, so that the first generated token carries the yes/no
log-probabilities used for the confidence score, and then give a short reason on the same line."""
from __future__ import annotations

from typing import Any

SYSTEM = (
    "You help ecologists check nature photographs. You receive one photo and one question that can be "
    "answered with yes or no by looking at the photo. Reply on a single line: start with exactly 'Yes' or "
    "'No', then a dash and a short reason naming what you can see that decides it. If the photo does not "
    "show enough to be sure, answer 'No'."
)

CAPTION_SYSTEM = (
    "You write short factual notes about nature photographs for a photo catalog. Describe what is visible "
    "in one sentence: the organism or scene, what it is doing, and its surroundings."
)


def user_text(request: Any) -> str:
    """The text part of the user turn: search goal, background, earlier answers, then the question. `request`:
    a judge request (core.backends.base.JudgeRequest: query, context, history, question); prompts import no
    backend."""
    parts: list[str] = []
    if request.query:
        parts.append(f"The ecologist is searching for: {request.query.strip()}")
    if request.context:
        parts.append(f"Background for this search: {request.context.strip()}")
    if request.history:
        lines = [f"- {q.strip()} -> {a.strip()}" for q, a in request.history]
        parts.append("Already established for this photo:\n" + "\n".join(lines))
    parts.append(f"Question: {request.question.strip()}")
    parts.append("Answer 'Yes' or 'No' first, then a dash and one short reason.")
    return "\n\n".join(parts)


def caption_text(hint: str = "") -> str:
    """The user turn for the captioner; `hint` is optional catalog metadata to anchor the names."""
    text = "Describe this photo in one sentence."
    if hint:
        text += f" The catalog says: {hint}."
    return text
