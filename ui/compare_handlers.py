"""Handler of the compare view: one query, two to four presets side by side, and their top-k overlap. The
columns show ranks, not scores: each preset scores on its own scale (similarity to the words, to the
drawings, checks passed), and numbers side by side would read as comparable; a photo's view gives its score."""
from __future__ import annotations

import logging
from typing import Any

import gradio as gr

from core.config import masked
from core.contracts.errors import EcoLensError, InputError
from core.contracts.search_request import clean_query
from core.contracts.sessionlog import RequestRecord, SessionLog, StageRecord, ranking_of
from core.search.presets import request_for
from ui import present, tables
from ui import strings as S
from ui.forms import not_recorded, shows_errors, web_notices
from ui.photos import PhotoFiles

MAX_COLUMNS = 4
log = logging.getLogger(__name__)


def new_compare_state() -> dict[str, Any]:
    return {"query": "", "columns": []}


class CompareHandlers:
    def __init__(self, engine: Any, log: SessionLog, ready=lambda: None):
        self.engine, self.log, self.ready = engine, log, ready
        self.photos = PhotoFiles(engine)

    def _run(self, preset: str, query: str, k: int) -> tuple[Any, list[str]]:
        result = self.engine.search(request_for(preset, query, k=k))
        return result, list(result.notices)

    @shows_errors
    def compare(self, query: str, presets: list[str], k: float):
        """Outputs: MAX_COLUMNS (gallery, title) pairs flattened, then the overlap table and notices, then the
        state (each column's hits and stages, for the photo view)."""
        self.ready()
        query = clean_query(query)
        presets = list(presets or [])
        if not 2 <= len(presets) <= MAX_COLUMNS:
            raise InputError("Choose two to four methods", "tick between two and four boxes")
        k = int(k or 10)
        sid = None
        columns, id_lists, notes, state = [], [], [], new_compare_state()
        state["query"] = query
        for preset in presets:
            result, more = self._run(preset, query, k)
            notes += [n for n in more if n not in notes]
            similarity = {str(h.photo_id): h.similarity for h in result.hits if h.similarity is not None}
            try:
                if sid is None:
                    sid = self.log.start_session("compare", query[:80])
                self.log.log_request(RequestRecord(session_id=sid, query=query, method=f"{preset}:{result.method}",
                                                   settings={**masked(self.engine.settings), "preset": preset},
                                                   models=result.backends,
                                                   stages=[StageRecord("final", ranking_of(result.hits),
                                                                       {"similarity": similarity})]))
            except EcoLensError as exc:  # the comparison is still shown, with a notice
                log.error("compare %r was not logged: %s", query, exc)
                note = not_recorded(exc)
                notes += [note] if note not in notes else []
            hits = [h.to_json() for h in result.hits]
            scale = present.scale_of(result.stages)
            items, missing = self.photos.gallery(hits, result.stages, "rank")
            notes += [n for n in missing if n not in notes]
            columns.append((gr.update(value=items, visible=True), f"### {preset}"))
            id_lists.append([h.photo_id for h in result.hits])
            state["columns"].append({"preset": preset, "hits": hits, "stages": dict(result.stages or {}),
                                     "scale": scale})
        columns += [(gr.update(value=[], visible=False), "")] * (MAX_COLUMNS - len(columns))
        flat = [x for pair in columns for x in pair]
        overlap = S.COMPARE_SCALE + "\n\n" + tables.overlap_md(presets, id_lists, k)
        worded = web_notices(notes)
        return (*flat, overlap + ("\n\n" + present.notices_md(worded) if worded else ""), state)

    @staticmethod
    def column(state: dict[str, Any] | None, i: int) -> dict[str, Any]:
        """Column `i` as a results state the photo view opens from (hits, stages, query, preset)."""
        state = state or new_compare_state()
        cols = state.get("columns") or []
        if i >= len(cols):
            return {"hits": [], "stages": {}, "query": state.get("query", ""), "preset": ""}
        col = cols[i]
        return {"hits": col["hits"], "stages": col["stages"], "query": state.get("query", ""),
                "preset": col["preset"], "scale": col["scale"]}
