"""Handlers of the search view. One search = one stream of engine events: a quick preview, the preset's own
first results, each generated picture, judging progress, notices, and the final ranking (the same one the
CLI prints and the evaluation scores). A new search from the same page cancels the one still running; Stop
and a closed page cancel it too. Thin: they call core and log what happened."""
from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any, Iterator

import gradio as gr

from core.camtrap.filters import camtrap_filters
from core.contracts.cancel import REPLACED, LatestSearches
from core.contracts.errors import EcoLensError, InputError
from core.contracts.events import (
    Cancelled,
    Done,
    Failed,
    FirstResults,
    Notice,
    PhotoJudged,
    StageEvent,
    Visualization,
    Waiting,
)
from core.contracts.records import Filters
from core.contracts.search_request import clean_query
from core.contracts.sessionlog import NOT_RELEVANT, RELEVANT, SessionLog
from core.labels import latest
from core.search.presets import request_for
from ui import present
from ui import strings as S
from ui.camtrap_form import CamtrapPage, logged_in
from ui.forms import parse_filters, read_upload, shows_errors, user_message, warn
from ui.forms import photo_id as read_photo_id
from ui.photos import PhotoFiles
from ui.search_form import SearchForm
from ui.search_outputs import SearchOutputs
from ui.search_record import SearchRecord
from ui.status import SearchStatus, seconds

log = logging.getLogger(__name__)
REPLACED_WAIT_S = 3.0  # how long a new search waits for the one it replaced to stop showing updates
HEARTBEAT_S = 1.0  # a running search redraws its status line after this many quiet seconds
UPDATE_GAP_S = 0.5  # progress updates of one search at most this often (results and the end: at once)


def new_state() -> dict[str, Any]:
    return {"session_id": None, "query": "", "method": "", "preset": "", "hits": [], "stages": {},
            "filters": Filters(), "k": 20, "notices": [], "example": None}


def session_key(request: gr.Request | None) -> str:
    """Which browser page a call comes from (the API without a session shares one key)."""
    return getattr(request, "session_hash", None) or "api"


class SearchHandlers(SearchOutputs):
    """The search view's handlers; what they show (the page's outputs): ui.search_outputs."""

    def __init__(self, engine: Any, log: SessionLog, ready=lambda: None, camtrap: Any = None):
        """`engine`: core.search.engine.SearchEngine; `ready()` raises InputError while the collection is prepared;
        `camtrap`: core.camtrap.desk.CamtrapDesk (None: no camera-trap data model)."""
        self.engine, self.log, self.settings, self.ready = engine, log, engine.settings, ready
        self.camtrap = CamtrapPage(camtrap)
        self.running = LatestSearches()
        self.photos = PhotoFiles(engine)
        # the photo each page has selected (its hit as clicked): kept while a search streams in
        self.selected: dict[str, dict[str, Any]] = {}
        # the pages whose gallery shows a photo highlighted (the browser keeps a highlight on its place in the
        # gallery while the photos under it change: outputs() moves it with the photo, or clears it)
        self.highlighted: set[str] = set()
        self.record = SearchRecord(log, self.settings)
        self.form = SearchForm(engine)

    @staticmethod
    def _take(state: dict[str, Any], result: Any) -> None:
        state.update(query=result.query, method=result.method, hits=[h.to_json() for h in result.hits],
                     stages=dict(result.stages or {}), notices=list(result.notices), scale=None, like=False)

    # ---- search -----------------------------------------------------------------------------------
    @shows_errors
    def search(self, query: str, preset: str = "Fast", k: float | None = None, m: float | None = None,
               rerank_k: float | None = None, rerank_mode: str | None = None, want_answer: bool = False,
               taxon: str | None = None, date_from: str | None = None, date_to: str | None = None,
               months: list[str] | None = None, bbox: str | None = None, license: str | None = None,
               example: str | None = None, state: dict[str, Any] | None = None,
               deployment: str | None = None, time_of_day: str | None = None,
               include_empty: bool = False, by_event: bool = False, category: str | None = None,
               species: str | None = None, classified: str | None = None,
               request: gr.Request = None) -> Iterator[tuple]:
        """Run the preset's search and stream what it does; the final ranking replaces the first results.
        Every argument but the query may be left out (scripts): the settings' defaults apply. The camera-trap
        filters (deployment .. classified, core.camtrap.filters) come after the others, so older calls work."""
        self.ready()
        state = dict(state or new_state())
        image = read_upload(example, self.settings.max_upload_mb)
        if image is None or (query or "").strip():
            query = clean_query(query)
        else:
            query = ""
        filters = parse_filters(taxon, date_from, date_to, months, bbox, license)
        camtrap = camtrap_filters(deployment, time_of_day, include_empty, by_event, category, species, classified)
        if camtrap is not None:
            filters = replace(filters, camtrap=camtrap)
        state.update(camtrap=bool(camtrap is not None or self.camtrap.deployment_keys()),
                     by_event=bool(camtrap and camtrap.by_event), logged_in=logged_in(request))
        if query != state.get("query"):
            state["seeds"] = None  # a new query starts from the default seeds
        options = dict(k=k or self.settings.k, m=m or self.settings.visret_m,
                       rerank_k=rerank_k or self.settings.rerank_k, answer=bool(want_answer),
                       seeds=state.get("seeds"), filters=filters, examples=[image] if image is not None else [])
        req = request_for(preset, query, rerank_mode=rerank_mode or "full", preview=True, **options)
        req.validate()
        knobs = {"preset": preset, "m": req.m, "rerank_k": req.rerank_k, "rerank": req.rerank, "seeds": req.seeds,
                 "examples": len(req.examples), "answer": req.answer}
        state.update(filters=filters, k=req.k, preset=preset, searches=state.get("searches", 0) + 1, notices=[],
                     example=self.photos.example(example) if image is not None else None)
        key = session_key(request)
        self.selected.pop(key, None)  # a new search starts with nothing selected
        token, replaced = self.running.start(key)
        if replaced is not None:
            state["notices"].append(S.PREVIOUS_CANCELLED)
            # the stopped search stops within a fraction of a second; until it has, it could still show an
            # update after this search's first one
            if not replaced.wait(REPLACED_WAIT_S):
                log.warning("the replaced search of %s did not stop within %s s", key, REPLACED_WAIT_S)
        outcome: dict[str, bool] = {}
        try:
            yield from self._stream(state, req, token, knobs, key, outcome)
        except EcoLensError:
            outcome["ended"] = True  # bad input: said on the page, nothing to record
            raise
        finally:
            self.running.finish(key, token)
            if not outcome.get("ended"):  # the page stopped listening before the search ended (closed, reloaded)
                token.cancel("the page stopped waiting for it")  # keeps an earlier reason (Stop, a newer search)
                self.record.unfinished(state, req, f"cancelled: {token.reason}", knobs)

    def _stream(self, state: dict[str, Any], req: Any, token: Any, knobs: dict[str, Any],
                key: str, outcome: dict[str, bool]) -> Iterator[tuple]:
        """The page updates of one search; outcome["ended"] is set once the search's end is recorded. The
        status line (ui.status) says what is on screen and what is being done; a quiet second redraws it, so
        a wait for a slow backend counts up on screen."""
        status = SearchStatus(state.get("searches"), self.settings)
        heavy = self.engine.is_costly(req)
        if not heavy:  # a plain search holds the right of way until its page is sent (its outputs cost the
            with self.engine.plain():  # server as much as the search did)
                yield from self._updates(state, req, token, knobs, key, outcome, status, heavy)
            return
        for update in self._updates(state, req, token, knobs, key, outcome, status, heavy):
            self.engine.give_way()  # each page update of a costly search waits for running plain searches (bounded)
            yield update

    def _updates(self, state: dict[str, Any], req: Any, token: Any, knobs: dict[str, Any], key: str,
                 outcome: dict[str, bool], status: SearchStatus, heavy: bool) -> Iterator[tuple]:
        shown = False  # whether this search has put results on screen yet
        last = [0.0]  # when the page was last updated

        def due() -> bool:
            """A progress update (a picture, judging, a step) is shown at most every UPDATE_GAP_S: each one costs
            the web server the whole page (paths checked, photos copied), the same CPU a plain search needs.
            What a skipped update carried shows with the next one (the heartbeat comes within a second)."""
            if time.monotonic() - last[0] < UPDATE_GAP_S:
                return False
            last[0] = time.monotonic()
            return True

        for event in self.engine.stream(req, cancel=token, heartbeat_s=HEARTBEAT_S if heavy else None):
            if token.cancelled and not isinstance(event, (Done, Cancelled)):
                continue  # stopped or replaced: show nothing more of this one
            status.on(event)
            if isinstance(event, FirstResults) and heavy:
                shown = True
                last[0] = time.monotonic()
                state["hits"] = list(event.hits)
                state["scale"] = "similarity" if event.stage == "preview" else None  # the preview: to the words
                self.record.open(state, req)  # the page's first update carries it (bad input opens none)
                yield self.outputs(state, status.line(), key, status.details())
            elif isinstance(event, Visualization) and event.ok:
                vis = state.setdefault("stages", {}).setdefault("visret", {}).setdefault("visualizations", [])
                vis.append({"path": event.path, "seed": event.seed})
                if due():
                    yield self.progress(state, status.line(), status.details(), pictures=True)
            elif isinstance(event, PhotoJudged) and (event.done % 10 == 0 or event.done == event.total):
                if due() or event.done == event.total:  # the last photo checked: always shown
                    yield self.progress(state, status.line(), status.details())
            elif isinstance(event, (StageEvent, Waiting)) and heavy and shown:
                if due():
                    yield self.progress(state, status.line(), status.details())
            elif isinstance(event, Notice) and heavy:
                state["notices"] = state.get("notices", []) + [event.text]
            elif isinstance(event, Failed):
                exc = event.error
                if isinstance(exc, EcoLensError) and not shown:  # bad input found by the engine (an unknown
                    raise exc                                     # taxon): nothing is on screen, say it plainly
                message = (user_message(exc) if isinstance(exc, EcoLensError)
                           else S.STAGE_FAILED_WHY.format(error=type(exc).__name__))
                # a failed later stage keeps the results on screen and says why: in the notices (the page's and
                # the API's), the session log and ecolens.log
                state["notices"] = state.get("notices", []) + [message]
                log.warning("search %r (%s) stopped after its first results: %s", (req.query or "")[:80], req.name,
                            message if isinstance(exc, EcoLensError) else f"{type(exc).__name__}: {exc}"[:300])
                self.record.unfinished(state, req, f"failed: {message}", knobs)
                outcome["ended"] = True
                warn([message])
                yield self.outputs(state, status.ended(S.STOPPED_EARLY), key, status.details())
                return
            elif isinstance(event, Cancelled):
                self.record.unfinished(state, req, f"cancelled: {event.reason}", knobs)
                outcome["ended"] = True
                if event.reason != REPLACED:  # a newer search owns the page; any other reason is said here
                    yield self.outputs(state, status.ended(S.CANCELLED.format(reason=event.reason)), key,
                                       status.details())
                return
            elif isinstance(event, Done):
                result = event.result
                previous = [n for n in state.get("notices", []) if n == S.PREVIOUS_CANCELLED]
                self._take(state, result)
                state["notices"] = previous + state["notices"]
                state["seeds"] = [v["seed"] for v in (result.stages.get("visret") or {}).get("visualizations", [])
                                  if v.get("organism", 0) == 0] or None
                self.record.finished(state, result, knobs)
                outcome["ended"] = True
                yield self.outputs(state, status.finished(result), key,
                                   status.details(result.timings_ms.get("total", 0.0) / 1000))

    def stop(self, request: gr.Request = None) -> str:
        """Stop this page's running search."""
        stopped = self.running.cancel(session_key(request), "you pressed Stop")
        return S.STOPPED if stopped else S.NOTHING_TO_STOP

    def page_closed(self, request: gr.Request = None) -> None:
        """The page was closed or reloaded: its search is no longer wanted."""
        self.running.cancel(session_key(request), "the page was closed")
        self.selected.pop(session_key(request), None)
        self.highlighted.discard(session_key(request))

    @shows_errors
    def regenerate(self, query: str, preset: str, k: float, m: float, rerank_k: float, rerank_mode: str,
                   want_answer: bool, taxon: str, date_from: str, date_to: str, months: list[str], bbox: str,
                   license: str, example: str | None, state: dict[str, Any] | None,
                   deployment: str | None = None, time_of_day: str | None = None,
                   include_empty: bool = False, by_event: bool = False, category: str | None = None,
                   species: str | None = None, classified: str | None = None, request: gr.Request = None):
        """Search again with new VisRet seeds (fresh pictures)."""
        state = dict(state or new_state())
        seeds = state.get("seeds") or list(range(int(m or 1)))
        state["seeds"] = [max(seeds) + 1 + i for i in range(int(m or 1))]
        state["query"] = clean_query(query)  # the same query keeps the seeds just chosen
        yield from self.search(query, preset, k, m, rerank_k, rerank_mode, want_answer, taxon, date_from, date_to,
                               months, bbox, license, example, state, deployment, time_of_day, include_empty,
                               by_event, category, species, classified, request=request)

    @shows_errors
    def drop_visualization(self, query: str, preset: str, k: float, m: float, rerank_k: float, rerank_mode: str,
                           want_answer: bool, taxon: str, date_from: str, date_to: str, months: list[str],
                           bbox: str, license: str, example: str | None, state: dict[str, Any] | None,
                           deployment: str | None = None, time_of_day: str | None = None,
                           include_empty: bool = False, by_event: bool = False, category: str | None = None,
                           species: str | None = None, classified: str | None = None,
                           request: gr.Request = None):
        """Search again without the selected generated picture."""
        state = dict(state or new_state())
        seeds = list(state.get("seeds") or [])
        sel = state.get("selected_vis")
        if sel is None or not 0 <= sel < len(seeds) or len(seeds) < 2:
            warn([S.SELECT_VIS_HINT])
            yield self.outputs(state, S.SELECT_VIS_HINT, session_key(request))
            return
        state["seeds"] = seeds[:sel] + seeds[sel + 1:]
        state["query"] = clean_query(query)
        yield from self.search(query, preset, k, len(state["seeds"]), rerank_k, rerank_mode, want_answer, taxon,
                               date_from, date_to, months, bbox, license, example, state, deployment, time_of_day,
                               include_empty, by_event, category, species, classified, request=request)

    def select_visualization(self, state: dict[str, Any], evt: gr.SelectData) -> dict[str, Any]:
        state = dict(state or new_state())
        state["selected_vis"] = evt.index if isinstance(evt.index, int) else None
        return state

    # ---- selection, more like this, feedback -------------------------------------------------------
    def select(self, state: dict[str, Any], evt: gr.SelectData, request: gr.Request = None):
        """A click on a result: remember it for this page (kept while later stages stream in) and explain it.
        Outputs: (explanation, selected photo id)."""
        state = state or new_state()
        index = evt.index if isinstance(evt.index, int) else (evt.index or [0])[0]
        if not state.get("hits") or index is None or index >= len(state["hits"]):
            return S.SELECT_HINT, None
        key = session_key(request)
        self.selected[key] = dict(state["hits"][index])
        self.highlighted.add(key)
        return self.explanation(state, key), int(self.selected[key]["id"])

    def _show(self, state: dict[str, Any], req: Any, method: str, key: str, like: str = ""):
        """Run a short search to the end and show it (more like this, refine with labels); it is logged under
        the method it really is (e.g. baseline+feedback). `like`: what a search by one photo of the catalog is
        called ('more like photo 12 (Cobalt Pondhopper)'): its query on the page, in marks and in the history."""
        result = self.engine.search(req)
        state["searches"] = state.get("searches", 0) + 1
        self._take(state, result)
        state["preset"], state["method"], state["example"] = S.method_name(method), method, None
        state["like"] = bool(like)
        if like:
            state["query"] = like
        warn(result.notices)
        self.record.finished(state, result, {"preset": method}, method=method, query=like or None)
        self.selected.pop(key, None)
        total = result.timings_ms.get("total", 0.0) / 1000
        line = S.RESULTS_DONE.format(photos=S.counted(len(result.hits), "photo", "photos"),
                                     method=S.method_name(method), time=seconds(total))
        return self.outputs(state, f"{S.SEARCH_NO.format(n=state['searches'])} · {line}", key,
                            f"- {S.TOTAL_TOOK.format(time=seconds(total))}")

    @shows_errors
    def more_like_this(self, photo: Any = None, state: dict[str, Any] | None = None, request: gr.Request = None):
        """Photos like `photo` (a photo id: the selected one on the page, or any id a script sends)."""
        self.ready()
        state = dict(state or new_state())
        pid = read_photo_id(photo)
        key = session_key(request)
        if pid is None:
            warn([S.SELECT_HINT])
            return self.outputs(state, S.SELECT_HINT, key)
        req = request_for("Fast", "", k=state.get("k", 20), filters=state.get("filters"), example_ids=[pid])
        return self._show(state, req, "baseline+more-like-this", key, like=self._like_text(pid, state))

    def _like_text(self, pid: int, state: dict[str, Any]) -> str:
        """'more like photo 12 (Cobalt Pondhopper)': the photo named as on the page (its hit on screen, or the
        catalog's record when a script sends an id)."""
        hit = next((h for h in state.get("hits") or [] if int(h["id"]) == pid), None)
        if hit is None:
            found = self.engine.corpus.photos([pid])
            hit = {"id": pid, "common_name": found[0].common_name, "taxon": found[0].scientific_name,
                   "path": found[0].path} if found else {"id": pid}
        return S.LIKE_PHOTO.format(photo=pid, name=present.name_of(hit))

    @shows_errors
    def refine_with_labels(self, state: dict[str, Any] | None = None, request: gr.Request = None):
        """Relevance feedback: the labels given to this query move the query vector (Rocchio, in core)."""
        self.ready()
        state = dict(state or new_state())
        if (not state.get("hits") or not state.get("query") or state.get("query") == "(example photo)"
                or state.get("like")):
            raise InputError(S.NO_RESULTS, "search with words first")
        labels = self.log.labels(query=state["query"])
        rel = sorted({lb.photo_id for lb in latest(labels) if lb.label == RELEVANT})
        non = sorted({lb.photo_id for lb in latest(labels) if lb.label == NOT_RELEVANT} - set(rel))
        if not rel and not non:
            raise InputError(S.NO_LABELS_YET, "label photos in the Label tab, then come back")
        req = request_for("Fast", state["query"], k=state.get("k", 20), filters=state.get("filters"),
                          relevant_ids=rel, nonrelevant_ids=non)
        return self._show(state, req, "baseline+feedback", session_key(request))
