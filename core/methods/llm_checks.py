"""What an LLM's answer must mean to be used, checked by words (the JSON shape is checked in llm_schemas.py).

A real but small model (SmolLM2-135M) often answers in perfect JSON about the wrong thing: a picture
description without the organism, a reformulated caption that lost its subject, a decomposition with parts
the user never asked for, an answer citing photos it was not shown. Each check here raises Unusable with
the reason, and the task falls back to its rule (llm_tasks.ask adds the notice). Words are compared as the
decomposition compares them (lower case, simple plurals stripped, a compound counts for its head word)."""
from __future__ import annotations

import re

from core.fieldguide.lexicon import PLAN_SAY
from core.fieldguide.reading import read_text
from core.methods import rules
from core.methods.decompose import rule_decompose, token_set, tokens


_YOUNG_OF = {"moth": ("caterpillar", "larva"), "frog": ("tadpole",)}


class Unusable(ValueError):
    """An answer of the right shape whose meaning does not fit the request."""


def _has(word: str, have: set[str]) -> bool:
    return word in have or (len(word) >= 4 and any(h.endswith(word) for h in have))


def subject_words(text: str) -> list[str]:
    """The content words of the request's main subject (the core of its first part; for a comparison, the two
    organisms' names)."""
    pair = rules.comparison_organisms(text)
    if pair:
        return [w for name in pair for w in tokens(name)]
    subject = rules.subject_text(text) or text
    parts = rule_decompose(subject)
    words = tokens(parts[0].core) if parts else []
    owner = re.search(r"\bof\s+(.+)$", subject)  # "the crest of the Gold-crested Tuftling": the organism counts
    if words and owner:
        words += tokens(owner.group(1))
    return words or tokens(text)


def mentions(text: str, words: list[str]) -> bool:
    """True when `text` contains at least one of `words` (normalised, compounds count for their head)."""
    have = token_set(text)
    return any(_has(w, have) for w in words)


def require_subject(task: str, request: str, answer: str) -> None:
    """The answer names the request's main subject."""
    words = subject_words(request)
    if words and not mentions(answer, words):
        raise Unusable(f"the {task} does not name the subject ({' '.join(words)})")


def from_request_words(part: str, request: str) -> bool:
    """Every content word of `part` occurs in the request (the words may be reordered; 'with' may link an
    organism to one of its attributes: "Slate Reedpiper with a black crest")."""
    need = [w for w in tokens(part) if w != "with"]
    have = token_set(request)
    return bool(need) and all(_has(w, have) for w in need)


def check_instruction(query: str, kind: str, descriptions: list[str], organisms: list[str]) -> None:
    """A comparison names each organism in its own description; any other description names the subject."""
    if kind == "comparison":
        if len(descriptions) != 2:
            raise Unusable("a comparison needs one description per organism")
        if organisms:
            for name in organisms:
                if not any(mentions(d, tokens(name)) for d in descriptions):
                    raise Unusable(f"no description names {name}")
            return
    for d in descriptions:
        require_subject("visualization instruction", query, d)


def check_subquestions(query: str, context: str, questions: list[str]) -> None:
    """The first question is about the main subject; every question uses a word of the request or notes."""
    require_subject("sub-questions", query, questions[0])
    words = tokens(query + " " + context)
    for q in questions[1:]:
        if not mentions(q, words):
            raise Unusable(f"{q!r} uses no word of the request or its notes")


def cited_ids(text: str, given: set[int]) -> tuple[list[int], list[int]]:
    """(ids cited in square brackets that were given, in order of first mention; ids cited that were not).
    '[12, 15]' counts as two citations."""
    found: list[int] = []
    for group in re.findall(r"\[([\d,\s]+)\]", text):
        for raw in re.findall(r"\d+", group):
            if len(raw) <= 18 and int(raw) not in found:
                found.append(int(raw))
    return [i for i in found if i in given], [i for i in found if i not in given]


def keeps_subject(description: str, reformulation: str) -> None:
    """A PlugIR reformulation still names what the first description was about; a species of the field-guide
    world counts for the kind of organism it is ('a Slate Reedpiper perched on a branch' for 'a bird on a
    branch', once the user confirmed the species)."""
    kinds = {w for sp in read_text(reformulation).species for w in [*PLAN_SAY[sp.plan], *_YOUNG_OF.get(sp.plan, ())]}
    if kinds & {w[:-1] if w.endswith("s") else w for w in subject_words(description)}:
        return
    require_subject("reformulation", description, reformulation)
