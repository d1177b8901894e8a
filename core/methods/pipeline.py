"""The search pipeline: first stage (baseline | rewrite | visret), optional rerank, coverage and answer.

    pipe = Pipeline(engine.search)            # one per engine; holds the disk cache
    result = pipe.run(SearchRequest("a frog calling at night", method="visret", rerank="full"),
                      on_event=print)         # or: for event in pipe.stream(request): ...

The result is a core.search.SearchResult whose `stages` member holds every artefact (JSON-serialisable)."""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from PIL import Image

from core.errors import InputError
from core.methods.budget import Budget
from core.methods.cached_backends import CachedBackends, difference
from core.methods.feedback import check_photo_ids, photo_vectors, rocchio
from core.methods.llm_tasks import visual_instruction
from core.methods.rerank import MODES, run_rerank
from core.methods.run import Event, Run
from core.methods.visret import rewrite_rank, run_visret
from core.records import Filters
from core.search import SearchResult, _filters_json, clean_query

METHODS = ("baseline", "rewrite", "visret")
RERANK_MODES = ("none",) + MODES


@dataclass
class SearchRequest:
    query: str
    k: int | None = None  # results returned (settings.k when None)
    filters: Filters | None = None  # pool: taxon, dates, place, licence, explicit ids
    method: str = "baseline"  # baseline | rewrite | visret
    m: int | None = None  # VisRet pictures per instruction (settings.visret_m when None)
    seeds: Sequence[int] | None = None  # VisRet seeds (change one to regenerate that picture)
    rerank: str = "none"  # none | direct | subq | context | full
    rerank_k: int | None = None  # candidates judged (settings.rerank_k when None)
    votes: int | None = None  # judge votes per question (settings.rerank_votes when None)
    coverage: bool = False  # Pareto coverage report
    reference: bool = False  # with coverage: a generated reference picture
    answer: bool = False  # short answer citing photo ids
    examples: Sequence[Image.Image] = ()  # the user's own example photos (join the VisRet fusion)
    example_ids: Sequence[int] = ()  # catalog photos used as examples
    relevant_ids: Sequence[int] = ()  # relevance feedback marks (Rocchio)
    nonrelevant_ids: Sequence[int] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    # comparisons of two organisms (rewrite, visret): 0 or 1 ranks that organism on its own (its own fused list,
    # as Visual-RAG-ME scores each organism); None fuses both organisms' lists into one view (the UI)
    organism: int | None = None

    def validate(self) -> None:
        if self.method not in METHODS:
            raise InputError(f"Unknown method {self.method!r}", "use one of: " + ", ".join(METHODS))
        if self.rerank not in RERANK_MODES:
            raise InputError(f"Unknown rerank mode {self.rerank!r}", "use one of: " + ", ".join(RERANK_MODES))
        if self.k is not None and self.k < 1:
            raise InputError(f"k={self.k} asks for no results", "ask for at least 1 result")
        if self.organism is not None and self.organism not in (0, 1):
            raise InputError(f"organism={self.organism} is not 0 or 1", "name the first (0) or second (1) organism")
        if self.m is not None and not 1 <= self.m <= 16:
            raise InputError(f"m={self.m} visualizations is out of range", "use 1 to 16 (default 3)")


class Pipeline:
    def __init__(self, search, settings=None, backends: CachedBackends | None = None):
        self.search = search
        self.settings = settings or search.settings
        self.backends = backends or CachedBackends(search.backends, self.settings.path("cache"),
                                                   self.settings.path("generated"))

    # ---- public -----------------------------------------------------------------------------------
    def run(self, request: SearchRequest, on_event: Callable[[Event], None] | None = None) -> SearchResult:
        request.validate()
        # user-supplied photo ids are checked before any costly stage runs
        check_photo_ids(self.search, [*request.relevant_ids, *request.nonrelevant_ids, *request.example_ids])
        s = self.settings
        query = clean_query(request.query)
        t0 = time.perf_counter()
        before = self.backends.snapshot()
        run = Run(self.search, self.backends, s, Budget(s.max_generated, s.max_judge_calls), on_event)
        k = request.k or s.k
        with run.timed("filter"):
            pool = self.search.pool(request.filters)
        if pool is not None and len(pool) == 0:
            run.notice("no photo passes the filters")
        stages: dict[str, Any] = {}
        rerank_k = request.rerank_k or s.rerank_k
        depth = max(k, rerank_k if request.rerank != "none" else 0, 100)
        adjust = self._feedback(run, request, stages)
        ranked = self._first_stage(run, request, query, depth, pool, adjust, stages)
        run.emit("hits", stage="first", hits=[h.to_json() for h in run.hits(ranked[:k])])
        if request.rerank != "none" and ranked:
            votes = request.votes or s.rerank_votes
            reranked, stages["rerank"] = run_rerank(run, query, ranked[:rerank_k], request.rerank, votes)
            ranked = reranked + ranked[rerank_k:]
        hits = run.hits(ranked[:k])
        if request.coverage:
            from core.methods.coverage import run_coverage

            stages["coverage"] = run_coverage(run, query, pool, request.reference)
        if request.answer:
            from core.methods.answer import run_answer

            stages["answer"] = run_answer(run, query, [h.photo_id for h in hits])
        for text in run.budget.notices():
            run.notice(text)
        run.timings["total"] = (time.perf_counter() - t0) * 1000
        stages["cache"] = difference(self.backends.snapshot(), before)
        stages["budget"] = {"used": dict(run.budget.used), "limits": dict(run.budget.limits)}
        result = SearchResult(query=query, method=self._method_name(request), hits=hits, timings_ms=run.timings,
                              backends=self.backends.describe(), notices=self.search.startup_notices + run.notices,
                              stages=stages, filters=_filters_json(request.filters),
                              pool_size=None if pool is None else len(pool))
        run.emit("done", method=result.method, n=len(hits))
        return result

    def stream(self, request: SearchRequest) -> Iterator[Event]:
        """Events as the stages finish, ending with {"type": "result", "result": SearchResult} (or
        {"type": "error", "error": exc})."""
        q: queue.Queue = queue.Queue()

        def work() -> None:
            try:
                q.put({"type": "result", "result": self.run(request, on_event=q.put)})
            except Exception as exc:  # handed to the consumer, who decides how to show it
                q.put({"type": "error", "error": exc})

        threading.Thread(target=work, daemon=True).start()
        while True:
            event = q.get()
            yield event
            if event["type"] in ("result", "error"):
                return

    # ---- stages -----------------------------------------------------------------------------------
    @staticmethod
    def _method_name(request: SearchRequest) -> str:
        name = request.method
        if request.rerank != "none":
            name += f"+rerank:{request.rerank}"
        if request.coverage:
            name += "+coverage"
        return name

    def _feedback(self, run: Run, request: SearchRequest, stages: dict) -> Callable[[np.ndarray], np.ndarray]:
        rel, non = list(request.relevant_ids), list(request.nonrelevant_ids)
        if not rel and not non:
            return lambda v: v
        s = self.settings
        rv = photo_vectors(self.search, rel) if rel else None
        nv = photo_vectors(self.search, non) if non else None
        stages["feedback"] = {"relevant": rel, "nonrelevant": non, "alpha": s.rocchio_alpha,
                              "beta": s.rocchio_beta, "gamma": s.rocchio_gamma}
        return lambda v: rocchio(v, rv, nv, s.rocchio_alpha, s.rocchio_beta, s.rocchio_gamma)

    def _first_stage(self, run: Run, request: SearchRequest, query: str, depth: int, pool, adjust,
                     stages: dict) -> list[tuple[int, float]]:
        s = self.settings
        if request.method == "baseline":
            with run.timed("search"):
                ranked = run.rank(adjust(run.embed_text(query)), depth, pool)
                ranked = self._with_examples(run, request, ranked, depth, pool, adjust, stages)
            stages["first"] = {"method": "baseline", "text": query}
            return ranked
        if request.method == "rewrite":
            with run.timed("rewrite"):
                instr = visual_instruction(run.backends.llm, query, run.notices)
            with run.timed("search"):
                ranked, per = rewrite_rank(run, instr, depth, pool, adjust, request.organism)
                ranked = self._with_examples(run, request, ranked, depth, pool, adjust, stages)
            stages["first"] = {"method": "rewrite", "text": " | ".join(instr.descriptions)}
            stages["rewrite"] = {"text": " | ".join(instr.descriptions), **instr.to_json(),
                                 "per_organism": [[i for i, _ in r[:20]] for r in per], "organism": request.organism}
            return ranked
        ranked, stages["visret"] = run_visret(
            run, query, m=request.m or s.visret_m, depth=depth, pool=pool, seeds=request.seeds,
            examples=request.examples, example_ids=request.example_ids, adjust=adjust, organism=request.organism)
        stages["first"] = {"method": "visret", "text": stages["visret"]["instruction"]}
        return ranked

    @staticmethod
    def _with_examples(run: Run, request: SearchRequest, ranked, depth: int, pool, adjust, stages: dict):
        """Example photos fused (RRF) with a text ranking."""
        if not request.examples and not request.example_ids:
            return ranked
        from core.methods.rrf import rrf
        from core.methods.visret import _example_lists

        lists = [[i for i, _ in ranked]] + _example_lists(run, request.examples, request.example_ids, depth, pool,
                                                          adjust)
        stages["examples"] = {"count": len(lists) - 1, "fusion": "rrf"}
        return rrf(lists, run.settings.rrf_lambda)[:depth]
