"""Every text-LLM task of the methods: prompt (core/prompts/*), parse + validate, and a deterministic rule.

Each task returns (value, source) with source "llm" or "rule". An LLM that fails, returns nothing or
returns something unusable is replaced by the rule and a notice is added; the offline 'rule' LLM (a stand-in
that always answers "") means "use the rule" and adds no notice."""
from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from core.backends.base import ChatMessage
from core.methods import rules
from core.methods.decompose import MAX_SUBQUERIES, SubQuery, core_concept
from core.prompts import answer as answer_prompts
from core.prompts import coverage as coverage_prompts
from core.prompts import plugir as plugir_prompts
from core.prompts import rerank as rerank_prompts
from core.prompts import visret as visret_prompts

log = logging.getLogger(__name__)


@dataclass
class Instruction:
    """VisRet's picture description(s): one per organism for comparisons, else one."""

    kind: str  # feature | comparison | scene
    descriptions: list[str]
    organisms: list[str] = field(default_factory=list)
    source: str = "rule"

    def to_json(self) -> dict:
        return asdict(self)


def short_error(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def ask(llm, task: str, system: str, user: str, parse: Callable[[str], Any], rule: Callable[[], Any],
        notices: list[str], *, json_schema: dict | None = None, max_tokens: int = 300,
        temperature: float = 0.0) -> tuple[Any, str]:
    """Run one LLM task with its rule as the fallback."""
    try:
        text = llm.chat([ChatMessage("system", system), ChatMessage("user", user)], temperature=temperature,
                        max_tokens=max_tokens, json_schema=json_schema)
    except Exception as exc:  # any backend failure downgrades to the rule
        notices.append(f"{task}: the language model failed ({short_error(exc)}); used the offline rule instead")
        return rule(), "rule"
    if not (text or "").strip():
        if not llm.is_standin:
            notices.append(f"{task}: the language model returned nothing; used the offline rule instead")
        return rule(), "rule"
    try:
        value = parse(text)
    except (ValueError, KeyError, TypeError, AttributeError):
        value = None
    if value is None:
        notices.append(f"{task}: the language model's answer was unusable; used the offline rule instead")
        return rule(), "rule"
    return value, "llm"


def checked_rule(task: str, value: Any, reply: str, parse: Callable[[str], Any], notices: list[str]) -> Any:
    """The offline rule's answer, written out as an LLM reply and read back by the task's own parser, so rule
    answers pass the same checks as LLM answers. A rule answer the checks reject is still used (there is
    nothing better), with a notice and a log line."""
    try:
        parsed = parse(reply)
    except (ValueError, KeyError, TypeError, AttributeError):
        parsed = None
    if parsed is None:
        log.error("%s: the offline rule's answer failed the task's checks: %r", task, reply)
        notices.append(f"{task}: the offline rule's answer failed the checks; used it as it is")
        return value
    return parsed


def parse_json(text: str) -> Any:
    """The first JSON object in `text` (code fences and chatter around it are ignored)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object")
    return json.loads(text[start:end + 1])


def _strings(value: Any, lo: int, hi: int, max_words: int = 80) -> list[str] | None:
    if not isinstance(value, list):
        return None
    out = [" ".join(str(v).split()) for v in value if isinstance(v, str) and v.strip()]
    out = [s for s in out if len(s.split()) <= max_words]
    return out[:hi] if len(out) >= lo else None


# ---- VisRet instruction (also the rewrite baseline's text) -------------------------------------------------
def visual_instruction(llm, query: str, notices: list[str]) -> Instruction:
    def parse(text: str) -> Instruction | None:
        data = parse_json(text)
        kind = str(data.get("kind", "scene")).lower()
        descs = _strings(data.get("descriptions"), 1, 2, max_words=60)
        if not descs or kind not in ("feature", "comparison", "scene"):
            return None
        if kind == "comparison" and len(descs) != 2:
            return None
        organisms = (rules.comparison_organisms(query) or []) if kind == "comparison" else []
        return Instruction(kind, descs if kind == "comparison" else descs[:1], organisms, "llm")

    def rule() -> Instruction:
        v = rules.instruction(query)
        reply = json.dumps({"kind": v.kind, "descriptions": v.descriptions})
        out = checked_rule("visualization instruction", v, reply, parse, notices)
        return Instruction(out.kind, out.descriptions, v.organisms, "rule")

    value, _ = ask(llm, "visualization instruction", visret_prompts.INSTRUCTION_SYSTEM,
                   visret_prompts.instruction_user(query), parse, rule, notices,
                   json_schema={"type": "object"})
    return value


# ---- structured rerank --------------------------------------------------------------------------------------
def expert_context(llm, query: str, notices: list[str]) -> str:
    def parse(text: str) -> str | None:
        t = " ".join(text.split())
        return t if 3 <= len(t.split()) <= 200 else None

    def rule() -> str:
        v = rules.context(query)
        return checked_rule("expert context", v, v, parse, notices)

    value, _ = ask(llm, "expert context", rerank_prompts.CONTEXT_SYSTEM, rerank_prompts.context_user(query), parse,
                   rule, notices, max_tokens=200)
    return value


def subquestions(llm, query: str, context: str, n: int, notices: list[str]) -> list[str]:
    n = max(2, min(3, int(n)))

    def parse(text: str) -> list[str] | None:
        qs = _strings(parse_json(text).get("questions"), 2, n, max_words=30)
        return [q if q.endswith("?") else q.rstrip(".") + "?" for q in qs] if qs else None

    def rule() -> list[str]:
        v = rules.subquestions(query, n)
        return checked_rule("sub-questions", v, json.dumps({"questions": v}), parse, notices)

    value, _ = ask(llm, "sub-questions", rerank_prompts.SUBQ_SYSTEM.format(n=n),
                   rerank_prompts.subq_user(query, context), parse, rule, notices,
                   json_schema={"type": "object"})
    return value


# ---- Pareto coverage ------------------------------------------------------------------------------------------
def decompose(llm, query: str, notices: list[str], limit: int = MAX_SUBQUERIES) -> list[SubQuery]:
    def parse(text: str) -> list[SubQuery] | None:
        parts = parse_json(text).get("parts")
        out = []
        for p in parts if isinstance(parts, list) else []:
            t = " ".join(str(p.get("text", "") if isinstance(p, dict) else p).split())
            if t:
                core = " ".join(str(p.get("core", "")).split()) if isinstance(p, dict) else ""
                out.append(SubQuery(t, core or core_concept(t)))
        return out[:limit] or None

    def rule() -> list[SubQuery]:
        subs, split = rules.decomposition(query, limit)
        if not split:
            notices.append(rules.CANNOT_SPLIT)
        reply = json.dumps({"parts": [{"text": q.text, "core": q.core} for q in subs]})
        return checked_rule("query decomposition", subs, reply, parse, notices)

    value, _ = ask(llm, "query decomposition", coverage_prompts.DECOMPOSE_SYSTEM.format(limit=limit),
                   coverage_prompts.decompose_user(query), parse, rule, notices,
                   json_schema={"type": "object"})
    return value


# ---- answer with evidence -------------------------------------------------------------------------------------
def evidence_answer(llm, question: str, notes: list[tuple[int, str]], notices: list[str]) -> dict:
    ids = {pid for pid, _ in notes}

    def parse(text: str) -> dict | None:
        text = text.strip()
        cited = [int(x) for x in re.findall(r"\[(\d+)\]", text) if int(x) in ids]
        return {"text": text, "cited_ids": sorted(set(cited), key=cited.index), "verified": True} if text else None

    def rule() -> dict:
        v = rules.answer(question, notes)
        out = checked_rule("answer", v, v["text"], parse, notices)
        return {**out, "verified": False}

    value, _ = ask(llm, "answer", answer_prompts.ANSWER_SYSTEM, answer_prompts.answer_user(question, notes), parse,
                   rule, notices, max_tokens=250)
    return value


# ---- PlugIR -----------------------------------------------------------------------------------------------------
def reformulate(llm, description: str, caption: str, turns: list[tuple[str, str]], notices: list[str]) -> str:
    user = plugir_prompts.dialogue_text(description, turns)

    def parse(text: str) -> str | None:
        t = " ".join(text.strip().strip('"').split())
        return t if t and len(t.split()) <= 80 else None

    def rule() -> str:
        v = rules.reformulate(description, turns)
        return checked_rule("reformulation", v, v, parse, notices)

    value, source = ask(llm, "reformulation", plugir_prompts.REFORMULATE_SYSTEM, user, parse, rule, notices)
    if source == "llm" and turns and value.strip().lower() == caption.strip().lower():
        value, _ = ask(llm, "reformulation", plugir_prompts.REFORMULATE_SYSTEM,
                       user + "\n" + plugir_prompts.PARAPHRASE_HINT, parse, rule, notices)
    return value


def propose_questions(llm, caption: str, turns, candidates: list[str], n: int, notices: list[str],
                      temperature: float = 0.7) -> list[str]:
    def parse(text: str) -> list[str] | None:
        return _strings(parse_json(text).get("questions"), 1, n, max_words=30)

    def rule() -> list[str]:
        v = rules.questions(caption, turns, candidates, n)
        return checked_rule("questioner", v, json.dumps({"questions": v}), parse, notices)

    value, _ = ask(llm, "questioner", plugir_prompts.questioner_system(n),
                   plugir_prompts.questioner_user(caption, turns, candidates), parse, rule, notices,
                   json_schema={"type": "object"}, temperature=temperature, max_tokens=64 + 32 * max(1, n))
    return value


def filter_questions(llm, caption: str, turns, questions: list[str], notices: list[str],
                     candidates: list[str] = (), n: int = 5) -> list[str]:
    """The questions the caption and dialogue cannot answer ('uncertain') and that were not asked yet. When none
    is left, the deterministic rule's questions (about the retrieval `candidates`) that were neither asked nor
    proposed, with a notice; empty only when the rule has nothing new either."""
    def parse(text: str) -> list[str] | None:
        answers = parse_json(text).get("answers")
        if not isinstance(answers, list) or len(answers) != len(questions):
            return None
        return [q for q, a in zip(questions, answers) if "uncertain" in str(a).lower()]

    def rule() -> list[str]:
        said = rules.filter_answers(caption, turns, questions)
        return checked_rule("question filter", [q for q, a in zip(questions, said) if a == "uncertain"],
                            json.dumps({"answers": said}), parse, notices)

    kept, _ = ask(llm, "question filter", plugir_prompts.FILTER_SYSTEM,
                  plugir_prompts.filter_user(caption, turns, questions), parse, rule, notices,
                  json_schema={"type": "object"})
    asked = {q.strip().lower() for q, _ in turns}
    kept = [q for q in kept if q.strip().lower() not in asked]
    if kept or not questions:
        return kept
    seen = asked | {q.strip().lower() for q in questions}
    fresh = [q for q in rules.questions(caption, turns, list(candidates), max(1, n)) if q.strip().lower() not in seen]
    unanswered = rules.uncertain_questions(caption, turns, fresh)
    fallback = unanswered or fresh
    if fallback:
        notices.append("question filter: the caption and dialogue already answer every proposed question; asked "
                       "the offline rule's question instead")
    return fallback
