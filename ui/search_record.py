"""The record of the searches a page runs, in the session log: the session a page's searches go to, each
finished search with its stages, and a cancelled or failed one with why. A search whose record cannot be
written is still shown, with a notice; the log line says what failed."""
from __future__ import annotations

import logging
from typing import Any

from core.config import masked
from core.contracts.errors import EcoLensError
from core.contracts.sessionlog import RequestRecord, SessionLog, StageRecord, ranking_of
from ui import strings as S
from ui.forms import user_message

log = logging.getLogger(__name__)



WRAPPED = "value"  # a stage that is not a mapping (a stand-in's name, a count) is stored as {"value": it}


def stored_stage(artefacts: Any) -> dict[str, Any]:
    """A search's stage as the session log stores it (a JSON object)."""
    return artefacts if isinstance(artefacts, dict) else {WRAPPED: artefacts}


def read_stage(artefacts: dict[str, Any] | None) -> Any:
    """A logged stage as the search gave it: stored_stage undone."""
    if isinstance(artefacts, dict) and set(artefacts) == {WRAPPED}:
        return artefacts[WRAPPED]
    return artefacts

class SearchRecord:
    def __init__(self, log_: SessionLog, settings: Any):
        self.log, self.settings = log_, settings

    def session(self, state: dict[str, Any], kind: str, title: str) -> int:
        """The page's session in the log (opened by its first search)."""
        if state.get("session_id") is None:
            state["session_id"] = self.log.start_session(kind, title[:80])
            state["session_token"] = self.log.token(state["session_id"])  # what the page and the API are told
        return state["session_id"]

    def open(self, state: dict[str, Any], request: Any) -> None:
        """Open the page's session before the search's first update (which carries its id)."""
        try:
            self.session(state, "search", request.query or "(example photo)")
        except EcoLensError as exc:  # the search goes on; its record will say it could not be saved
            log.error("no session could be opened for search %r: %s", request.query, exc)

    def finished(self, state: dict[str, Any], result: Any, knobs: dict[str, Any], method: str = "",
                 query: str | None = None) -> None:
        """Record the search in the session log (under `query` when given: what a search without words is
        called, e.g. 'more like photo 12 (Cobalt Pondhopper)'); when that fails (the database stays locked, the
        disk is full) the result is still shown, with a notice that it is not in the history."""
        try:
            self._write(state, result, knobs, method, result.query if query is None else query)
        except EcoLensError as exc:
            log.error("search %r was not logged: %s", result.query, exc)
            state["notices"] = list(state.get("notices") or []) + [S.NOT_LOGGED.format(reason=user_message(exc))]

    def _write(self, state: dict[str, Any], result: Any, knobs: dict[str, Any], method: str, query: str) -> None:
        similarity = {str(h.photo_id): h.similarity for h in result.hits if h.similarity is not None}
        stages = [StageRecord("final", ranking_of(result.hits), {"timings_ms": result.timings_ms,
                                                                 "notices": result.notices,
                                                                 "similarity": similarity})]
        stages += [StageRecord(name, [], stored_stage(art)) for name, art in (result.stages or {}).items()]
        self.log.log_request(RequestRecord(
            session_id=self.session(state, "search", query), query=query,
            method=method or result.method,
            settings={**masked(self.settings), **knobs}, models=result.backends, filters=result.filters,
            stages=stages))

    def unfinished(self, state: dict[str, Any], request: Any, note: str, knobs: dict[str, Any]) -> None:
        """A search that was cancelled or failed is kept in the log too, with why."""
        try:
            self.log.log_request(RequestRecord(
                session_id=self.session(state, "search", request.query or "(example photo)"),
                query=request.query or "(example photo)", method=request.name,
                settings={**masked(self.settings), **knobs}, models={},
                filters=request.filters.to_json() if request.filters else {},
                stages=[StageRecord("final", [], {"notices": [note], "finished": False})]))
        except EcoLensError as exc:  # nothing is on screen to attach a notice to; the log line says it
            log.error("an unfinished search (%s) was not logged: %s", note, exc)
