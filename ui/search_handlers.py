"""Handlers of the search view. One search = one stream of engine events: a quick preview, the preset's own
first results, each generated picture, judging progress, notices, and the final ranking (the same one the
CLI prints and the evaluation scores). A new search from the same page cancels the one still running; Stop
and a closed page cancel it too. Thin: they call core and log what happened."""
from __future__ import annotations

import logging
import time
from typing import Any, Iterator

import gradio as gr

from core.cancel import REPLACED, LatestSearches
from core.errors import EcoLensError, InputError
from core.events import Cancelled, Done, Failed, FirstResults, Notice, PhotoJudged, StageEvent, Visualization
from core.labels import latest
from core.presets import request_for
from core.records import Filters
from core.request import clean_query
from core.sessionlog import NOT_RELEVANT, RELEVANT, RequestRecord, SessionLog, StageRecord, ranking_of
from core.settings import masked
from ui import present
from ui import strings as S
from ui.forms import parse_filters, read_upload, shows_errors, user_message, warn
from ui.photos import PhotoFiles

log = logging.getLogger(__name__)


def new_state() -> dict[str, Any]:
    return {"session_id": None, "query": "", "method": "", "hits": [], "stages": {}, "selected": None,
            "filters": Filters(), "k": 20, "notices": []}


def session_key(request: gr.Request | None) -> str:
    """Which browser page a call comes from (the API without a session shares one key)."""
    return getattr(request, "session_hash", None) or "api"


class SearchHandlers:
    def __init__(self, engine: Any, log: SessionLog, ready=lambda: None):
        """`engine`: core.engine.SearchEngine; `ready()` raises InputError while the collection is prepared."""
        self.engine, self.log, self.settings, self.ready = engine, log, engine.settings, ready
        self.running = LatestSearches()
        self.photos = PhotoFiles(engine)

    # ---- helpers ----------------------------------------------------------------------------------
    def _session(self, state: dict[str, Any], kind: str, title: str) -> int:
        if state.get("session_id") is None:
            state["session_id"] = self.log.start_session(kind, title[:80])
        return state["session_id"]

    def _log(self, state: dict[str, Any], result: Any, knobs: dict[str, Any]) -> None:
        """Record the search in the session log; when that fails (the database stays locked, the disk is full)
        the result is still shown, with a notice that it is not in the history."""
        try:
            self._write_log(state, result, knobs)
        except EcoLensError as exc:
            log.error("search %r was not logged: %s", result.query, exc)
            state["notices"] = list(state.get("notices") or []) + [S.NOT_LOGGED.format(reason=exc.message)]

    def _write_log(self, state: dict[str, Any], result: Any, knobs: dict[str, Any]) -> None:
        stages = [StageRecord("final", ranking_of(result.hits), {"timings_ms": result.timings_ms,
                                                                 "notices": result.notices})]
        stages += [StageRecord(name, [], art if isinstance(art, dict) else {"value": art})
                   for name, art in (result.stages or {}).items()]
        self.log.log_request(RequestRecord(
            session_id=self._session(state, "search", result.query), query=result.query, method=result.method,
            settings={**masked(self.settings), **knobs}, models=result.backends, filters=result.filters,
            stages=stages))

    def _log_cancelled(self, state: dict[str, Any], request: Any, reason: str, knobs: dict[str, Any]) -> None:
        note = f"cancelled: {reason}"
        try:
            self.log.log_request(RequestRecord(
                session_id=self._session(state, "search", request.query or "(example photo)"),
                query=request.query or "(example photo)", method=request.name,
                settings={**masked(self.settings), **knobs}, models={},
                filters=request.filters.to_json() if request.filters else {},
                stages=[StageRecord("final", [], {"notices": [note], "cancelled": True})]))
        except EcoLensError as exc:  # nothing is on screen to attach a notice to; the log line says it
            log.error("a cancelled search was not logged: %s", exc)

    @staticmethod
    def _take(state: dict[str, Any], result: Any) -> None:
        state.update(query=result.query, method=result.method, hits=[h.to_json() for h in result.hits],
                     stages=dict(result.stages or {}), selected=None, notices=list(result.notices))

    def outputs(self, state: dict[str, Any], status: str):
        """(gallery, status, notices, visualizations, evidence, explanation, state): the view's outputs. Photos
        and pictures are served copies (ui.photos); photos that cannot be shown are named in the notices."""
        stages = state.get("stages") or {}
        if state.get("searches"):
            status = S.SEARCH_NO.format(n=state["searches"]) + " · " + status
        gallery, missing = self.photos.gallery(state["hits"], stages)
        notices = list(state.get("notices") or []) + [m for m in missing if m not in (state.get("notices") or [])]
        return (gallery, status, present.notices_md(notices),
                self.photos.pictures(present.visualization_items(stages)), present.evidence_md(stages),
                S.SELECT_HINT, state)

    # ---- search -----------------------------------------------------------------------------------
    @shows_errors
    def search(self, query: str, preset: str, k: float, m: float, rerank_k: float, rerank_mode: str,
               want_answer: bool, taxon: str, date_from: str, date_to: str, months: list[str], bbox: str,
               license: str, example: str | None, state: dict[str, Any] | None,
               request: gr.Request = None) -> Iterator[tuple]:
        """Run the preset's search and stream what it does; the final ranking replaces the first results."""
        self.ready()
        state = dict(state or new_state())
        image = read_upload(example, self.settings.max_upload_mb)
        if image is None or (query or "").strip():
            query = clean_query(query)
        else:
            query = ""
        filters = parse_filters(taxon, date_from, date_to, months, bbox, license)
        if query != state.get("query"):
            state["seeds"] = None  # a new query starts from the default seeds
        options = dict(k=k or self.settings.k, m=m or 1, rerank_k=rerank_k or 1, answer=bool(want_answer),
                       seeds=state.get("seeds"), filters=filters, examples=[image] if image is not None else [])
        req = request_for(preset, query, rerank_mode=rerank_mode or "full", preview=True, **options)
        req.validate()
        knobs = {"preset": preset, "m": req.m, "rerank_k": req.rerank_k, "rerank": req.rerank, "seeds": req.seeds,
                 "examples": len(req.examples), "answer": req.answer}
        state.update(filters=filters, k=req.k, preset=preset, searches=state.get("searches", 0) + 1, notices=[])
        key = session_key(request)
        token, replaced = self.running.start(key)
        if replaced:
            state["notices"].append(S.PREVIOUS_CANCELLED)
        try:
            yield from self._stream(state, req, token, knobs)
        finally:
            self.running.finish(key, token)

    def _stream(self, state: dict[str, Any], req: Any, token: Any, knobs: dict[str, Any]) -> Iterator[tuple]:
        t0 = time.perf_counter()
        lines: list[str] = []
        heavy = req.method != "baseline" or req.rerank != "none" or req.coverage or req.answer

        def status(*extra: str) -> str:
            return " · ".join([*lines, *extra])

        shown = False  # whether this search has put results on screen yet

        for event in self.engine.stream(req, cancel=token):
            if token.cancelled and not isinstance(event, (Done, Cancelled)):
                continue  # stopped or replaced: show nothing more of this one
            if isinstance(event, FirstResults) and heavy:
                shown = True
                state["hits"] = list(event.hits)
                what = S.PREVIEW if event.stage == "preview" else S.FIRST_STAGE
                lines.append(S.FIRST_RESULTS.format(n=len(event.hits), ms=(time.perf_counter() - t0) * 1000,
                                                    what=what))
                yield self.outputs(state, status(S.MORE_COMING))
            elif isinstance(event, Visualization) and event.ok:
                vis = state.setdefault("stages", {}).setdefault("visret", {}).setdefault("visualizations", [])
                vis.append({"path": event.path, "seed": event.seed})
                yield self.outputs(state, status(S.MORE_COMING))
            elif isinstance(event, PhotoJudged) and (event.done % 10 == 0 or event.done == event.total):
                yield self.outputs(state, status(S.JUDGED.format(done=event.done, total=event.total)))
            elif isinstance(event, StageEvent) and event.status == "done" and heavy and event.stage in S.STAGE_NAMES:
                lines.append(S.STAGE_DONE.format(stage=S.STAGE_NAMES[event.stage], ms=float(event.ms or 0)))
            elif isinstance(event, Notice) and heavy:
                state["notices"] = state.get("notices", []) + [event.text]
            elif isinstance(event, Failed):
                exc = event.error
                if isinstance(exc, EcoLensError) and not shown:  # bad input found by the engine (an unknown
                    raise exc                                     # taxon): nothing is on screen, say it plainly
                # a failed later stage keeps the results on screen and says why
                gr.Warning(user_message(exc) if isinstance(exc, EcoLensError) else S.STAGE_FAILED)
                yield self.outputs(state, status(S.DONE))
                return
            elif isinstance(event, Cancelled):
                self._log_cancelled(state, req, event.reason, knobs)
                if event.reason != REPLACED:  # a newer search owns the page; any other reason is said here
                    yield self.outputs(state, status(S.CANCELLED.format(reason=event.reason)))
                return
            elif isinstance(event, Done):
                result = event.result
                previous = [n for n in state.get("notices", []) if n == S.PREVIOUS_CANCELLED]
                self._take(state, result)
                state["notices"] = previous + state["notices"]
                state["seeds"] = [v["seed"] for v in (result.stages.get("visret") or {}).get("visualizations", [])
                                  if v.get("organism", 0) == 0] or None
                self._log(state, result, knobs)
                done = S.RESULTS_DONE.format(n=len(result.hits), ms=result.timings_ms.get("total", 0.0),
                                             method=S.method_name(result.method))
                lines.append(done)
                yield self.outputs(state, status(S.DONE))

    def stop(self, request: gr.Request = None) -> str:
        """Stop this page's running search."""
        stopped = self.running.cancel(session_key(request), "you pressed Stop")
        return S.STOPPED if stopped else S.NOTHING_TO_STOP

    def page_closed(self, request: gr.Request = None) -> None:
        """The page was closed or reloaded: its search is no longer wanted."""
        self.running.cancel(session_key(request), "the page was closed")

    @shows_errors
    def regenerate(self, query: str, preset: str, k: float, m: float, rerank_k: float, rerank_mode: str,
                   want_answer: bool, taxon: str, date_from: str, date_to: str, months: list[str], bbox: str,
                   license: str, example: str | None, state: dict[str, Any] | None, request: gr.Request = None):
        """Search again with new VisRet seeds (fresh pictures)."""
        state = dict(state or new_state())
        seeds = state.get("seeds") or list(range(int(m or 1)))
        state["seeds"] = [max(seeds) + 1 + i for i in range(int(m or 1))]
        state["query"] = clean_query(query)  # the same query keeps the seeds just chosen
        yield from self.search(query, preset, k, m, rerank_k, rerank_mode, want_answer, taxon, date_from, date_to,
                               months, bbox, license, example, state, request)

    @shows_errors
    def drop_visualization(self, query: str, preset: str, k: float, m: float, rerank_k: float, rerank_mode: str,
                           want_answer: bool, taxon: str, date_from: str, date_to: str, months: list[str],
                           bbox: str, license: str, example: str | None, state: dict[str, Any] | None,
                           request: gr.Request = None):
        """Search again without the selected generated picture."""
        state = dict(state or new_state())
        seeds = list(state.get("seeds") or [])
        sel = state.get("selected_vis")
        if sel is None or not 0 <= sel < len(seeds) or len(seeds) < 2:
            gr.Warning(S.SELECT_VIS_HINT)
            yield self.outputs(state, S.SELECT_VIS_HINT)
            return
        state["seeds"] = seeds[:sel] + seeds[sel + 1:]
        state["query"] = clean_query(query)
        yield from self.search(query, preset, k, len(state["seeds"]), rerank_k, rerank_mode, want_answer, taxon,
                               date_from, date_to, months, bbox, license, example, state, request)

    def select_visualization(self, state: dict[str, Any], evt: gr.SelectData) -> dict[str, Any]:
        state = dict(state or new_state())
        state["selected_vis"] = evt.index if isinstance(evt.index, int) else None
        return state

    # ---- selection, more like this, feedback -------------------------------------------------------
    def select(self, state: dict[str, Any], evt: gr.SelectData) -> tuple[str, dict[str, Any]]:
        state = dict(state or new_state())
        index = evt.index if isinstance(evt.index, int) else (evt.index or [0])[0]
        if not state["hits"] or index is None or index >= len(state["hits"]):
            return S.SELECT_HINT, state
        state["selected"] = index
        return present.explanation_html(state["hits"][index], state.get("stages") or {}), state

    def _show(self, state: dict[str, Any], req: Any, label: str):
        """Run a short search to the end and show it (more like this, refine with labels)."""
        result = self.engine.search(req)
        state["searches"] = state.get("searches", 0) + 1
        self._take(state, result)
        warn(result.notices)
        self._log(state, result, {"preset": label})
        ms = result.timings_ms.get("total", 0.0)
        return self.outputs(state, S.RESULTS_DONE.format(n=len(result.hits), ms=ms, method=S.method_name(label)))

    @shows_errors
    def more_like_this(self, state: dict[str, Any]):
        self.ready()
        state = dict(state or new_state())
        if state.get("selected") is None:
            gr.Warning(S.SELECT_HINT)
            return self.outputs(state, S.SELECT_HINT)
        hit = state["hits"][state["selected"]]
        req = request_for("Fast", "", k=state.get("k", 20), filters=state.get("filters"), example_ids=[hit["id"]])
        return self._show(state, req, "more-like-this")

    @shows_errors
    def refine_with_labels(self, state: dict[str, Any]):
        """Relevance feedback: the labels given to this query move the query vector (Rocchio, in core)."""
        self.ready()
        state = dict(state or new_state())
        if not state.get("hits") or not state.get("query") or state.get("query") == "(example photo)":
            raise InputError(S.NO_RESULTS, "search with words first")
        labels = self.log.labels(query=state["query"])
        rel = sorted({lb.photo_id for lb in latest(labels) if lb.label == RELEVANT})
        non = sorted({lb.photo_id for lb in latest(labels) if lb.label == NOT_RELEVANT} - set(rel))
        if not rel and not non:
            raise InputError(S.NO_LABELS_YET, "label photos in the Label tab, then come back")
        req = request_for("Fast", state["query"], k=state.get("k", 20), filters=state.get("filters"),
                          relevant_ids=rel, nonrelevant_ids=non)
        return self._show(state, req, "feedback")
