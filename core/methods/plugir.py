"""PlugIR dialogue (methods.md 4): a session that asks clarifying questions grounded in what the search
currently retrieves, and re-retrieves after each answer.

    session = DialogueSession(engine.search, "a small bird on a branch")
    q = session.next_question()          # Question(text, candidates=[{id, caption, entropy, cluster}], ...)
    hits = session.answer("yes, with red wings")      # or session.answer(marked=[photo ids])
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np

from core.methods.cached_backends import CachedBackends
from core.methods.feedback import check_photo_ids, rocchio
from core.methods.llm_tasks import filter_questions, propose_questions, reformulate, short_error
from core.methods.retrieval_context import (candidate_count, caption_entropies, cluster, kl_select,
                                            representatives)
from core.records import Filters, Hit

SKIP_TOP = 10  # the KL choice looks at candidates ranked 11..n_t


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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class DialogueSession:
    def __init__(self, search, description: str, *, settings=None, backends: CachedBackends | None = None,
                 filters: Filters | None = None, k: int | None = None):
        from core.request import clean_query

        self.search = search
        self.settings = settings or search.settings
        self.backends = backends or CachedBackends(search.backends, self.settings.path("cache"),
                                                   self.settings.path("generated"))
        self.description = clean_query(description)
        self.caption = self.description
        self.k = k or self.settings.k
        self.pool = search.pool(filters)
        self.turns: list[tuple[str, str]] = []
        self.relevant: list[int] = []
        self.nonrelevant: list[int] = []
        self.notices: list[str] = []
        self.pending: Question | None = None
        self.history: list[dict[str, Any]] = []  # per round: caption, top ids
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
        return self.search.rank_vector(self._vector(), depth, self.pool)

    def hits(self, k: int | None = None) -> list[Hit]:
        return self.search.hits(self.ranked[: k or self.k])

    def _log(self) -> None:
        self.history.append({"round": len(self.turns), "caption": self.caption,
                             "top_ids": [i for i, _ in self.ranked[: self.k]]})

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

    def next_question(self) -> Question:
        """Reformulated caption -> retrieval context -> proposed questions -> filter -> KL choice."""
        s = self.settings
        r = len(self.turns)
        n_t = candidate_count(r, s.plugir_candidates, self.pool_size())
        ranked = self.retrieve(n_t)
        ids = [i for i, _ in ranked]
        llm = self.backends.llm
        reps: list[int] = []
        captions: list[str] = []
        entropies = np.zeros(0)
        labels = np.zeros(0, dtype=np.int64)
        if ids:
            vecs = np.asarray(self.search.vectors(ids), dtype=np.float32)
            labels = cluster(vecs, s.plugir_clusters, seed=r)
            captions = self._captions(ids)
            cap_vecs = self.backends.embedder.embed_texts(captions)
            entropies = caption_entropies(cap_vecs @ vecs.T)
            reps = representatives(entropies, labels)
        candidates = [{"id": ids[i], "rank": i + 1, "caption": captions[i], "entropy": round(float(entropies[i]), 6),
                       "cluster": int(labels[i])} for i in reps]
        proposed = propose_questions(llm, self.caption, self.turns, [c["caption"] for c in candidates],
                                     s.plugir_questions, self.notices)
        kept = filter_questions(llm, self.caption, self.turns, proposed, self.notices,
                                [c["caption"] for c in candidates], s.plugir_questions)
        kls: list[float] = []
        choice = 0
        if len(kept) > 1 and ids:
            tail = ids[SKIP_TOP:] if len(ids) > SKIP_TOP + 1 else ids
            emb = self.backends.embedder
            q_vecs = emb.embed_texts([f"{self.caption}, {q}" for q in kept])
            choice, kls = kl_select(emb.embed_texts([self.caption])[0], q_vecs, self.search.vectors(tail))
        self.pending = Question(kept[choice] if kept else "Can you describe the photo in more detail?", r,
                                self.caption, candidates, proposed, kept, [round(k, 6) for k in kls], n_t)
        return self.pending

    # ---- the user's answer ----------------------------------------------------------------------------
    def answer(self, text: str = "", marked: Sequence[int] = (), not_relevant: Sequence[int] = (),
               question: str | None = None) -> list[Hit]:
        """Add the turn (free text and/or photos marked as looking right / wrong), reformulate, re-retrieve."""
        marked = check_photo_ids(self.search, marked)  # before any state changes: a bad id leaves the session as is
        not_relevant = check_photo_ids(self.search, not_relevant)
        q = question or (self.pending.text if self.pending else "Anything else?")
        self.relevant += [i for i in marked if i not in self.relevant]
        self.nonrelevant += [i for i in not_relevant if i not in self.nonrelevant]
        reply = " ".join((text or "").split())
        if not reply and marked:
            shown = [p.caption or p.common_name or p.scientific_name for p in self.search.photos(list(marked)[:3])]
            reply = "like these photos: " + "; ".join(t for t in shown if t)
        self.turns.append((q, reply or "not sure"))
        self.caption = reformulate(self.backends.llm, self.description, self.caption, self.turns, self.notices)
        self.pending = None
        self.ranked = self.retrieve(self.k)
        self._log()
        return self.hits()

    def to_json(self) -> dict[str, Any]:
        return {"description": self.description, "caption": self.caption,
                "turns": [{"question": q, "answer": a} for q, a in self.turns], "relevant": self.relevant,
                "nonrelevant": self.nonrelevant, "history": self.history, "notices": self.notices,
                "pending": self.pending.to_json() if self.pending else None}
