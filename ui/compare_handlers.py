"""Handler of the compare view: one query, two to four presets side by side, and their top-k overlap."""
from __future__ import annotations

import logging
from typing import Any

import gradio as gr

from core.errors import EcoLensError, InputError
from core.presets import request_for
from core.request import clean_query
from core.sessionlog import RequestRecord, SessionLog, StageRecord, ranking_of
from core.settings import masked
from ui import present
from ui import strings as S
from ui.forms import shows_errors
from ui.photos import PhotoFiles

MAX_COLUMNS = 4
log = logging.getLogger(__name__)


class CompareHandlers:
    def __init__(self, engine: Any, log: SessionLog, ready=lambda: None):
        self.engine, self.log, self.ready = engine, log, ready
        self.photos = PhotoFiles(engine)

    def _run(self, preset: str, query: str, k: int) -> tuple[Any, list[str]]:
        result = self.engine.search(request_for(preset, query, k=k))
        return result, list(result.notices)

    @shows_errors
    def compare(self, query: str, presets: list[str], k: float):
        """Outputs: MAX_COLUMNS (gallery, title) pairs flattened, then the overlap table and notices."""
        self.ready()
        query = clean_query(query)
        presets = list(presets or [])
        if not 2 <= len(presets) <= MAX_COLUMNS:
            raise InputError("Choose two to four methods", "tick between two and four boxes")
        k = int(k or 10)
        sid = None
        columns, id_lists, notes = [], [], []
        for preset in presets:
            result, more = self._run(preset, query, k)
            notes += [n for n in more if n not in notes]
            try:
                if sid is None:
                    sid = None
                self.log.log_request(RequestRecord(session_id=sid, query=query, method=f"{preset}:{result.method}",
                                                   settings=masked(self.engine.settings), models=result.backends,
                                                   stages=[StageRecord("final", ranking_of(result.hits))]))
            except EcoLensError as exc:  # the comparison is still shown, with a notice
                log.error("compare %r was not logged: %s", query, exc)
                note = S.NOT_RECORDED.format(reason=exc.message)
                notes += [note] if note not in notes else []
            items, missing = self.photos.gallery([h.to_json() for h in result.hits], result.stages)
            notes += [n for n in missing if n not in notes]
            columns.append((gr.update(value=items, visible=True), f"### {preset}"))
            id_lists.append([h.photo_id for h in result.hits])
        columns += [(gr.update(value=[], visible=False), "")] * (MAX_COLUMNS - len(columns))
        flat = [x for pair in columns for x in pair]
        overlap = present.overlap_md(presets, id_lists, k)
        return (*flat, overlap + ("\n\n" + present.notices_md(notes) if notes else ""))
