"""Answer accuracy (`app.py eval --answers`), as VisRet evaluates Visual-RAG and Visual-RAG-ME: each question
is answered from the top-k photos of a method's ranking (Visual-RAG-ME: the top k of each organism's ranking,
one answer per row), and an LLM judge scores the answer 0-1 against the benchmark's reference answers.
With the offline rule LLM, a keyword-overlap judge stands in and the report names it as a stand-in. A language
model below the answer judge's capability floor (the per-model fact `answer_judge`, core/backends/model_facts.py)
is not a valid judge: the answers are written and kept, but none is scored and no accuracy is reported."""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.evaluation.items import EvalItem
from core.evaluation.runner import EvalResult
from core.methods.decompose import tokens
from core.methods.llm_call import ask, backend_attr, model_label, parse_json
from core.prompts import answer as prompts

log = logging.getLogger(__name__)
STANDIN_JUDGE = "keyword-overlap judge (offline stand-in for the LLM judge)"


@dataclass
class AnswerUnit:
    """One question to answer: its reference answers and the items whose rankings supply the photos."""

    uid: str
    question: str
    reference: list[str]
    qids: list[str] = field(default_factory=list)
    all_needed: bool = False  # one reference answer per organism (a comparison row): all of them are needed


def references_of(item: EvalItem) -> list[str]:
    raw = item.extra.get("answer")
    if isinstance(raw, str):
        raw = [raw]
    return [str(a).strip() for a in (raw or []) if str(a).strip()]


def answer_units(items: Sequence[EvalItem]) -> list[AnswerUnit]:
    """Items with reference answers; the two items of a Visual-RAG-ME row form one unit (one answer). A row
    whose reference lists exactly one answer per organism (the field guide's) needs all of them; a list of
    other length holds alternatives (Visual-RAG: any one is enough)."""
    units: dict[str, AnswerUnit] = {}
    for it in items:
        ref = references_of(it)
        if not ref:
            continue
        pair = it.kind in ("entity_1", "entity_2") or str(it.extra.get("subset_kind", "")) in ("entity_1", "entity_2")
        uid = str(it.extra.get("row") or it.qid) if pair else it.qid
        units.setdefault(uid, AnswerUnit(uid, it.query, ref, all_needed=pair and len(ref) == 2)).qids.append(it.qid)
    return list(units.values())


def keyword_score(question: str, reference: Sequence[str], answer: str,
                  all_needed: bool = False) -> tuple[float, str]:
    """The stand-in judge: for each reference answer, the share of its words (other than the question's own)
    that the answer contains; the best reference counts (any one acceptable answer is enough), or with
    `all_needed` the mean over the references (one per organism)."""
    have, asked = set(tokens(answer)), set(tokens(question))
    shares = []
    for ref in reference:
        words = set(tokens(ref))
        content = (words - asked) or words
        shares.append(len(content & have) / len(content) if content else 0.0)
    if not shares:
        return 0.0, "no reference answer"
    if all_needed:
        score = sum(shares) / len(shares)
        return round(score, 4), f"{score:.2f}: mean share of each organism's reference words found"
    best = max(range(len(shares)), key=shares.__getitem__)
    return round(shares[best], 4), f"{shares[best]:.2f} of the words of '{reference[best]}' found"


def judge_answer(llm, question: str, reference: Sequence[str], answer: str, notices: list[str],
                 all_needed: bool = False) -> tuple[float, str, str]:
    """(score 0-1, reason, "llm" | "rule") from the LLM judge, or the keyword stand-in when it is unusable."""
    def parse(text: str) -> tuple[float, str] | None:
        data = parse_json(text)
        score = float(data.get("score"))
        return (min(1.0, max(0.0, score)), str(data.get("reason", ""))[:200]) if score == score else None

    (score, reason), source = ask(llm, "answer judge", prompts.JUDGE_SYSTEM,
                                  prompts.judge_user(question, reference, answer, all_needed), parse,
                                  lambda: keyword_score(question, reference, answer, all_needed), notices,
                                  json_schema={"type": "object"}, max_tokens=120)
    return score, reason, source


def judge_validity(llm) -> tuple[bool, str]:
    """(valid, why) for `llm` as the answer judge: the stand-in keyword judge is valid for what it measures
    (shared words); a model whose facts put it below the capability floor is not a valid judge; one the facts
    know nothing of is used, and the report says its size was not checked."""
    if llm.is_standin:
        return True, "a keyword-overlap stand-in: its accuracy is the share of the reference's words the answer holds"
    facts = backend_attr(llm, "facts", None)
    name = model_label(llm)
    if facts is not None and facts.answer_judge is False:
        return False, (f"below the capability floor of an answer judge (model facts: {facts.matched}); such a "
                       "model grades without reading the answer, so its scores are not results")
    if facts is None or facts.answer_judge is None:
        return True, f"{name}: nothing says whether it is above the capability floor of an answer judge"
    return True, ""


def answer_evaluator(engine, k: int = 5) -> Callable[[EvalResult], dict[str, Any]]:
    """A function result -> the report's answer block: {"k", "reader", "judge", "methods": {method:
    {"accuracy", "n", "failed"}}, "per_question": [...], "notes": [...]}."""
    def evaluate_answers(result: EvalResult) -> dict[str, Any]:
        units = answer_units(result.items)
        llm = engine.backends.llm
        reader = engine.backends.reader
        block: dict[str, Any] = {
            "k": k, "unit_note": "per organism for Visual-RAG-ME rows, which get one answer each",
            "reader": (reader.model_id + (" (stand-in)" if reader.is_standin else "")) if reader is not None
            else f"photo notes read by {llm.model_id}" + (" (stand-in)" if llm.is_standin else ""),
            "judge": STANDIN_JUDGE if llm.is_standin else llm.model_id, "methods": {}, "per_question": [],
            "notes": []}
        valid, why = judge_validity(llm)
        block["judge_valid"], block["judge_caveat"] = valid, why
        if not units:
            block["notes"].append("the benchmark gives no reference answers for the evaluated items, so no "
                                  "answer was scored")
            return block
        notes: list[str] = []
        for method in result.methods:
            scores, failed = [], 0
            for u in units:
                ids: list[int] = []
                for q in u.qids:
                    ids += result.photo_ids.get(method, {}).get(q, [])[:k]
                ids = list(dict.fromkeys(ids))
                if not ids:  # the method returned nothing for this question: scored 0, counted
                    failed += 1
                    scores.append(0.0)
                    block["per_question"].append({"method": method, "uid": u.uid, "score": 0.0,
                                                  "error": "no photo retrieved"})
                    continue
                ans = engine.answer(u.question, ids, limit=len(ids))
                notes += [n for n in ans.get("notices", []) if n not in notes]
                if valid:
                    score, reason, source = judge_answer(llm, u.question, u.reference, ans.get("text", ""), notes,
                                                         u.all_needed)
                    scores.append(score)
                else:
                    score, reason, source = None, "not scored: " + why, "not a valid judge"
                block["per_question"].append({
                    "method": method, "uid": u.uid, "question": u.question, "reference": u.reference,
                    "answer": ans.get("text", ""), "cited_ids": ans.get("cited_ids", []),
                    "answer_source": ans.get("source"), "score": score, "reason": reason, "judged_by": source})
            block["methods"][method] = {"accuracy": sum(scores) / len(scores) if valid else None, "n": len(units),
                                        "failed": failed}
        block["notes"] = notes
        if valid:
            log.info("answer accuracy: %s", {m: round(v["accuracy"], 3) for m, v in block["methods"].items()})
        else:
            log.warning("answer accuracy not reported: %s is not a valid judge: %s", llm.model_id, why)
        return block
    return evaluate_answers
