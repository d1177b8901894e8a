"""PlugIR dialogue (methods.md 4): a session that asks clarifying questions grounded in what the search
currently retrieves, and re-retrieves after each answer.

    session = DialogueSession(engine.search, "a small bird on a branch")
    q = session.next_question()          # Question(text, facts, key, candidates=[{id, caption, entropy, cluster}])
    hits = session.answer("no")          # or "yes", "not sure", free text, and/or marked=[photo ids]

A dialogue that listens: "yes"/"no" become constraints (the candidates the judge answers the other way move
down; constraints.py); "not sure" changes nothing and that question is not asked again; no question is asked
twice in meaning (questions are compared by what they ask about what is named, not by their wording: the rule
book's `meaning_key`, where "Is it alone?" and "Are there two of them?" are one question); no question is
asked about what the named organism cannot have (the rule book's `impossible`, from the world's data: wings
for a frog); questions must split the current candidates (for questions in the world's terms, some
candidates' notes state the attribute and some do not); marked photos feed back as photos (Rocchio relevance
feedback), never as pasted notes, rank first in every later turn and pull the photos of their catalogued
species up. When no proposed question is usable the rule book's question is asked, and the session says so
as a note (`notes`, `Question.fallback`), not as a failure.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

from core.contracts.records import Filters, Hit
from core.contracts.world import RuleBooks, answer_word
from core.methods.anatomy import impossible as impossible_for
from core.methods.anatomy import named_taxa
from core.methods.cached_backends import CachedBackends
from core.methods.constraints import Constraint, ConstraintChecker, question_key
from core.methods.deadline import SearchDeadline, backend_where
from core.methods.feedback import check_photo_ids, rocchio
from core.methods.llm_call import short_error
from core.methods.llm_tasks import FILTER_FALLBACK, filter_questions, propose_questions, reformulate
from core.methods.retrieval_context import candidate_count, caption_entropies, cluster, kl_select, representatives

log = logging.getLogger(__name__)
SKIP_TOP = 10  # the KL choice looks at candidates ranked 11..n_t
FREE_QUESTION = "Can you describe the photo in more detail?"
RULE_FALLBACK = ("dialogue: no proposed question was new and split the candidates; asked the offline rule's "
                 "question about the candidates instead")
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
    fallback: str = ""  # why the rule book's question was asked instead of a proposed one ('' when it was not)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class DialogueSession:
    def __init__(self, search, description: str, *, settings=None, backends: CachedBackends | None = None,
                 filters: Filters | None = None, k: int | None = None, rules: RuleBooks | None = None):
        """`rules`: the rule books of the search engine (the request's book reads the dialogue: its description,
        questions and the candidates' notes); the generic rules when left out."""
        from core.contracts.search_request import clean_query

        self.search = search
        self.book = (rules or RuleBooks()).request
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
        self.notices: list[str] = []  # what failed or was left out (warnings)
        self.notes: list[str] = []  # how the dialogue went about its questions (information, not failures)
        self.pending: Question | None = None
        self.history: list[dict[str, Any]] = []  # per round: caption, top ids, constraints, marks
        self.checker = ConstraintChecker(self.backends, search.photos, search.load_image, self.description,
                                         self._notice, band=self.settings.undecided_band)
        self.ranked = self.retrieve(self.k)
        self._log()

    @contextmanager
    def turn_deadline(self) -> Iterator[SearchDeadline]:
        """One turn's time limit (deadline_dialogue_s): every model-server call inside ends by it, a task whose
        model was cut falls back to its offline rule, and a turn that ran out of time says so in `notices`."""
        total = float(self.settings.deadline_dialogue_s or 0) or None
        limit = SearchDeadline(total, "Dialogue", "deadline_dialogue_s")
        with limit.applied():
            yield limit
        if limit.passed():
            self._notice(limit.notice_text(
                "the question and the description were written by the offline rules",
                f"{backend_where(self.settings, 'llm')} was late").replace("the search stopped", "the turn stopped"))

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
        """The best `depth` photos: embedding similarity (with relevance feedback); within the top
        plugir_check_depth the photos of a marked photo's catalogued species first, then reordered by the
        answered questions (candidates that contradict an answer move down); the marked photos first of all."""
        check = self.settings.plugir_check_depth if self.constraints or self.relevant else 0
        vector = self._vector()
        ranked = self.search.rank_vector(vector, max(depth, check), self.pool)
        ranked = self._species_first(ranked, check)
        ranked = self.checker.reorder(ranked, self.constraints, check)
        return self._marked_first(ranked, vector)[:depth]

    def _marked(self) -> list[int]:
        """The photos marked as looking right that this session may still show (in its pool, not marked wrong)."""
        allowed = None if self.pool is None else set(self.pool)
        return [i for i in self.relevant if i not in self.nonrelevant and (allowed is None or i in allowed)]

    def _species_first(self, ranked: list[tuple[int, float]], depth: int) -> list[tuple[int, float]]:
        """The top `depth` of `ranked` with the photos catalogued as a marked photo's species first (order kept
        otherwise)."""
        marked = self._marked()
        if not marked or depth <= 0:
            return ranked
        species = {p.scientific_name.strip().lower() for p in self.search.photos(marked) if p.scientific_name.strip()}
        if not species:
            return ranked
        head, tail = ranked[:depth], ranked[depth:]
        same = {p.id for p in self.search.photos([i for i, _ in head])
                if p.scientific_name.strip().lower() in species}
        return sorted(head, key=lambda t: t[0] not in same) + tail

    def _marked_first(self, ranked: list[tuple[int, float]], vector: np.ndarray) -> list[tuple[int, float]]:
        """`ranked` with the marked photos at the top (each with its own similarity to the query vector)."""
        marked = self._marked()
        if not marked:
            return ranked
        score = dict(ranked)
        missing = [i for i in marked if i not in score]
        if missing:
            sims = np.asarray(self.search.vectors(missing), dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
            score.update({i: float(x) for i, x in zip(missing, sims)})
        first = sorted(marked, key=lambda i: -score[i])
        return [(i, score[i]) for i in first] + [t for t in ranked if t[0] not in set(first)]

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

    def _note(self, text: str) -> None:
        if text not in self.notes:
            log.info("%s", text)
            self.notes.append(text)

    def meaning(self, question: str) -> str:
        """What `question` asks about what is named so far (the rule book's key; else its normalised facts or
        content words): two questions with the same meaning share it."""
        return self.book.meaning_key(question, self.caption, self.turns) or question_key(question, self.book)

    def _screen(self, questions: list[str], captions: list[str],
                taxa: set[str] = frozenset()) -> tuple[list[str], list[dict[str, str]]]:
        """Questions that can apply to what is named (the world's rule book, else the generic table of traits
        by higher taxon, `taxa` being what is named), not asked before (by meaning, as understood now) and
        that, when in the world's terms, split the candidates: some but not all candidate notes state what
        they ask."""
        facts_of = self.book.consistent(self.caption, self.turns, [self.book.text_facts(c) for c in captions if c])
        denied = self.book.denied_facts(self.turns)
        out, dropped = [], []
        keys = set(self.asked_keys) | {self.meaning(q) for q, _ in self.turns if q != FREE_QUESTION}
        for q in questions:
            key = self.meaning(q)
            facts = {f for f in self.book.question_facts(q) if not f.startswith("part:")}
            why = self.book.impossible(q, self.caption, self.turns) or impossible_for(q, set(taxa))
            if why:
                dropped.append({"question": q, "reason": f"not for what is named ({why})"})
                continue
            if key in keys:
                dropped.append({"question": q, "reason": "asked before (same meaning)"})
                continue
            if facts and any(self.book.settled_by_denials(f, denied, facts_of) for f in facts):
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
                                     temperature=s.plugir_questioner_temperature, book=self.book)
        said: list[str] = []
        kept = filter_questions(llm, self.caption, self.turns, proposed, said, rep_captions, s.plugir_questions,
                                book=self.book)
        fallback = ""
        for text in said:  # the filter's own fallback is how the dialogue works, not a failure
            if text == FILTER_FALLBACK:
                fallback = text
                self._note(text)
            else:
                self._notice(text)
        taxa = named_taxa(" ".join([self.caption, *(q for q, a in self.turns if answer_word(a) == "yes")]),
                          self.search.photos(ids) if ids else [])
        usable, dropped = self._screen(kept, captions, taxa)
        if not usable:
            from core.methods.rules import questions as rule_questions

            fresh, more = self._screen(rule_questions(self.caption, self.turns, captions, s.plugir_questions,
                                                      self.book), captions, taxa)
            dropped += more
            if fresh:
                fallback = RULE_FALLBACK
                self._note(RULE_FALLBACK)
            usable = fresh
        kls: list[float] = []
        choice = 0
        if len(usable) > 1 and ids:
            tail = ids[SKIP_TOP:] if len(ids) > SKIP_TOP + 1 else ids
            emb = self.backends.embedder
            q_vecs = emb.embed_texts([f"{self.caption}, {q}" for q in usable])
            choice, kls = kl_select(emb.embed_texts([self.caption])[0], q_vecs, self.search.vectors(tail), scale)
        text = usable[choice] if usable else FREE_QUESTION
        facts = sorted(self.book.question_facts(text)) if usable else []
        self.pending = Question(text, r, self.caption, candidates, proposed, kept, [round(k, 6) for k in kls], n_t,
                                facts, self.meaning(text) if usable else "free text",
                                list(SUGGESTIONS) if usable else ["not sure"], dropped, fallback if usable else "")
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
            key = self.meaning(q) if q != FREE_QUESTION else "free text"
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
                                           self.notices, book=self.book)
            self.pending = None
        self.ranked = self.retrieve(self.k)
        self._log(marked)
        return self.hits()

    def to_json(self) -> dict[str, Any]:
        return {"description": self.description, "caption": self.caption,
                "turns": [{"question": q, "answer": a} for q, a in self.turns], "relevant": self.relevant,
                "nonrelevant": self.nonrelevant, "marked": self.marked_ranks(),
                "constraints": [c.to_json() for c in self.constraints], "skipped": self.skipped,
                "asked_keys": self.asked_keys, "history": self.history, "notices": self.notices, "notes": self.notes,
                "pending": self.pending.to_json() if self.pending else None}
