"""Every text-LLM task of the methods: prompt (core/prompts/*), parse + validate, and a deterministic rule.

Each task returns its value through llm_call.ask, which falls back to the task's rule, with a notice, when the
LLM fails, returns nothing or returns something unusable; the offline 'rule' LLM means "use the rule" and adds
no notice. JSON tasks send a real JSON Schema (llm_schemas.py) and every answer is checked for shape and meaning
(llm_checks.py) before it is used; a backend with a `notice` (the tiny SmolLM2 model) adds it once to the
notices. `book` is the rule book that reads the request (core.contracts.world.RuleBook, carried by the search's
run): its world's wording in the rules, its vocabulary in the checks."""
from __future__ import annotations

import json
import logging
from typing import Any

from core.contracts.world import GENERIC, RuleBook
from core.methods import llm_checks as checks
from core.methods import llm_schemas as schemas
from core.methods import rules
from core.methods.decompose import MAX_SUBQUERIES, SubQuery, core_concept
from core.methods.instruction import Instruction  # noqa: F401  (re-exported: callers import it from here)
from core.methods.llm_call import ask, backend_attr, checked, checked_rule, model_label, note_model, parse_json
from core.prompts import answer as answer_prompts
from core.prompts import coverage as coverage_prompts
from core.prompts import plugir as plugir_prompts
from core.prompts import rerank as rerank_prompts
from core.prompts import visret as visret_prompts

log = logging.getLogger(__name__)
MAX_ANSWER_CHARS = 4000  # a free-text answer longer than this is not an answer (max_tokens is far lower)


def _strings(value: Any, lo: int, hi: int, max_words: int = 80) -> list[str] | None:
    if not isinstance(value, list):
        return None
    out = [" ".join(str(v).split()) for v in value if isinstance(v, str) and v.strip()]
    out = [s for s in out if len(s.split()) <= max_words]
    return out[:hi] if len(out) >= lo else None


def _one_line(value: str) -> str:
    return " ".join(value.split())


# ---- VisRet instruction (also the rewrite baseline's text) -------------------------------------------------
def visual_instruction(llm, query: str, notices: list[str], *, book: RuleBook = GENERIC) -> Instruction:
    def parse(text: str, strict: bool = True) -> Instruction | None:
        reply = schemas.VisualInstructionReply.model_validate(parse_json(text))
        descs = [_one_line(d) for d in reply.descriptions]
        if any(len(d.split()) > 60 for d in descs):
            return None
        organisms = (rules.comparison_organisms(query) or []) if reply.kind == "comparison" else []
        descs = descs if reply.kind == "comparison" else descs[:1]
        checks.check_instruction(query, reply.kind, descs, organisms, strict=strict, book=book)
        return Instruction(reply.kind, descs, organisms, "llm")

    def rule() -> Instruction:
        v = rules.instruction(query, book)
        reply = json.dumps({"kind": v.kind, "descriptions": v.descriptions})
        # the rule may write the field guide's answer ("with a red crest"): checked for shape, not as a model is
        out = checked_rule("visualization instruction", v, reply,
                           checked("visualization instruction", lambda text: parse(text, strict=False)), notices)
        return Instruction(out.kind, out.descriptions, v.organisms, "rule")

    note_model(llm, notices)
    value, source = ask(llm, "visualization instruction", visret_prompts.INSTRUCTION_SYSTEM,
                        visret_prompts.instruction_user(query), parse, rule, notices,
                        json_schema=schemas.schema_for(schemas.VisualInstructionReply))
    if source == "llm":
        log.info("visualization instruction written by %s: %s", llm.model_id, value.descriptions)
        notices.append(f"visualization instruction: written by {model_label(llm)}: "
                       + " | ".join(f"\"{d}\"" for d in value.descriptions))
    return value


# ---- structured rerank --------------------------------------------------------------------------------------
def expert_context(llm, query: str, notices: list[str], *, book: RuleBook = GENERIC) -> str:
    """Notes on what the request's organism looks like. A model's notes are cut to what passes the checks
    (llm_checks.clean_context: repeats, a sentence cut off, sentences about other organisms) and labelled, in one
    notice, as written by the model and not checked against a source; nothing left is a refusal (the rule)."""
    cuts: list[str] = []

    def parse(text: str, strict: bool = True) -> str | None:
        t = text
        if strict:
            t, found = checks.clean_context(query, text, book)
            cuts[:] = found
        t = _one_line(t)
        if not 3 <= len(t.split()) <= 200:
            return None
        checks.require_subject("expert context", query, t)
        return t

    def rule() -> str:
        v = rules.context(query, book)  # the rule's notes name the look-alikes the field guide lists: not cut
        return checked_rule("expert context", v, v, checked("expert context", lambda text: parse(text, False)),
                            notices)

    note_model(llm, notices)
    value, source = ask(llm, "expert context", rerank_prompts.CONTEXT_SYSTEM, rerank_prompts.context_user(query),
                        parse, rule, notices, max_tokens=200)
    if source == "llm":
        note = f"expert context: written by {model_label(llm)}, not checked against a source"
        if cuts:
            log.info("expert context from %s: cut %s", llm.model_id, "; ".join(cuts))
            note += "; cut from it: " + "; ".join(cuts)
        notices.append(note)
    return value


def subquestions(llm, query: str, context: str, n: int, notices: list[str], *,
                 book: RuleBook = GENERIC) -> list[str]:
    """n yes/no questions, the first about the subject. The schema asks for yes/no questions (for a model too
    small to stay on topic, `own_words`, only in the request's words). Questions that fail the checks are
    dropped; a model left with fewer than n usable different questions keeps those, and the rule adds the
    rest, with a notice."""
    n = max(2, min(3, int(n)))
    short: list[int] = []
    dropped: list[str] = []

    def parse(text: str, strict: bool = True) -> list[str] | None:
        reply = schemas.SubQuestionsReply.model_validate(parse_json(text))
        qs = _strings(reply.questions, 1, 10 * n, max_words=30)
        if not qs:
            return None
        qs = [q if q.endswith("?") else q.rstrip(".") + "?" for q in qs]
        qs = [q for i, q in enumerate(qs) if q.lower() not in (p.lower() for p in qs[:i])]  # no repeats
        if strict:
            dropped.clear()
            qs = checks.usable_subquestions(query, context, qs, dropped, book)
        qs = qs[:n]
        if len(qs) < n:
            short.append(len(qs))
            seen = {q.lower() for q in qs}
            extra = rules.subquestions(query, n + len(qs), book)
            extra = extra[1:] + extra[:1]  # the model's first question already asks for the subject
            qs += [q for q in extra if q.lower() not in seen][:n - len(qs)]
        return qs

    def rule() -> list[str]:
        v = rules.subquestions(query, n, book)
        # the rule may word questions in the world's own lexicon ("Is it flying?" for "in flight"), so they are
        # checked for shape, not for the request's own words
        return checked_rule("sub-questions", v, json.dumps({"questions": v}),
                            checked("sub-questions", lambda text: parse(text, strict=False)), notices)

    note_model(llm, notices)
    words = checks.request_vocabulary(query) if backend_attr(llm, "own_words", False) else None
    schema = schemas.schema_for(schemas.SubQuestionsReply, items={"questions": (n, n)}, echo=" ".join(query.split()),
                                patterns={"questions": schemas.yes_no_pattern(words)})
    value, source = ask(llm, "sub-questions", rerank_prompts.SUBQ_SYSTEM.format(n=n),
                        rerank_prompts.subq_user(query, context), parse, rule, notices, json_schema=schema)
    if source == "llm":
        note = f"sub-questions: written by {model_label(llm)}"
        if dropped:
            note += "; refused " + "; ".join(dropped)
        if short:
            note += f"; {short[0]} usable different question(s) were left, the offline rule added the rest"
        notices.append(note)
    return value


# ---- Pareto coverage ------------------------------------------------------------------------------------------
def decompose(llm, query: str, notices: list[str], limit: int = MAX_SUBQUERIES, *,
              book: RuleBook = GENERIC) -> list[SubQuery]:
    invented: list[str] = []

    def parse(text: str, strict: bool = True) -> list[SubQuery] | None:
        reply = schemas.DecompositionReply.model_validate(parse_json(text))
        out = []
        for p in reply.parts:
            t = _one_line(p.text)
            if strict and not checks.from_request_words(t, query):  # a part the user never asked for
                invented.append(t)
                continue
            core = _one_line(p.core)
            core = core if core and checks.from_request_words(core, t) else core_concept(t)
            if t.lower() not in (s.text.lower() for s in out):
                out.append(SubQuery(t, core))
        if not out:
            raise checks.Unusable(f"no part uses the request's words ({'; '.join(invented)})")
        return out[:limit]

    def rule() -> list[SubQuery]:
        subs, split = rules.decomposition(query, limit, book)
        if not split:
            notices.append(rules.CANNOT_SPLIT)
        reply = json.dumps({"parts": [{"text": q.text, "core": q.core} for q in subs]})
        # the rule may add the world's words ("Ember-crested Tuftling with a red crest" for a comparison of
        # crests), so its parts are checked for shape, not for words outside the request
        return checked_rule("query decomposition", subs, reply,
                            checked("query decomposition", lambda text: parse(text, strict=False)), notices)

    note_model(llm, notices)
    value, source = ask(llm, "query decomposition", coverage_prompts.DECOMPOSE_SYSTEM.format(limit=limit),
                        coverage_prompts.decompose_user(query), parse, rule,
                        notices,
                        json_schema=schemas.schema_for(schemas.DecompositionReply, items={"parts": (1, limit)}))
    if source == "llm":  # the parts are searched for: say who wrote them, and what was left out
        note = f"query decomposition: written by {model_label(llm)}"
        if invented:
            note += "; left out parts that are not in the request: " + "; ".join(invented)
        notices.append(note)
    return value


# ---- answer with evidence -------------------------------------------------------------------------------------
def evidence_answer(llm, question: str, notes: list[tuple[int, str]], notices: list[str], *,
                    book: RuleBook = GENERIC) -> dict:
    """{"text", "cited_ids", "verified": False, "by_model"}: the language model's answer as it wrote it (checked
    against its evidence by core/methods/answer_check.py, which alone makes it verified or refuses it), or,
    when no model answered usably, the offline rule's (never verified; `by_model` False)."""
    ids = {pid for pid, _ in notes}

    def parse(text: str) -> dict | None:
        text = text.strip()
        if not text or len(text) > MAX_ANSWER_CHARS:
            return None
        return {"text": text, "cited_ids": checks.cited_ids(text, ids)[0], "verified": False, "by_model": True}

    def rule() -> dict:
        v = rules.answer(question, notes, book)
        out = dict(checked_rule("answer", v, v["text"], parse, notices))
        return {**out, "verified": False, "by_model": False}

    note_model(llm, notices)
    value, _ = ask(llm, "answer", answer_prompts.ANSWER_SYSTEM, answer_prompts.answer_user(question, notes),
                   parse, rule, notices, max_tokens=250)
    return value


# ---- PlugIR -----------------------------------------------------------------------------------------------------
def reformulate(llm, description: str, caption: str, turns: list[tuple[str, str]], notices: list[str], *,
                book: RuleBook = GENERIC) -> str:
    user = plugir_prompts.dialogue_text(description, turns)

    def parse(text: str) -> str | None:
        t = " ".join(text.strip().strip('"').split())
        if not t or len(t.split()) > 80:
            return None
        checks.keeps_subject(description, t, book)
        return t

    def rule() -> str:
        v = rules.reformulate(description, turns, book)
        return checked_rule("reformulation", v, v, checked("reformulation", parse), notices)

    note_model(llm, notices)
    value, source = ask(llm, "reformulation", plugir_prompts.REFORMULATE_SYSTEM, user,
                        parse, rule, notices)
    if source == "llm" and turns and value.strip().lower() == caption.strip().lower():
        value, _ = ask(llm, "reformulation", plugir_prompts.REFORMULATE_SYSTEM,
                       user + "\n" + plugir_prompts.PARAPHRASE_HINT, parse, rule, notices)
    # not labelled with a notice: the dialogue shows its description on screen, and its last notice as a warning
    return value


def propose_questions(llm, caption: str, turns, candidates: list[str], n: int, notices: list[str],
                      temperature: float = 0.7, *, book: RuleBook = GENERIC) -> list[str]:
    asked = {q.strip().lower() for q, _ in turns}

    def parse(text: str) -> list[str] | None:
        reply = schemas.QuestionsReply.model_validate(parse_json(text))
        qs = _strings(reply.questions, 1, 10 * n, max_words=30) or []
        fresh: list[str] = []
        for q in (q if q.endswith("?") else q.rstrip(".") + "?" for q in qs):
            if q.strip().lower() not in asked and q.lower() not in (f.lower() for f in fresh):
                fresh.append(q)
        if not fresh:
            raise checks.Unusable("every proposed question was asked already")
        return fresh[:n]

    def rule() -> list[str]:
        v = rules.questions(caption, turns, candidates, n, book)
        return checked_rule("questioner", v, json.dumps({"questions": v}), checked("questioner", parse), notices)

    note_model(llm, notices)
    value, _ = ask(llm, "questioner", plugir_prompts.questioner_system(n),
                   plugir_prompts.questioner_user(caption, turns, candidates), parse, rule,
                   notices,
                   json_schema=schemas.schema_for(schemas.QuestionsReply, items={"questions": (1, max(1, n))}),
                   temperature=temperature, max_tokens=64 + 32 * max(1, n))
    return value


FILTER_FALLBACK = ("question filter: the caption and dialogue already answer every proposed question; asked the "
                   "offline rule's question instead")


def filter_questions(llm, caption: str, turns, questions: list[str], notices: list[str],
                     candidates: list[str] = (), n: int = 5, *, book: RuleBook = GENERIC) -> list[str]:
    """The questions the caption and dialogue cannot answer ('uncertain') and that were not asked yet. When none
    is left, the deterministic rule's questions (about the retrieval `candidates`) that were neither asked nor
    proposed, with a notice; empty only when the rule has nothing new either."""
    def parse(text: str) -> list[str] | None:
        answers = schemas.FilterReply.model_validate(parse_json(text)).answers
        if len(answers) != len(questions):
            return None
        return [q for q, a in zip(questions, answers) if "uncertain" in str(a).lower()]

    def rule() -> list[str]:
        said = rules.filter_answers(caption, turns, questions, book)
        return checked_rule("question filter", [q for q, a in zip(questions, said) if a == "uncertain"],
                            json.dumps({"answers": said}), parse, notices)

    note_model(llm, notices)
    count = max(1, len(questions))
    kept, _ = ask(llm, "question filter", plugir_prompts.FILTER_SYSTEM,
                  plugir_prompts.filter_user(caption, turns, questions), parse, rule, notices,
                  json_schema=schemas.schema_for(schemas.FilterReply, items={"answers": (count, count)}))
    asked = {q.strip().lower() for q, _ in turns}
    kept = [q for q in kept if q.strip().lower() not in asked]
    if kept or not questions:
        return kept
    seen = asked | {q.strip().lower() for q in questions}
    fresh = [q for q in rules.questions(caption, turns, list(candidates), max(1, n), book)
             if q.strip().lower() not in seen]
    unanswered = rules.uncertain_questions(caption, turns, fresh, book)
    fallback = unanswered or fresh
    if fallback:
        notices.append(FILTER_FALLBACK)
    return fallback
