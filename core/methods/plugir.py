"""PlugIR dialogue (methods.md 4): a session that asks clarifying questions grounded in what the search
currently retrieves, and re-retrieves after each answer.

    session = DialogueSession(engine.search, "a small bird on a branch")
    q = session.next_question()          # Question(text, facts, key, candidates=[{id, caption, entropy, cluster}])
    hits = session.answer("no")          # or "yes", "not sure", free text, and/or marked=[photo ids]

A dialogue that listens: "yes"/"no" become constraints (the candidates the judge answers the other way move
down; constraints.py); "not sure" changes nothing and that question is not asked again; no question is asked
twice in meaning (questions are compared by their normalised facts, not their wording); questions must split
the current candidates (for questions in the world's terms, some candidates' notes state the attribute and
some do not); marked photos feed back as photos (Rocchio relevance feedback), never as pasted notes.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np

from core.contracts.world import answer_word, rule_book
from core.methods.cached_backends import CachedBackends
from core.methods.constraints import Constraint, ConstraintChecker, question_key
from core.methods.feedback import check_photo_ids, rocchio
from core.methods.llm_tasks import filter_questions, propose_questions, reformulate, short_error
from core.methods.retrieval_context import (candidate_count, caption_entropies, cluster, kl_select,
                                            representatives)
from core.contracts.records import Filters, Hit

SKIP_TOP = 10  # the KL choice looks at candidates ranked 11..n_t
FREE_QUESTION = "Can you describe the photo in more detail?"
SUGGESTIONS = ["yes", "no", "not sure"]


@dataclass
class Question:
    text: str
    round: int
    caption: str  # c_t the question was asked about
    candidates: list[dict[str, Any]]  # the retrieval candidates it was grounded in (cluster representatives)
    proposed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    kl: list[float] = field(default_factory=list)
    n_candidates: int = 0
    facts: list[str] = field(default_factory=list)  # what it asks in the world's terms ([] outside them)
    key: str = ""  # normalised meaning: the same key is never asked twice
    suggestions: list[str] = field(default_factory=lambda: list(SUGGESTIONS))
    dropped: list[dict[str, str]] = field(default_factory=list)  # kept questions not asked, with the reason

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class DialogueSession:
    def __init__(self, search, description: str, *, settings=None, backends: CachedBackends | None = None,
                 filters: Filters | None = None, k: int | None = None):
        from core.contracts.search_request import clean_query

        self.search = search
        self.settings = settings or search.settings
        self.backends = backends or CachedBackends(search.backends, self.settings.path("cache"),
                                                   self.settings.path("generated"), self.settings.cache_size_mb)
        self.description = clean_query(description)
        self.caption = self.description
        self.k = k or self.settings.k
        self.pool = search.pool(filters)
        self.turns: list[tuple[str, str]] = []
        self.relevant: list[int] = []
        self.nonrelevant: list[int] = []
        self.constraints: list[Constraint] = []
        self.asked_keys: list[str] = []  # every question asked (any answer), by normalised key
        self.skipped: list[str] = []  # questions answered "not sure"
        self.notices: list[str] = []
        self.pending: Question | None = None
        self.history: list[dict[str, Any]] = []  # per round: caption, top ids, constraints, marks
        self.checker = ConstraintChecker(self.backends, search.photos, search.load_image, self.description,
                                         self._notice, band=self.settings.undecided_band)
        self.ranked = self.retrieve(self.k)
        self._log()

    # ---- retrieval ----------------------------------------------------------------------------------
    def _vector(self) -> np.ndarray:
        v = self.backends.embedder.embed_texts([self.caption])[0]
        if self.relevant or self.nonrelevant:
            s = self.settings
            rel = self.search.vectors(self.relevant) if self.relevant else None
            non = self.search.vectors(self.nonrelevant) if self.nonrelevant else None
            v = rocchio(v, rel, non, s.rocchio_alpha, s.rocchio_beta, s.rocchio_gamma)
        return v

    def retrieve(self, depth: int) -> list[tuple[int, float]]:
        """The best `depth` photos: embedding similarity (with relevance feedback), then the top
        plugir_check_depth reordered by the answered questions (candidates that contradict an answer move down)."""
        check = self.settings.plugir_check_depth if self.constraints else 0
        ranked = self.search.rank_vector(self._vector(), max(depth, check), self.pool)
        return self.checker.reorder(ranked, self.constraints, check)[:depth]

    def hits(self, k: int | None = None) -> list[Hit]:
        return self.search.hits(self.ranked[: k or self.k])

    def marked_ranks(self) -> list[dict[str, int | None]]:
        """Every photo marked as looking right, with its current 1-based rank in the shown results (None when it
        is not among them)."""
        shown = {pid: r for r, (pid, _) in enumerate(self.ranked[: self.k], start=1)}
        return [{"id": pid, "rank": shown.get(pid)} for pid in self.relevant]

    def _log(self, marked: Sequence[int] = ()) -> None:
        self.history.append({"round": len(self.turns), "caption": self.caption,
                             "top_ids": [i for i, _ in self.ranked[: self.k]],
                             "constraints": [c.to_json() for c in self.constraints], "marked": list(marked)})

    def pool_size(self) -> int:
        return len(self.search.index) if self.pool is None else len(self.pool)

    # ---- the questioner -------------------------------------------------------------------------------
    def _captions(self, ids: Sequence[int]) -> list[str]:
        """One caption per id, in the order of `ids` ('' for an id the catalog does not know), so captions stay
        aligned with the embeddings of the same ids."""
        captioner = self.backends.captioner
        by_id = {p.id: p for p in self.search.photos(list(ids))}
        out = []
        missing = [int(i) for i in ids if int(i) not in by_id]
        if missing:
            self._notice(f"{len(missing)} retrieved photo(s) are in the index but not in the catalog (e.g. "
                         f"{missing[0]}); their captions are left empty")
        for i in ids:
            p = by_id.get(int(i))
            if p is None:
                out.append("")
                continue
            try:
                out.append(captioner.caption(None, p, load=lambda p=p: self.search.load_image(p)))
            except Exception as exc:
                from core.backends.metadata_captioner import describe

                self._notice(f"the captioner failed ({short_error(exc)}); used catalog metadata")
                out.append(describe(p))
        return out

    def _notice(self, text: str) -> None:
        if text not in self.notices:
            self.notices.append(text)

    def _screen(self, questions: list[str], captions: list[str]) -> tuple[list[str], list[dict[str, str]]]:
        """Questions not asked before (by meaning) that, when in the world's terms, split the candidates: some
        but not all candidate notes state what they ask."""
        facts_of = rule_book().consistent(self.caption, self.turns, [rule_book().text_facts(c) for c in captions if c])
        denied = rule_book().denied_facts(self.turns)
        out, dropped, keys = [], [], set(self.asked_keys)
        for q in questions:
            key = question_key(q)
            facts = {f for f in rule_book().question_facts(q) if not f.startswith("part:")}
            if key in keys:
                dropped.append({"question": q, "reason": "asked before (same meaning)"})
                continue
            if facts and any(rule_book().settled_by_denials(f, denied, facts_of) for f in facts):
                dropped.append({"question": q, "reason": "settled by earlier answers"})
                continue
            if facts and facts_of:
                having = sum(facts <= fs for fs in facts_of)
                if having in (0, len(facts_of)):
                    why = "no candidate has it" if having == 0 else "every candidate has it"
                    dropped.append({"question": q, "reason": f"does not split the candidates ({why})"})
                    continue
            keys.add(key)
            out.append(q)
        return out, dropped

    def next_question(self) -> Question:
        """Reformulated caption -> retrieval context -> proposed questions -> filter -> screening -> KL choice."""
        s = self.settings
        r = len(self.turns)
        n_t = candidate_count(r, self.pool_size(), s.plugir_candidate_share, s.plugir_candidate_floor,
                              s.plugir_candidates)
        ranked = self.retrieve(n_t)
        ids = [i for i, _ in ranked]
        llm = self.backends.llm
        reps: list[int] = []
        captions: list[str] = []
        entropies = np.zeros(0)
        labels = np.zeros(0, dtype=np.int64)
        scale = 1.0 / max(1e-6, s.plugir_softmax_temperature)
        if ids:
            vecs = np.asarray(self.search.vectors(ids), dtype=np.float32)
            labels = cluster(vecs, s.plugir_clusters, seed=r)
            captions = self._captions(ids)
            cap_vecs = self.backends.embedder.embed_texts(captions)
            entropies = caption_entropies(cap_vecs @ vecs.T, scale)
            reps = representatives(entropies, labels)
        candidates = [{"id": ids[i], "rank": i + 1, "caption": captions[i], "entropy": round(float(entropies[i]), 6),
                       "cluster": int(labels[i])} for i in reps]
        rep_captions = [c["caption"] for c in candidates]
        proposed = propose_questions(llm, self.caption, self.turns, rep_captions, s.plugir_questions, self.notices,
                                     temperature=s.plugir_questioner_temperature)
        kept = filter_questions(llm, self.caption, self.turns, proposed, self.notices, rep_captions,
                                s.plugir_questions)
        usable, dropped = self._screen(kept, captions)
        if not usable:
            from core.methods.rules import questions as rule_questions

            fresh, more = self._screen(rule_questions(self.caption, self.turns, captions, s.plugir_questions),
                                       captions)
            dropped += more
            if fresh:
                self._notice("dialogue: no proposed question was new and split the candidates; asked the offline "
                             "rule's question about the candidates instead")
            usable = fresh
        kls: list[float] = []
        choice = 0
        if len(usable) > 1 and ids:
            tail = ids[SKIP_TOP:] if len(ids) > SKIP_TOP + 1 else ids
            emb = self.backends.embedder
            q_vecs = emb.embed_texts([f"{self.caption}, {q}" for q in usable])
            choice, kls = kl_select(emb.embed_texts([self.caption])[0], q_vecs, self.search.vectors(tail), scale)
        text = usable[choice] if usable else FREE_QUESTION
        facts = sorted(rule_book().question_facts(text)) if usable else []
        self.pending = Question(text, r, self.caption, candidates, proposed, kept, [round(k, 6) for k in kls], n_t,
                                facts, question_key(text) if usable else "free text",
                                list(SUGGESTIONS) if usable else ["not sure"], dropped)
        return self.pending

    # ---- the user's answer ----------------------------------------------------------------------------
    def answer(self, text: str = "", marked: Sequence[int] = (), not_relevant: Sequence[int] = (),
               question: str | None = None) -> list[Hit]:
        """Take the user's reply to the pending question (or to `question`) and/or photos marked as looking right
        (or wrong), then reformulate and re-retrieve.

        yes / no: a constraint the candidates are checked against (and, for yes, the question's content joins the
        description); not sure: nothing changes and the question is not asked again; other words: added to the
        description. Marked photos move the query vector towards them (Rocchio); they are not turned into text.
        With only marked photos and no words, the pending question stays unanswered."""
        marked = check_photo_ids(self.search, marked)  # before any state changes: a bad id leaves the session as is
        not_relevant = check_photo_ids(self.search, not_relevant)
        q = question or (self.pending.text if self.pending else FREE_QUESTION)
        self.relevant += [i for i in marked if i not in self.relevant]
        self.nonrelevant += [i for i in not_relevant if i not in self.nonrelevant]
        reply = " ".join((text or "").split())
        if reply or not (marked or not_relevant):
            word = answer_word(reply)
            if q == FREE_QUESTION and word in ("yes", "no"):
                word = "unsure"  # a yes or no to "describe the photo" says nothing about it
            key = question_key(q) if q != FREE_QUESTION else "free text"
            if key not in self.asked_keys and key != "free text":
                self.asked_keys.append(key)
            if word == "unsure":
                self.skipped.append(q)
            elif word in ("yes", "no") and q != FREE_QUESTION:
                self.constraints = [c for c in self.constraints if c.key != key]
                self.constraints.append(Constraint(q, key, word == "yes"))
            self.turns.append((q, reply or "not sure"))
            if word != "unsure":
                self.caption = reformulate(self.backends.llm, self.description, self.caption, self.turns,
                                           self.notices)
            self.pending = None
        self.ranked = self.retrieve(self.k)
        self._log(marked)
        return self.hits()

    def to_json(self) -> dict[str, Any]:
        return {"description": self.description, "caption": self.caption,
                "turns": [{"question": q, "answer": a} for q, a in self.turns], "relevant": self.relevant,
                "nonrelevant": self.nonrelevant, "marked": self.marked_ranks(),
                "constraints": [c.to_json() for c in self.constraints], "skipped": self.skipped,
                "asked_keys": self.asked_keys, "history": self.history, "notices": self.notices,
                "pending": self.pending.to_json() if self.pending else None}
