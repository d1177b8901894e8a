"""The field-guide world's rule book (core.contracts.world.RuleBook): the offline rules for requests in its
vocabulary, all written as short sentences from the world's lexicon. Here: sub-questions, picture descriptions,
decompositions, field-guide context, answers and what a request's questions leave uncovered; the dialogue rules
(questions, the uncertainty filter, reformulation) are dialogue.py, the kinds of organism and taxa taxa.py.
Every function returns None for text it cannot read; core/methods/rules.py then uses its plain generic
wording."""
from __future__ import annotations

import re

from core.contracts.world import RuleBook
from core.methods.decompose import SubQuery
from core.methods.instruction import Instruction
from core.methods.rules import comparison_organisms
from fieldguide.dialogue import consistent, denied_facts, filter_answers, questions, reformulate, settled_by_denials
from fieldguide.facts import content_key, question_facts, text_facts, understood
from fieldguide.phrasing import (
    a,
    attr_question,
    count_question,
    describe_request,
    entity,
    field_note,
    identity_question,
    identity_with,
    known_colour,
    part_with,
    picture_description,
)
from fieldguide.request import Attr, Request, Target, read_request
from fieldguide.species import PART_PHRASE
from fieldguide.taxa import catalog_topics, group_taxa, organism_kinds
from fieldguide.traits import impossible, meaning_key

RULE_NOTE = "(Written by the offline rule from the field guide, not by an expert model.)"


def _main_attr(t: Target, part: str) -> Attr:
    colour = known_colour(t, part)
    return Attr("colour", colour, part) if colour else Attr("part", "", part)


def subquestions(query: str, n: int) -> list[str] | None:
    req = read_request(query)
    if req is None:
        return None
    ts = req.targets
    if req.kind == "feature":
        return [identity_question(ts[0]), attr_question(_main_attr(ts[0], req.part), ts[0])][:n]
    if req.kind == "comparison":
        return [f"Is this {a(ts[0].noun)} or {a(ts[1].noun)}?", attr_question(Attr("part", "", req.part), ts[0])]
    if len(ts) == 1:
        t = ts[0]
        qs = [identity_question(t)]
        if t.count == 2:
            qs.append(count_question(t))
        qs += [attr_question(x, t) for x in t.attrs]
        if len(qs) < 2:
            qs.append(f"Is the whole {t.noun} visible?")
        return qs[:n]
    qs = [identity_with(t, t.attrs[0]) if t.attrs else identity_question(t) for t in ts]
    return qs[:n]


def decomposition(query: str, limit: int) -> list[SubQuery] | None:
    req = read_request(query)
    if req is None:
        return None
    if req.kind in ("feature", "comparison"):
        parts = [part_with(t, _main_attr(t, req.part)) for t in req.targets]
    else:
        parts = []
        for t in req.targets:
            parts += [part_with(t, x) for x in t.attrs] or [entity(t)]
    return [SubQuery(p, t) for p, t in zip(parts, _cores(req, parts))][:limit]


def _cores(req: Request, parts: list[str]) -> list[str]:
    out = []
    for p in parts:
        t = next((t for t in req.targets if t.noun in p), req.targets[0])
        out.append(t.noun)
    return out


def instruction(query: str):
    req = read_request(query)
    if req is None:
        return None
    if req.kind == "comparison":
        orgs = comparison_organisms(query) or [t.noun for t in req.targets]
        return Instruction("comparison", [picture_description(t, req.part) for t in req.targets], orgs, "rule")
    if req.kind == "feature":
        return Instruction("feature", [picture_description(req.targets[0], req.part)], [], "rule")
    return Instruction("scene", [" and ".join(picture_description(t) for t in req.targets)], [], "rule")


def context(query: str) -> str | None:
    req = read_request(query)
    if req is None:
        return None
    notes = [field_note(t.species) for t in req.targets if t.species is not None]
    return " ".join([describe_request(req), *dict.fromkeys(notes), RULE_NOTE])


def answer(question: str, notes: list[tuple[int, str]]) -> dict | None:
    """An unverified answer to a colour question read from the photos' notes, citing them; None otherwise."""
    req = read_request(question)
    if req is None or req.kind not in ("feature", "comparison") or not notes:
        return None
    head = "Unverified (offline rule, no language model):"
    said = []
    for t in req.targets:
        if t.species is None:
            return None
        colours: dict[str, list[int]] = {}
        for pid, note in notes:
            facts = text_facts(note)
            if f"species={t.species.scientific_name}" in facts:
                for f in facts:
                    if f.startswith(f"colour:{req.part}="):
                        colours.setdefault(f.split("=", 1)[1], []).append(pid)
        noun = PART_PHRASE.get(req.part, req.part)
        if colours:
            colour, ids = max(colours.items(), key=lambda kv: (len(kv[1]), kv[0]))
            cites = " ".join(f"[{i}]" for i in ids[:3])
            said.append(f"the notes of the best-matching photos describe the {noun} of the {t.noun} as {colour} "
                        f"{cites}")
        else:
            said.append(f"none of the best-matching photos' notes describes the {noun} of the {t.noun}")
    text = f"{head} " + "; ".join(said) + "."
    cited = [int(x) for x in re.findall(r"\[(\d+)\]", text)]
    return {"text": text, "cited_ids": list(dict.fromkeys(cited)), "verified": False}


def _fact_words(fact: str) -> str:
    """A fact in plain words: 'seen from the side', 'red crest', 'Slate Reedpiper', 'a twig'."""
    from fieldguide.lexicon import SAY
    from fieldguide.species import by_name

    key, _, value = fact.partition("=")
    if key == "species":
        return " or ".join(by_name(v).common_name for v in value.split(" or "))
    if key.startswith("colour:"):
        return f"{value} {PART_PHRASE.get(key[7:], key[7:])}"
    if key.startswith("part:"):
        return PART_PHRASE.get(key[5:], key[5:])
    said = SAY.get(key, {}).get(int(value) if key == "count" and value.isdigit() else value)
    return said[0] if said else value


def uncovered(query: str, questions_: list[str]) -> list[str]:
    """The parts of `query` in the world's terms that no question asks about, in plain words (a colour's part
    is not named again on its own, nor a body plan that a named species gives)."""
    wanted = text_facts(query, defaults=False)
    if not wanted:
        return []
    asked = set().union(*(text_facts(q, defaults=False) for q in questions_)) if questions_ else set()
    missing = [f for f in sorted(wanted - asked) if f]
    coloured = {f.split("=")[0][7:] for f in missing if f.startswith("colour:")}
    carried = bool(wanted & {"behaviour=carrying", "behaviour=feeding"})  # "in its beak" says how, not what
    missing = [f for f in missing if not (f.startswith("part:") and f[5:] in coloured)
               and not (f == "part:beak" and carried)
               and not (f.startswith("plan=") and any(a.startswith("species=") for a in asked))]
    return [_fact_words(f) for f in missing]


class FieldGuideRules(RuleBook):
    """The field-guide world's answers to what the generic path asks (each None outside the world's terms)."""

    name = "fieldguide"
    subquestions = staticmethod(subquestions)
    decomposition = staticmethod(decomposition)
    instruction = staticmethod(instruction)
    context = staticmethod(context)
    questions = staticmethod(questions)
    filter_answers = staticmethod(filter_answers)
    reformulate = staticmethod(reformulate)
    answer = staticmethod(answer)
    text_facts = staticmethod(text_facts)
    question_facts = staticmethod(question_facts)
    understood = staticmethod(understood)
    content_key = staticmethod(content_key)
    consistent = staticmethod(consistent)
    denied_facts = staticmethod(denied_facts)
    settled_by_denials = staticmethod(settled_by_denials)
    organism_kinds = staticmethod(organism_kinds)
    uncovered = staticmethod(uncovered)
    group_taxa = staticmethod(group_taxa)
    catalog_topics = staticmethod(catalog_topics)
    impossible = staticmethod(impossible)
    meaning_key = staticmethod(meaning_key)
