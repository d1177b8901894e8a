"""What every stage of one search run shares: the corpus view, cached backends, budget, notices, events, the
cancel token and the rule books that read the request and the photos."""
from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from core.config import Settings
from core.contracts.cancel import CancelToken
from core.contracts.events import Event, Notice, StageEvent
from core.contracts.world import RuleBook, RuleBooks
from core.methods.budget import Budget
from core.methods.cached_backends import CachedBackends
from core.methods.deadline import SearchDeadline

log = logging.getLogger(__name__)


@dataclass
class Run:
    corpus: Any  # core.search.corpus.Corpus
    backends: CachedBackends
    settings: Settings
    budget: Budget
    on_event: Callable[[Event], None] | None = None
    cancel: CancelToken = field(default_factory=CancelToken)
    notices: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    deadline: SearchDeadline = field(default_factory=SearchDeadline)  # no limit unless the engine sets one
    rules: RuleBooks = field(default_factory=RuleBooks)  # the generic rules unless the engine was handed others
    _running: dict[str, float] = field(default_factory=dict, repr=False)  # steps started, not finished
    # photos the first stage reached through a detection's crop: photo id -> detection id (core.search.corpus)
    matched: dict[int, int] = field(default_factory=dict)

    @property
    def book(self) -> RuleBook:
        """The rule book that reads this search's request."""
        return self.rules.request

    def emit(self, event: Event) -> None:
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception as exc:  # a broken listener must not break the search
                log.exception("an event listener failed on %s", event.kind)
                self.notices.append(f"an event listener failed: {exc}")
                self.on_event = None

    def notice(self, text: str) -> None:
        if text not in self.notices:
            self.notices.append(text)
            self.emit(Notice(text))

    def out_of_time(self, undone: str) -> None:
        """Say that the search's time limit passed, who took the time and what was left undone (a notice and a
        log line); a later step left undone adds a short notice of its own."""
        if self.deadline.noticed:
            log.warning("time limit passed: %s", undone)
            self.notice(f"because of the same time limit, {undone}")
            return
        self.deadline.noticed = True
        now = time.perf_counter()
        spent = dict(self.timings)
        for name, t0 in list(self._running.items()):  # steps still running count with their time so far
            spent[name] = spent.get(name, 0.0) + (now - t0) * 1000
        text = self.deadline.notice_text(undone, self.deadline.slowest(spent, self.settings))
        log.warning("%s", text)
        self.notice(text)

    def check(self) -> None:
        """Raise SearchCancelled when the search was cancelled."""
        self.cancel.check()

    @contextmanager
    def timed(self, name: str):
        t0 = time.perf_counter()
        self.check()
        self.emit(StageEvent(name, "started"))
        self._running[name] = t0
        try:
            yield
        finally:
            self._running.pop(name, None)
            ms = (time.perf_counter() - t0) * 1000
            self.timings[name] = self.timings.get(name, 0.0) + ms
            self.emit(StageEvent(name, "done", round(ms, 2)))

    def photos(self, ids) -> list:
        """Catalog photos by id, remembered for the rest of the run (stages ask for the same ones)."""
        memo = self.__dict__.setdefault("_photos", {})
        missing = [int(i) for i in ids if int(i) not in memo]
        if missing:
            for p in self.corpus.photos(missing):
                memo[p.id] = p
        return [memo[int(i)] for i in ids if int(i) in memo]

    def hits(self, ranked) -> list:
        from core.contracts.records import Hit

        by_id = {p.id: p for p in self.photos([i for i, _ in ranked])}
        hits = [Hit(rank=r, photo_id=i, score=s, photo=by_id.get(i)) for r, (i, s) in enumerate(ranked, start=1)]
        through = {h.photo_id: self.matched[h.photo_id] for h in hits if h.photo_id in self.matched}
        if through:
            items = self.corpus.matched_items(through)
            for h in hits:
                h.matched_detection = items.get(h.photo_id)
        return hits

    def judged_view(self, photo, load: Callable[[], Any]) -> tuple[Any, Callable[[], Any]]:
        """What the judge looks at for `photo`: the animal's crop (with the crop_margin setting's margin) when
        the first stage reached the photo through a detection, else the frame. The crop's photo carries its
        own cache identity (the frame's hash and the box)."""
        det = self.matched.get(photo.id)
        box = self.corpus.crop_box(det) if det is not None else None
        if box is None:
            return photo, load
        from dataclasses import replace

        from core.camtrap.boxes import crop

        margin = float(self.settings.crop_margin)
        view = replace(photo, sha256=f"{photo.sha256 or photo.path}#box:" + ",".join(f"{v:.4f}" for v in box))
        return view, lambda: crop(load(), box, margin)

    def embed_text(self, text: str) -> np.ndarray:
        emb = self.backends.embedder
        limit = emb.max_text_tokens
        if limit and emb.count_tokens(text) > limit:
            self.notice(f"the text '{text[:60]}...' is longer than the text encoder's {limit} tokens; "
                        "the rest was ignored")
        return emb.embed_texts([text])[0]

    def rank_many(self, vectors: np.ndarray, depth: int, pool: np.ndarray | None) -> list[list[tuple[int, float]]]:
        """Several query vectors ranked in one index call when the corpus's index allows it."""
        vectors = np.asarray(vectors, dtype=np.float32)
        index = getattr(self.corpus, "index", None)
        crops = getattr(self.corpus, "searches_crops", False)  # frames and crops together: one vector at a time
        if len(vectors) > 1 and hasattr(index, "search") and len(index) > 0 and not crops:
            scores, ids = index.search(vectors, depth, pool)
            return [[(int(i), float(s)) for i, s in zip(ir, sr) if i >= 0] for ir, sr in zip(ids, scores)]
        return [self.rank(v, depth, pool) for v in vectors]

    def rank(self, vector: np.ndarray, depth: int, pool: np.ndarray | None) -> list[tuple[int, float]]:
        vector = np.asarray(vector, dtype=np.float32)
        if getattr(self.corpus, "searches_crops", False):
            return self.corpus.rank_vector(vector, depth, pool, matched=self.matched)
        return self.corpus.rank_vector(vector, depth, pool)
