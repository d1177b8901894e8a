"""The one search facade: every front end (web app, CLI, evaluation) runs its searches here, so what is
evaluated is what is shown.

    engine = SearchEngine(corpus, backends, settings)        # built once, in app.py
    result = engine.search(request_for("Verify", "a frog calling at night"))
    for event in engine.stream(request, cancel=token): ...   # FirstResults, Visualization, PhotoJudged, Notice,
                                                              # StageEvent, then Done | Failed | Cancelled

A search is: pool (filters) -> first stage (baseline | rewrite | visret, with example photos and relevance
feedback) -> optional judge rerank -> optional Pareto coverage -> the final ranking (`final_ranking`) ->
optional answer. Searches that call costly backends take one of `max_heavy_searches` slots (at most
`max_waiting_heavy` wait for one; a further one is refused with BusyError), so plain searches never wait
behind them; each search's model work goes to the worker processes in its lane (core/workers/scope.py), plain
searches' first. Every search has a time limit, its preset's deadline_*_s setting
(core.methods.deadline.SearchDeadline): past it the search returns what it has, with a notice."""
from __future__ import annotations

import logging
import time
from contextlib import nullcontext
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from core.camtrap import hit_facts as camtrap_hits
from core.camtrap.pool import empty_notice, hidden_among, search_pool
from core.contracts.cancel import CancelToken
from core.contracts.events import Done, Event, FirstResults
from core.contracts.search_request import SearchRequest
from core.contracts.search_result import SearchResult
from core.contracts.world import RuleBooks
from core.methods.budget import Budget
from core.methods.cached_backends import CachedBackends, difference
from core.methods.deadline import SearchDeadline
from core.methods.feedback import check_photo_ids, photo_vectors, rocchio
from core.methods.llm_tasks import visual_instruction
from core.methods.rerank import run_rerank
from core.methods.rrf import rrf
from core.methods.run import Run
from core.methods.visret import example_lists, rewrite_rank, run_visret
from core.search import catalog_text, event_stream, scales
from core.search.costly_slots import CostlySlots
from core.search.final_ranking import final_ranking
from core.search.groups import find_group, group_first
from core.search.groups import notice_text as group_notice
from core.search.presets import DEADLINE_SETTINGS, deadline_kind
from core.search.reading import for_request
from core.search.similarity import similar, text_scores
from core.vectors import near_copies
from core.workers.right_of_way import ROAD
from core.workers.scope import search_scope

log = logging.getLogger(__name__)
Ranked = list[tuple[int, float]]


class SearchEngine:
    def __init__(self, corpus, backends, settings=None, cached: CachedBackends | None = None,
                 rules: RuleBooks | Callable[[], RuleBooks] | None = None):
        """`corpus`: core.search.corpus.Corpus (or a fake with the same methods); `backends`: core.backends.registry
        .Backends (raw, built lazily); the engine keeps them behind one disk cache for its lifetime. `rules`: the
        rule books that read each search (core.contracts.world.RuleBooks), or what tells them at the start of a
        search (the composition root's view of the catalog); the generic rules when left out."""
        self.corpus = corpus
        self._rules = rules if callable(rules) else (lambda: rules or RuleBooks())
        self.settings = settings or corpus.settings
        self.backends = cached or CachedBackends(backends, self.settings.path("cache"),
                                                 self.settings.path("generated"), self.settings.cache_size_mb)
        self.slots = CostlySlots(self.settings)

    # ---- searching ------------------------------------------------------------------------------
    def search(self, request: SearchRequest, on_event: Callable[[Event], None] | None = None,
               cancel: CancelToken | None = None) -> SearchResult:
        """Run one search to the end; events go to `on_event` as they happen. Raises EcoLensError for bad
        input and SearchCancelled when `cancel` is cancelled."""
        request.validate()
        # user-supplied photo ids are checked before any costly stage runs
        check_photo_ids(self.corpus, [*request.relevant_ids, *request.nonrelevant_ids, *request.example_ids])
        kind = deadline_kind(request)
        deadline = SearchDeadline(float(getattr(self.settings, DEADLINE_SETTINGS[kind])), kind,
                                  DEADLINE_SETTINGS[kind])
        plain = nullcontext() if self.is_costly(request) else ROAD.plain()
        with deadline.applied(), plain:  # every model-server call below gets at most what is left of it
            result = self._search(request, on_event, cancel, deadline)
        over = -deadline.left()
        if over > 1.0:  # a model running in this process finishes the call it is making
            log.warning("search %r took %.1f s, %.1f s past its time limit of %g s (%s)", request.name,
                        deadline.total_s + over, over, deadline.total_s, deadline.setting)
        return result

    def _search(self, request: SearchRequest, on_event, cancel, deadline: SearchDeadline) -> SearchResult:
        s = self.settings
        t0 = time.perf_counter()
        followed = self.corpus.follow_catalog()  # an ingest by another process shows up without a restart
        before = self.backends.snapshot()
        run = Run(self.corpus, self.backends, s, Budget(s.max_generated, s.max_judge_calls), on_event,
                  cancel or CancelToken(), deadline=deadline, rules=self.rules(request.query))
        for text in followed:
            run.notice(text)
        k = request.k or s.k
        hidden_empty: list[np.ndarray] = []  # empty frames an unfiltered search hid: said if they would have shown
        with run.timed("filter"):
            pool = search_pool(self.corpus, request.filters, run, hidden_empty)
        if pool is not None and len(pool) == 0:
            run.notice("no photo passes the filters")
        stages: dict[str, Any] = {}
        rerank_k = request.rerank_k or s.rerank_k
        depth = max(k, rerank_k if request.rerank != "none" else 0, 100)
        adjust = self._feedback(request, stages)
        if request.preview and request.method != "baseline":
            with search_scope(run.cancel, heavy=False):  # the preview is plain work: its lane, not the costly one
                preview = run.hits(run.rank(adjust(run.embed_text(request.query)), k, pool))
            for h in preview:  # the preview's score is the cosine itself, shown on the 0-1 similarity scale
                h.similarity = scales.similarity(h.score)
            run.emit(FirstResults("preview", [h.to_json() for h in preview]))
        heavy = self.is_costly(request)
        with search_scope(run.cancel, heavy), self.slots.held(run, heavy):
            run.check()
            ranked = self._first_stage(run, request, depth, pool, adjust, stages)
            group = self._group(run, request, stages)
            text = self._catalog_text(run, request, depth, pool, stages, group, adjust)
            ranked = catalog_text.fuse(ranked, text, s, depth) if text is not None else ranked
            ranked = self._group_first(run, group, request, ranked, depth, adjust)
            first = self._matched(text, similar(self.corpus, s, run, request, run.hits(ranked[:k]), adjust, stages))
            run.emit(FirstResults("first", [h.to_json() for h in first]))
            if request.rerank != "none" and ranked:
                votes = request.votes or s.rerank_votes
                reranked, stages["rerank"] = run_rerank(run, request.query, ranked[:rerank_k], request.rerank, votes)
                ranked = reranked + ranked[rerank_k:]
                ranked = self._group_first(run, group, request, ranked, 0, adjust)  # the judge keeps the group first
            run.check()
            if request.coverage:
                from core.methods.coverage import run_coverage

                stages["coverage"] = run_coverage(run, request.query, pool, request.reference)
            ranked, covers = final_ranking(ranked, stages.get("coverage"),
                                           lambda ids: text_scores(self.corpus, s, run, request, ids, adjust))
            ranked = camtrap_hits.by_event(self.corpus, request.filters, ranked)  # one result per event, if asked
            copies: dict[int, list[int]] = {}
            if s.near_copies:  # re-encodes, rotations, crops of one picture: one result (core.vectors.near_copies)
                with run.timed("near_copies"):
                    ranked, copies = near_copies.fold_results(self.corpus, ranked, k)
                if copies:
                    stages["near_copies"] = {"results": len(copies), "folded": sum(map(len, copies.values()))}
            hits = self._matched(text, similar(self.corpus, s, run, request, run.hits(ranked[:k]), adjust, stages))
            for h in hits:
                h.near_copies = copies.get(h.photo_id)
            camtrap_hits.attach(self.corpus, hits, request.filters)
            if hidden_empty:
                vector = adjust(run.embed_text(request.query)) if request.query else None
                shown = hidden_among(self.corpus, vector, [h.photo_id for h in hits], hidden_empty[0], k)
                if shown:
                    run.notice(empty_notice(shown))
            for h in hits:
                h.covers = covers.get(h.photo_id)
            self._say_unembedded(run, pool, len(hits), k)
            run.check()
            if request.answer:
                from core.methods.answer import checked_yes, run_answer

                stages["answer"] = run_answer(run, request.query, [h.photo_id for h in hits],
                                              checked=checked_yes(stages.get("rerank")))
        if stages.get("visret"):  # on the hits now; not part of what the stage reports
            stages["visret"].pop("picture_similarity", None)
            stages["visret"].pop("picture_vectors", None)
        for text in run.budget.notices():
            run.notice(text)
        run.timings["total"] = (time.perf_counter() - t0) * 1000
        stages["cache"] = difference(self.backends.snapshot(), before)
        stages["budget"] = {"used": dict(run.budget.used), "limits": dict(run.budget.limits)}
        standin = scales.standin_similarity(s.embedder, [getattr(h.photo, "source", "") for h in hits if h.photo])
        if standin:  # the similarities are a stand-in's: the page and the command line say they mean nothing
            stages["standin_similarity"] = standin
        stages["score"] = scales.ranking(stages)  # what each hit's `score` is (core.search.scales)
        result = SearchResult(query=request.query or "(example photo)", method=request.name, hits=hits,
                              timings_ms=run.timings, backends=self.backends.describe(),
                              notices=list(self.corpus.startup_notices) + run.notices, stages=stages,
                              filters=request.filters.to_json() if request.filters else {},
                              pool_size=None if pool is None else len(pool), label=request.label)
        run.emit(Done(result))
        return result

    def stream(self, request: SearchRequest, cancel: CancelToken | None = None,
               heartbeat_s: float | None = None) -> Iterator[Event]:
        """The events of one search as they happen, ending with Done, Failed or Cancelled, from a thread of its own
        (core.search.event_stream). Closing the iterator early (a closed page, a newer search) cancels the search.
        With `heartbeat_s`, each quiet spell of that many seconds yields a Waiting event: the step still running
        and how long it has run."""
        return event_stream.events(lambda on_event, token: self.search(request, on_event=on_event, cancel=token),
                                   request.name, cancel, heartbeat_s)

    def answer(self, question: str, photo_ids: Sequence[int], limit: int | None = None,
               cancel: CancelToken | None = None) -> dict[str, Any]:
        """Answer `question` from the given catalog photos (best first) with the answer stage: the photo reader
        when one is configured, else the photos' notes and the text LLM. Returns the stage's dict (text,
        cited_ids, source, ...) plus "notices"."""
        from core.methods.answer import run_answer

        s = self.settings
        run = Run(self.corpus, self.backends, s, Budget(s.max_generated, s.max_judge_calls), None,
                  cancel or CancelToken(), rules=self.rules(question))
        ids = [int(i) for i in photo_ids]
        out = run_answer(run, question, ids, limit=limit or max(1, len(ids)))
        return {**out, "notices": list(run.notices)}

    def standin_similarity(self) -> str | None:
        """The offline stand-in embedder whose similarities this engine's searches and dialogues give, or None
        (core.search.scales.standin_similarity): the page and the command line call them stand-in scores."""
        return scales.standin_similarity(self.settings.embedder)

    def dialogue(self, description: str, filters=None, k: int | None = None):
        """A PlugIR dialogue session on this engine's corpus and cached backends."""
        from core.methods.plugir import DialogueSession

        self.corpus.follow_catalog()
        return DialogueSession(self.corpus, description, settings=self.settings, backends=self.backends,
                               filters=filters, k=k, rules=self.rules(description))

    # ---- the right of way (core.workers.right_of_way), for the web app's own work around a search --------------
    @staticmethod
    def plain():
        """Held while a plain search's page is being sent: costly work waits at its next step (bounded)."""
        return ROAD.plain()

    @staticmethod
    def give_way() -> None:
        """Costly work (a costly search's page update, a label write) waits a moment for running plain searches."""
        ROAD.give_way()

    def rules(self, text: str = "") -> RuleBooks:
        """The rule books a search started now reads (fixed for the whole search); with the request's `text`, a
        request naming a world's species is read by that world's book on a mixed collection too
        (core.search.reading)."""
        return for_request(self._rules(), text)

    # ---- stages ---------------------------------------------------------------------------------
    @staticmethod
    def is_costly(request: SearchRequest) -> bool:
        """Whether the search calls costly backends (every preset but Fast): it takes a costly slot, its model
        work goes to the costly lane, and it gives way to plain searches (core.workers.right_of_way)."""
        return request.method != "baseline" or request.rerank != "none" or request.coverage or request.answer

    def _feedback(self, request: SearchRequest, stages: dict) -> Callable[[np.ndarray], np.ndarray]:
        rel, non = list(request.relevant_ids), list(request.nonrelevant_ids)
        if not rel and not non:
            return lambda v: v
        s = self.settings
        rv = photo_vectors(self.corpus, rel) if rel else None
        nv = photo_vectors(self.corpus, non) if non else None
        stages["feedback"] = {"relevant": rel, "nonrelevant": non, "alpha": s.rocchio_alpha,
                              "beta": s.rocchio_beta, "gamma": s.rocchio_gamma}
        return lambda v: rocchio(v, rv, nv, s.rocchio_alpha, s.rocchio_beta, s.rocchio_gamma)

    def _first_stage(self, run: Run, request: SearchRequest, depth: int, pool, adjust, stages: dict) -> Ranked:
        s, query = self.settings, request.query
        if request.method == "visret":
            ranked, stages["visret"] = run_visret(
                run, query, m=request.m or s.visret_m, depth=depth, pool=pool, seeds=request.seeds,
                examples=request.examples, example_ids=request.example_ids, adjust=adjust, organism=request.organism,
                organism_name=request.organism_name)
            stages["first"] = {"method": "visret", "text": stages["visret"]["instruction"]}
            return ranked
        if request.method == "rewrite":
            with run.timed("rewrite"):
                instr = visual_instruction(run.backends.llm, query, run.notices, book=run.book)
            with run.timed("search"):
                ranked, per = rewrite_rank(run, instr, depth, pool, adjust, request.organism, request.organism_name,
                                           query)
                ranked = self._with_examples(run, request, ranked, depth, pool, adjust, stages)
            stages["first"] = {"method": "rewrite", "text": " | ".join(instr.descriptions)}
            stages["rewrite"] = {"text": " | ".join(instr.descriptions), **instr.to_json(),
                                 "per_organism": [[i for i, _ in r[:20]] for r in per], "organism": request.organism,
                                 "organism_name": request.organism_name}
            return ranked
        with run.timed("search"):
            ranked = run.rank(adjust(run.embed_text(query)), depth, pool) if query else []
            ranked = self._with_examples(run, request, ranked, depth, pool, adjust, stages)
        stages["first"] = {"method": "baseline", "text": query, "examples": len(request.examples) +
                           len(request.example_ids)}
        return ranked

    def _catalog_text(self, run: Run, request: SearchRequest, depth: int, pool, stages: dict, group=None,
                      adjust=lambda v: v):
        """The catalog's full-text ranking of the query's words (core.search.catalog_text), with a group word's
        taxa as further words ('bird' (Aves)), or None: the setting is off, there are no words, or the catalog
        cannot search text."""
        catalog = getattr(self.corpus, "catalog", None)
        if not self.settings.hybrid_retrieval or not request.query or catalog is None:
            return None
        taxa = [(f"{group.word} ({t})", t) for t in group.taxa] if group is not None else []
        with run.timed("catalog_text"):
            text = catalog_text.search(catalog, request.query, depth, pool, taxa,
                                       lambda ids, n: run.rank(adjust(run.embed_text(request.query)), n, ids))
        stages["catalog_text"] = {**text.to_json(), "weights": {"vectors": self.settings.hybrid_vector_weight,
                                                                "catalog": self.settings.hybrid_text_weight},
                                  "lambda": self.settings.hybrid_rrf_lambda}
        if text.ranked:
            run.notice(catalog_text.notice_text(text))
            log.info("catalog words %s matched %d photos", text.matched_words(), text.total)
        return text

    def _say_unembedded(self, run: Run, pool, shown: int, k: int) -> None:
        """When fewer than k photos are shown and some the filters let in have no picture to compare (a Camtrap
        DP package's media on a host the ingest did not reach), say how many, and how they can be found."""
        count = getattr(self.corpus, "unembedded", None)
        if shown >= k or count is None:
            return
        n = count(pool)
        if n:
            run.notice(f"{n:,} photo{'s' if n != 1 else ''}{' that pass the filters' if pool is not None else ''} "
                       f"{'have' if n != 1 else 'has'} no picture on this machine to compare (kept without "
                       "the file, or not embedded with this model yet): the picture search cannot find them, but "
                       "a search for the words their catalog record holds (a species name) can; ingesting them "
                       "again once their files can be had adds their pictures")

    @staticmethod
    def _matched(text, hits: list) -> list:
        """`hits` with the query's words their catalog text holds (Hit.catalog_match)."""
        found = catalog_text.matches_of(text, [h.photo_id for h in hits])
        for h in hits:
            h.catalog_match = found.get(h.photo_id)
        return hits

    def _group(self, run: Run, request: SearchRequest, stages: dict):
        """The group the query's subject names in the catalog (core.search.groups), or None: the setting is off,
        there is no query, or the catalog records no such group."""
        if not self.settings.group_words or not request.query:
            return None
        with run.timed("group"):
            group = find_group(self.corpus, request.query, request.filters, run.book,
                               [b for _, b in run.rules.sources])  # a mixed collection: the world's groups too
        if group is not None:
            stages["group"] = group.to_json()
        return group

    def _group_first(self, run: Run, group, request: SearchRequest, ranked: Ranked, depth: int, adjust) -> Ranked:
        """`ranked` with the group's photos first and a notice saying so (core.search.groups.group_first; up to
        `depth` group photos the ranking did not reach are ranked by the query's words); as it is without a
        group. The notice is what it says of the photos shown, said whenever the group's photos are among them."""
        if group is None:
            return ranked
        unplaced = self.corpus.untaxed([i for i, _ in ranked])
        reordered = group_first(ranked, group, depth,
                                lambda ids, n: run.rank(adjust(run.embed_text(request.query)), n, ids), unplaced)
        k = request.k or self.settings.k
        shown = [i for i, _ in reordered[:k]]
        last = max((n for n, i in enumerate(shown) if i in group.ids), default=-1)
        if last >= 0:  # said whenever the group's photos head the page, whoever put them first (the catalog's text)
            text = group_notice(group, sum(1 for i in shown[:last + 1] if i in unplaced))
            run.notices[:] = [n for n in run.notices if not n.startswith(f"“{group.word}” was read as the group")]
            run.notice(text)  # after the judge: what it says of the final order replaces what it said before
        if [i for i, _ in reordered] != [i for i, _ in ranked]:
            log.info("group word %r read as %s (%d photos): group photos first", group.word, group.taxon,
                     len(group.ids))
        return reordered

    @staticmethod
    def _with_examples(run: Run, request: SearchRequest, ranked: Ranked, depth: int, pool, adjust,
                       stages: dict) -> Ranked:
        """Example photos: alone, their own similarity ranking (one photo) or fused lists; with words, fused
        (RRF) with the text ranking."""
        if not request.has_examples:
            return ranked
        vectors = example_lists(run, request.examples, request.example_ids, depth, pool, adjust)
        if not ranked and len(vectors) == 1:
            stages["examples"] = {"count": 1, "fusion": "none"}
            return vectors[0]
        lists = ([[i for i, _ in ranked]] if ranked else []) + [[i for i, _ in r] for r in vectors]
        stages["examples"] = {"count": len(vectors), "fusion": "rrf"}
        return rrf(lists, run.settings.rrf_lambda)[:depth]
