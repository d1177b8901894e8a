"""Handlers of the search view: search (first results at once, later stages streamed), photo selection,
more like this, and refining with the user's labels. Thin: they call core and log what happened."""
from __future__ import annotations

import time
from typing import Any, Iterator

import gradio as gr

from core.errors import EcoLensError, InputError
from core.labels import latest
from core.records import Filters
from core.search import clean_query
from core.sessionlog import NOT_RELEVANT, RELEVANT, RequestRecord, SessionLog, StageRecord, ranking_of
from core.settings import masked
from ui import present
from ui import strings as S
from ui.forms import parse_filters, read_upload, shows_errors, user_message, warn
from ui.methods import Knobs, Methods, request_for


def new_state() -> dict[str, Any]:
    return {"session_id": None, "query": "", "method": "", "hits": [], "stages": {}, "selected": None,
            "filters": Filters(), "k": 20}


class SearchHandlers:
    def __init__(self, engine: Any, log: SessionLog, methods: Methods):
        self.engine, self.log, self.methods, self.settings = engine, log, methods, engine.settings

    # ---- helpers ----------------------------------------------------------------------------------
    def _session(self, state: dict[str, Any], kind: str, title: str) -> int:
        if state.get("session_id") is None:
            state["session_id"] = self.log.start_session(kind, title[:80])
        return state["session_id"]

    def _log(self, state: dict[str, Any], result: Any, knobs: dict[str, Any]) -> None:
        stages = [StageRecord("final", ranking_of(result.hits), {"timings_ms": result.timings_ms,
                                                                 "notices": result.notices})]
        stages += [StageRecord(name, [], art if isinstance(art, dict) else {"value": art})
                   for name, art in (result.stages or {}).items()]
        self.log.log_request(RequestRecord(
            session_id=self._session(state, "search", result.query), query=result.query, method=result.method,
            settings={**masked(self.settings), **knobs}, models=result.backends, filters=result.filters,
            stages=stages))

    @staticmethod
    def _take(state: dict[str, Any], result: Any) -> None:
        state.update(query=result.query, method=result.method, hits=[h.to_json() for h in result.hits],
                     stages=dict(result.stages or {}), selected=None)

    @staticmethod
    def outputs(state: dict[str, Any], status: str):
        """(gallery, status, visualizations, evidence, explanation, state): the search view's outputs."""
        stages = state.get("stages") or {}
        if state.get("searches"):
            status = S.SEARCH_NO.format(n=state["searches"]) + " · " + status
        return (present.gallery_items(state["hits"]), status, present.visualization_items(stages),
                present.evidence_md(stages), S.SELECT_HINT, state)

    # ---- search -----------------------------------------------------------------------------------
    @shows_errors
    def search(self, query: str, preset: str, k: float, m: float, rerank_k: float, rerank_mode: str,
               want_answer: bool, taxon: str, date_from: str, date_to: str, months: list[str], bbox: str,
               license: str, example: str | None, state: dict[str, Any] | None) -> Iterator[tuple]:
        """First results (baseline) at once, then the preset's later stages as they finish."""
        state = dict(state or new_state())
        image = read_upload(example, self.settings.max_upload_mb, self.settings.max_image_pixels)
        if image is None or (query or "").strip():
            query = clean_query(query)
        filters = parse_filters(taxon, date_from, date_to, months, bbox, license)
        if query != state.get("query"):
            state["seeds"] = None  # a new query starts from the default seeds
        knobs = Knobs(k=int(k or self.settings.k), m=int(m or 1), rerank_k=int(rerank_k or 1),
                      rerank_mode=rerank_mode or "full", answer=bool(want_answer), seeds=state.get("seeds"),
                      examples=[image] if image is not None and preset != "Fast" else [])
        state.update(filters=filters, k=knobs.k, preset=preset, searches=state.get("searches", 0) + 1)
        t0 = time.perf_counter()
        first = self.engine.search.search(query, k=knobs.k, filters=filters,
                                          image=image if preset == "Fast" or not query else None)
        self._take(state, first)
        warn(first.notices)
        later = preset != "Fast" and bool(query)
        status = S.FIRST_RESULTS.format(n=len(first.hits), ms=(time.perf_counter() - t0) * 1000,
                                        method=first.method, more=S.MORE_COMING if later else S.DONE)
        yield self.outputs(state, status)
        if not later:
            self._log(state, first, {"preset": preset})
            return
        yield from self._later(state, request_for(preset, query, knobs, filters), knobs)

    def _later(self, state: dict[str, Any], request: Any, knobs: Knobs) -> Iterator[tuple]:
        lines: list[str] = []
        for event in self.methods.stream(request):
            kind = event.get("type")
            if kind == "stage" and event.get("status") == "done":
                lines.append(S.STAGE_DONE.format(stage=event.get("stage"), ms=float(event.get("ms", 0))))
                yield self.outputs(state, " · ".join(lines + [S.MORE_COMING]))
            elif kind == "hits" and event.get("stage") == "first":
                state["hits"] = list(event.get("hits") or state["hits"])  # the preset's own first stage
                yield self.outputs(state, " · ".join(lines + [S.MORE_COMING]))
            elif kind == "visualization" and event.get("ok"):
                vis = state["stages"].setdefault("visret", {}).setdefault("visualizations", [])
                vis.append({"path": event["path"], "seed": event.get("seed")})
                yield self.outputs(state, " · ".join(lines + [S.MORE_COMING]))
            elif kind == "error":
                # a failed later stage keeps the first results on screen and says why
                exc = event.get("error")
                gr.Warning(user_message(exc) if isinstance(exc, EcoLensError) else f"{request.method}: {exc}")
                yield self.outputs(state, " · ".join(lines + [S.DONE]))
                return
            elif kind == "result":
                result = event["result"]
                self._take(state, result)
                warn(result.notices)
                state["seeds"] = [v["seed"] for v in (result.stages.get("visret") or {}).get("visualizations", [])
                                  if v.get("organism", 0) == 0] or None
                self._log(state, result, {"preset": state.get("preset"), "m": knobs.m, "rerank_k": knobs.rerank_k,
                                          "rerank": request.rerank, "seeds": knobs.seeds,
                                          "examples": len(knobs.examples), "answer": knobs.answer})
                yield self.outputs(state, " · ".join(lines + [S.DONE]))

    @shows_errors
    def regenerate(self, *args):
        """Search again with new VisRet seeds (fresh pictures)."""
        *form, state = args
        state = dict(state or new_state())
        m = int(form[3] or 1)
        seeds = state.get("seeds") or list(range(m))
        state["seeds"] = [max(seeds) + 1 + i for i in range(m)]
        yield from self._again(form, state)

    @shows_errors
    def drop_visualization(self, *args):
        """Search again without the selected generated picture."""
        *form, state = args
        state = dict(state or new_state())
        seeds = list(state.get("seeds") or [])
        sel = state.get("selected_vis")
        if sel is None or not 0 <= sel < len(seeds) or len(seeds) < 2:
            gr.Warning(S.SELECT_VIS_HINT)
            yield self.outputs(state, S.SELECT_VIS_HINT)
            return
        state["seeds"] = seeds[:sel] + seeds[sel + 1:]
        form[3] = len(state["seeds"])
        yield from self._again(form, state)

    def _again(self, form: list, state: dict[str, Any]):
        state["query"] = clean_query(form[0])  # the same query keeps the seeds just chosen
        yield from self.search(*form, state)

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

    def _show(self, state: dict[str, Any], result: Any, preset: str):
        state["searches"] = state.get("searches", 0) + 1
        self._take(state, result)
        warn(result.notices)
        self._log(state, result, {"preset": preset})
        ms = result.timings_ms.get("total", 0.0)
        return self.outputs(state, S.FIRST_RESULTS.format(n=len(result.hits), ms=ms, method=result.method,
                                                          more=S.DONE))

    @shows_errors
    def more_like_this(self, state: dict[str, Any]):
        state = dict(state or new_state())
        if state.get("selected") is None:
            gr.Warning(S.SELECT_HINT)
            return self.outputs(state, S.SELECT_HINT)
        hit = state["hits"][state["selected"]]
        photo = self.engine.search.photos([hit["id"]])[0]
        result = self.engine.search.search(k=state.get("k", 20), filters=state.get("filters"),
                                           image=self.engine.search.load_image(photo))
        result.method, result.query = "more-like-this", f"like photo {hit['id']}"
        return self._show(state, result, "more-like-this")

    @shows_errors
    def refine_with_labels(self, state: dict[str, Any]):
        """Relevance feedback: the labels given to this query move the query vector (Rocchio, in core)."""
        state = dict(state or new_state())
        if not state.get("hits") or state.get("method") == "more-like-this":
            raise InputError(S.NO_RESULTS, "search with words first")
        labels = self.log.labels(query=state["query"])
        rel = sorted({lb.photo_id for lb in latest(labels) if lb.label == RELEVANT})
        non = sorted({lb.photo_id for lb in latest(labels) if lb.label == NOT_RELEVANT} - set(rel))
        if not rel and not non:
            raise InputError(S.NO_LABELS_YET, "label photos in the Label tab, then come back")
        request = request_for("Fast", state["query"], Knobs(k=state.get("k", 20)), state.get("filters"), rel, non)
        return self._show(state, self.methods.run(request), "feedback")
