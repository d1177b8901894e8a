"""Structured reranking (methods.md 3): expert context, yes/no sub-questions, judging of each candidate,
confidence from Yes/No log-probabilities, mean score x 100.

Modes as the paper compares them: "full" chains the sub-questions (each carries this photo's earlier answers),
"subq" (sub-questions only) answers each one independently, "direct" and "context" ask one question. With
several votes, the majority yes/no answer wins and its confidence is the mean p_yes of the votes that gave it.

Photos are judged concurrently (settings.judge_concurrency); questions of one photo run in order. Results
stream as events. Photos the judge fails on follow the judged ones in first-stage order.

Abstentions (core/backends/reach.py): a question the judge could not answer from a photo is "not checked",
neither pass nor fail: it counts as undecided (p(yes) 0.5) in the photo's score, which stays the share of the
questions asked that passed (with no abstention, the paper's mean over all), so a photo shows 100 only when
every check was made and passed. A photo with no check made has no score (it is not on the checks scale) and
follows the scored ones in first-stage order. What no check covered (the judge's unseen parts of the query
and of its questions, the parts of the query no question asks about) is named in one notice.

Catalog facts (core/methods/catalog_evidence.py, settings.catalog_evidence): a question that asks only what the
catalog records is answered from the photo's fields when it has them (p_yes 1.0 or 0.0, reason "catalog: ..."),
from the picture when it lacks them. The catalog's certainty orders the photos before their scores do
(`catalog_tier`): photos it confirms, then photos whose catalog question was read from the picture, then photos
it contradicts.

The search's time limit (core.methods.deadline): once it has passed no photo is sent to the judge; photos
not checked by then follow the checked ones in first-stage order ("out_of_time" in the stage), and one
notice names the limit and the judge that took the time."""
from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any, Sequence

from core.backends.base import JudgeRequest
from core.backends.reach import NOT_CHECKED, merge, notice_text
from core.contracts.cancel import SearchCancelled
from core.contracts.errors import BackendUnavailable, BudgetExceeded, DeadlinePassed
from core.contracts.events import PhotoJudged
from core.contracts.world import GENERIC, RuleBook
from core.methods.cache import CacheMiss, judge_prompt_version
from core.methods.cache_keys import key_of
from core.methods.catalog_evidence import CatalogEvidence, plan_evidence, summary
from core.methods.catalog_evidence import notice_text as catalog_notice
from core.methods.confidence import YES, p_yes, verdict
from core.methods.deadline import backend_where, in_context
from core.methods.llm_call import short_error
from core.methods.llm_tasks import expert_context, subquestions
from core.methods.run import Run
from core.prompts.rerank import direct_question

log = logging.getLogger(__name__)
MODES = ("direct", "subq", "context", "full")
PICTURE = "read from the picture:"  # how a reason says the judge looked at the photo
PASS = 0.5  # a tied vote goes to "yes" when the mean p(yes) of all votes is at least this


def plan(run: Run, query: str, mode: str) -> tuple[str, list[str]]:
    """(expert context, questions) for a mode."""
    llm, s = run.backends.llm, run.settings
    context = expert_context(llm, query, run.notices, book=run.book) if mode in ("context", "full") else ""
    if mode in ("direct", "context"):
        return context, [direct_question(query)]
    return context, subquestions(llm, query, context, s.rerank_subquestions, run.notices, book=run.book)


class _Loader:
    """Reads a photo once, on first need (cache hits never read it)."""

    def __init__(self, run: Run, photo):
        self.run, self.photo, self.image, self.lock = run, photo, None, threading.Lock()

    def __call__(self):
        with self.lock:
            if self.image is None:
                self.image = self.run.corpus.load_image(self.photo)
            return self.image


def chained(mode: str) -> bool:
    """Whether a mode carries each photo's earlier answers into its next question (only "full" does)."""
    return mode == "full"


def majority(words: Sequence[str], ps: Sequence[float]) -> tuple[str, float, int]:
    """Majority vote of yes/no answers: (winning word, mean p_yes of the votes that gave it, index of its first
    vote). A tie (even number of votes) goes to the side the mean p_yes of all votes favours."""
    norm = [w.strip().lower() for w in words]
    counts = Counter(norm)
    top = max(counts.values())
    leaders = sorted(w for w, c in counts.items() if c == top)
    if len(leaders) > 1:
        mean = sum(ps) / len(ps)
        word = "yes" if mean >= PASS and "yes" in leaders else ("no" if "no" in leaders else leaders[0])
    else:
        word = leaders[0]
    mine = [p for w, p in zip(norm, ps) if w == word]
    return word, sum(mine) / len(mine), norm.index(word)


def judge_photo(run: Run, judge, photo, query: str, context: str, questions: Sequence[str],
                votes: int, cache_only: bool = False, chain: bool = True,
                evidence: CatalogEvidence | None = None) -> dict[str, Any]:
    """Answers for one photo. Chained (`chain`): each question sees this photo's earlier (question, answer)
    pairs; else every question is asked on its own. With `evidence`, a question the photo's catalog fields
    answer is not sent to the judge; one whose field the photo lacks is, and its reason says so."""
    photo, load = run.judged_view(photo, _Loader(run, photo))  # the animal's crop when matched through it
    history: list[tuple[str, str]] = []
    answers = []
    for i, q in enumerate(questions):
        run.check()
        said = evidence.verdict(photo, i) if evidence is not None else None
        if said is not None and said.outcome in ("yes", "no"):
            answers.append({"question": q, "answer": said.outcome, "p_yes": 1.0 if said.outcome == "yes" else 0.0,
                            "checked": True, "reason": said.reason, "source": "catalog"})
        else:
            got = [judge.ask(JudgeRequest(image=None, question=q, query=query, context=context,
                                          history=tuple(history) if chain else (), photo=photo, vote=v),
                             load=load, cache_only=cache_only)
                   for v in range(votes)]
            answers.append(answer_entry(q, got, run.settings.undecided_band))
            if said is not None:  # a catalog question, but this photo lacks the field: read from the picture
                seen = str(answers[-1]["reason"] or "").removeprefix(PICTURE).strip() or "no reason given"
                answers[-1]["reason"] = f"{said.reason}, so it was {PICTURE} {seen}"
                answers[-1]["source"] = "picture"
        history.append((q, answers[-1].get("judge_answer", answers[-1]["answer"])))
    return {"id": photo.id, "answers": answers, "score": photo_score(answers),
            "checks_made": sum(1 for a in answers if made(a)), "checks_asked": len(answers)}


def answer_entry(question: str, got: Sequence[Any], band: float) -> dict[str, Any]:
    """One question's entry from its votes (JudgeAnswers): the verdict ("yes", "no", or "can't tell" when
    p(yes) is within `band` of 0.5: setting undecided_band), the judge's own majority word (judge_answer), its
    confidence and reason. When the abstentions win the vote the entry is "not checked": no confidence, and
    the parts the judge named."""
    words = [NOT_CHECKED if getattr(a, "abstained", False) else a.answer for a in got]
    ps = [0.0 if getattr(a, "abstained", False) else p_yes(a.top_logprobs) for a in got]
    word, p, first = majority(words, ps)
    votes = {"votes": words} if len(got) > 1 else {}
    if word == NOT_CHECKED:
        return {"question": question, "answer": NOT_CHECKED, "p_yes": None, "checked": False,
                "unchecked": list(getattr(got[first], "unchecked", ()) or ()), "reason": got[first].reason, **votes}
    p = round(p, 6)
    return {"question": question, "answer": verdict(p, band), "judge_answer": word, "p_yes": p, "checked": True,
            "reason": got[first].reason, **votes}


def catalog_tier(result: dict[str, Any]) -> int:
    """Where catalog facts put a judged photo before its score counts: 0 when the catalog confirms every question
    it could answer (or none was a catalog question), 1 when such a question was only read from the picture (the
    photo lacks the field), 2 when the catalog contradicts a question (a catalogued look-alike)."""
    answers = result.get("answers") or []
    if any(a.get("source") == "catalog" and a.get("answer") == "no" for a in answers):
        return 2
    return 1 if any(a.get("source") == "picture" for a in answers) else 0


UNMADE_CHECK = 0.5  # a check that could not be made counts as undecided: neither a pass nor a fail


def made(answer: dict[str, Any]) -> bool:
    """Whether this check was made (by the judge or the catalog): it has a p(yes)."""
    return answer.get("checked", True) is not False and answer.get("p_yes") is not None


def photo_score(answers: Sequence[dict[str, Any]]) -> float | None:
    """100 x the share of the questions asked that passed (methods.md 3.5): each check made counts its p(yes),
    each check that could not be made counts as undecided (UNMADE_CHECK), so 100 means every check was made
    and passed surely; None when no check was made (the photo is not on the checks scale)."""
    if not any(made(a) for a in answers):
        return None
    ps = [float(a["p_yes"]) if made(a) else UNMADE_CHECK for a in answers]
    return round(100.0 * sum(ps) / len(ps), 4)


def _completed(run: Run, futures, timeout: float):
    """Futures as they finish, stopping quietly at the timeout; SearchCancelled as soon as the run is."""
    end = time.monotonic() + timeout
    pending = set(futures)
    while pending:
        run.check()
        left = end - time.monotonic()
        if left <= 0:
            return
        done, pending = wait(pending, timeout=min(0.25, left), return_when=FIRST_COMPLETED)
        yield from done


def passed(photo: dict[str, Any]) -> bool:
    """Every checked question of this photo has the verdict yes (a "can't tell" inside the undecided band is
    not a yes), and at least one was checked (a "not checked" answer is neither a pass nor a fail)."""
    answers = [a for a in photo.get("answers") or [] if made(a)]
    return bool(answers) and all(a.get("answer") == YES for a in answers)


def unchecked_parts(judge, query: str, questions: Sequence[str], photos: Sequence[dict[str, Any]],
                    book: RuleBook = GENERIC) -> list[str]:
    """What no check covered, in order: the parts of the query the judge says it cannot see, the parts its
    answers named as not checked, and the parts of the query no question asks about (where the world's rule
    book, `book`, can tell)."""
    unseen = getattr(judge, "unseen", None)
    found = [list(unseen(query)) if callable(unseen) else []]
    found += [a.get("unchecked") or [] for p in photos for a in p.get("answers") or [] if not a.get("checked", True)]
    found.append(book.uncovered(query, list(questions)))
    return merge(found)


def _abstention_notice(run: Run, judge, query: str, questions: Sequence[str], results: dict[int, dict],
                       stage: dict[str, Any]) -> None:
    """One notice for the whole search naming what was not checked (and how many answers the judge left
    undecided without naming a part); the stage keeps both."""
    photos = list(results.values())
    parts = unchecked_parts(judge, query, questions, photos, run.book)
    answers = [a for p in photos for a in p.get("answers") or []]
    unnamed = sum(1 for a in answers if not a.get("checked", True) and not a.get("unchecked"))
    stage["unchecked"], stage["not_checked_answers"] = parts, sum(1 for a in answers if not a.get("checked", True))
    if not parts and not unnamed:
        return
    text = notice_text(parts) if parts else "not checked by the photo checker"
    not_used = str(getattr(judge, "not_used", "") or "")
    if unnamed and unnamed == len(answers) and not_used:
        # a judge whose checks are not used (core.search.model_checkup): its one reason, not "neither yes nor no"
        text += f"{';' if parts else ':'} none of the {len(answers)} answers ({not_used.rstrip('.')})"
    elif unnamed:
        text += (f"{';' if parts else ':'} {unnamed} of {len(answers)} answers, where it could say neither yes nor "
                 "no (each counted as undecided, 50%: neither pass nor fail)")
    log.warning("rerank %r with judge %s: %s", query, judge.model_id, text)
    run.notice(text)


def run_rerank(run: Run, query: str, candidates: Sequence[tuple[int, float]], mode: str,
               votes: int = 1) -> tuple[list[tuple[int, float]], dict[str, Any]]:
    """Reorder `candidates` (first-stage order) by the judge; returns ranked (id, score) and the artefacts."""
    judge = run.backends.judge_for(run.budget)
    if run.deadline.passed():  # nothing is asked: not even the questions are written
        run.out_of_time(f"the {len(candidates)} photos were not checked by {backend_where(run.settings, 'judge')} "
                        "and keep their first-stage order")
        return list(candidates), {
            "mode": mode, "context": "", "subquestions": [], "k": len(candidates), "votes": votes, "photos": [],
            "judged": 0, "failed": 0, "skipped": 0, "paused": 0, "out_of_time": len(candidates),
            "order": "first-stage", "chained": chained(mode), "judge": judge.model_id, "passed": 0, "scored": 0,
            "unchecked": [], "not_checked_answers": 0}
    with run.timed("rerank_plan"):
        context, questions = plan(run, query, mode)
    stage: dict[str, Any] = {"mode": mode, "context": context, "subquestions": questions, "k": len(candidates),
                             "votes": votes, "photos": [], "judged": 0, "failed": 0, "skipped": 0, "paused": 0,
                             "out_of_time": 0, "order": "judge", "chained": chained(mode)}
    first_rank = {pid: r for r, (pid, _) in enumerate(candidates)}
    first_score = dict(candidates)
    stage["judge"] = judge.model_id
    ask = (query, context, questions, votes)
    chain = chained(mode)
    evidence, read = plan_evidence(run, questions, [pid for pid, _ in candidates])
    stage["catalog_evidence"] = {"on": run.settings.catalog_evidence,
                                 "topics": evidence.describe() if evidence is not None else []}
    # catalog ids are never reused for other pictures, so ids identify the candidates within one data dir; what
    # the catalog says to the questions is part of the key, so an edited catalog is not answered from the memo
    memo_key = key_of("rerank-stage", judge.model_id, judge_prompt_version(judge), [pid for pid, _ in candidates],
                      *ask, "chained" if chain else "independent", "majority-vote", "abstentions", "unmade-counts-0.5",
                      evidence.signature(read) if evidence is not None else "no-catalog-evidence",
                      f"undecided-band {run.settings.undecided_band}")
    memo = run.backends.cache.get_json("rerank_stage", memo_key) or {}
    if read:
        photos = {p.id: p for p in read}
    elif all(str(pid) in memo for pid, _ in candidates):
        photos = {pid: None for pid, _ in candidates}  # everything is remembered: no catalog read needed
    else:
        photos = {p.id: p for p in run.photos([i for i, _ in candidates])}
    order_ids = [pid for pid, _ in candidates if pid in photos]
    results: dict[int, dict] = {}
    errors: list[str] = []
    todo = []

    def take(pid: int, res: dict) -> None:
        res["first_rank"] = first_rank[pid] + 1
        res["first_score"] = round(float(first_score[pid]), 6)
        results[pid] = res
        run.emit(PhotoJudged(dict(res), len(results), len(order_ids)))

    with run.timed("rerank"):
        for pid in order_ids:  # photos fully answered in the cache need no thread and no image
            try:
                take(pid, memo[str(pid)] if str(pid) in memo else
                     judge_photo(run, judge, photos[pid], *ask, cache_only=True, chain=chain, evidence=evidence))
            except CacheMiss:
                todo.append(pid)
        _judge_concurrently(run, judge, photos, todo, ask, take, errors, stage, chain, evidence)
    stage["judged"], stage["failed"] = len(results), len(errors)
    if not errors and not stage["skipped"] and len(results) == len(order_ids) and len(memo) != len(order_ids):
        run.backends.cache.put_json("rerank_stage", memo_key, {str(pid): r for pid, r in results.items()})
    # judged photos by score (ties: first-stage order); photos the judge failed on, or never reached, or could
    # check nothing of, follow in first-stage order, so one failed call never throws away the other photos' scores
    judged = sorted((pid for pid in results if results[pid].get("score") is not None),
                    key=lambda pid: (catalog_tier(results[pid]), -results[pid]["score"], first_rank[pid]))
    scored = set(judged)
    rest = [pid for pid, _ in candidates if pid not in scored]
    order = judged + rest
    ranked = [(pid, results[pid]["score"]) for pid in judged] + [(pid, 0.0) for pid in rest]
    stage["order_unchanged"] = [pid for pid, _ in ranked] == [pid for pid, _ in candidates]
    if not judged:  # nothing judged: the first stage's order and scores stand
        stage["order"] = "first-stage"
        ranked = list(candidates)
    elif stage["order_unchanged"]:  # the judge moved no photo (e.g. every score tied); the evaluation then scores
        stage["order"] = "first-stage (the checks moved no photo)"  # the first stage's scores (photos' first_score)
    elif rest:
        stage["order"] = "judge, then unjudged in first-stage order"
    stage["passed"] = sum(1 for r in results.values() if passed(r))
    _catalog_notice(run, evidence, results, stage)
    _abstention_notice(run, judge, query, questions, results, stage)
    if results and not judged:
        run.notice(f"the photo checker could check none of the questions on the {len(results)} photos, so the "
                   "order before the checks was kept")
    elif judged and not stage["passed"]:
        run.notice(f"no photo passed every check: none of the {len(judged)} verified photos was judged to show "
                   "all of it, so the photos are ordered by how close they came")
    if len(judged) > 1 and len({results[pid]["score"] for pid in judged}) == 1 and stage["order_unchanged"]:
        run.notice(f"the photo checker gave all {len(judged)} checked photos the same score, so the order before "
                   "the checks was kept")
    if stage["out_of_time"]:
        late = stage["out_of_time"]
        then = "follow the checked ones in first-stage order" if judged else "keep their first-stage order"
        run.out_of_time(f"{late} of {len(candidates)} photos were not checked by "
                        f"{backend_where(run.settings, 'judge')} and {then}")
    if errors:
        failed = max(1, len(order_ids) - len(results) - stage["skipped"] - stage["out_of_time"])
        stage["failed"] = failed
        unchecked = min(stage["paused"], failed)
        outcome = ("the first-stage order was kept" if not judged else
                   f"the {len(judged)} judged photos are ranked by score and the "
                   f"{'unchecked' if unchecked == failed else 'failed'} ones follow them in first-stage order")
        log.warning("judge %s failed on %d of %d photos (%d not checked): %s", judge.model_id, failed,
                    len(candidates), unchecked, errors[0])
        if unchecked:  # the judge was paused (failed image check, failed calls): one notice, no per-photo wait
            tried = failed - unchecked
            run.notice(f"the judge failed ({errors[0]}): {unchecked} of {len(candidates)} photos were not checked"
                       + (f" and {tried} failed" if tried else "") + f"; {outcome}")
        else:
            run.notice(f"the judge failed on {failed} of {len(candidates)} photos ({errors[0]}); {outcome}")
    stage["photos"] = [results[pid] for pid in order if pid in results]
    stage["scored"] = len(judged)
    return ranked, stage


def _catalog_notice(run: Run, evidence: CatalogEvidence | None, results: dict[int, dict],
                    stage: dict[str, Any]) -> None:
    """Counts of photos answered from the catalog and from the picture: in the stage, a notice and a log line."""
    counts = summary(evidence, list(results.values()))
    stage["catalog_evidence"].update(counts)
    if evidence is None or not results:
        return
    text = catalog_notice(counts, len(results))
    log.info("rerank: %s", text)
    run.notice(text)


def _judge_concurrently(run: Run, judge, photos: dict, todo: list[int], ask: tuple, take, errors: list[str],
                        stage: dict[str, Any], chain: bool = True, evidence: CatalogEvidence | None = None) -> None:
    """Judge `todo` photos with at most judge_concurrency in flight, streaming each as its chain finishes."""
    if not todo:
        return
    s = run.settings
    _, _, questions, votes = ask
    workers = max(1, s.judge_concurrency)
    # a guard against a hung backend: every call may take backend_timeout_s, calls of one photo run in turn
    deadline = s.backend_timeout_s * (len(questions) * votes * (math.ceil(len(todo) / workers) + 1) + 1)
    if run.deadline.passed():
        stage["out_of_time"] += len(todo)
        return
    pool = ThreadPoolExecutor(max_workers=workers)
    # each photo's calls run with the search's context: its time limit bounds every request to a server
    futures = {pool.submit(in_context(judge_photo), run, judge, photos[pid], *ask, chain=chain, evidence=evidence): pid
               for pid in todo}
    finished = 0
    try:
        for fut in _completed(run, futures, min(deadline, run.deadline.left())):
            finished += 1
            try:
                take(futures[fut], fut.result())
            except BudgetExceeded:
                stage["skipped"] += 1
            except SearchCancelled:
                raise
            except DeadlinePassed:  # the search's time limit, not the judge: this photo is not checked
                stage["out_of_time"] += 1
            except BackendUnavailable as exc:  # the judge is paused: this photo was not sent to it at all
                stage["paused"] += 1
                errors.append(exc.message[:300])  # the cause in full: it names the server and the limit
            except Exception as exc:  # any judge failure: this photo stays unjudged (reported by the caller)
                log.error("judge %s failed on photo %s", judge.model_id, futures[fut], exc_info=exc)
                errors.append(short_error(exc))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if finished < len(futures):
        if run.deadline.passed():
            stage["out_of_time"] += len(futures) - finished
        else:
            errors.append(f"no answer within {deadline:.0f} s")
