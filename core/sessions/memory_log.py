"""The session log in memory (core.contracts.sessionlog.SessionLog), one lock: for tests and throwaway runs that
need no history (the web app without a data directory). storage/sessionlog.py is the one on SQLite."""
from __future__ import annotations

import itertools
import secrets
import threading
from dataclasses import replace
from typing import Any

from core.contracts import bounds
from core.contracts.errors import NotFoundError
from core.contracts.sessionlog import (
    ExportRecord,
    Label,
    RequestRecord,
    SessionDetail,
    SessionInfo,
    StageRecord,
    TurnRecord,
)
from core.people.session_tokens import looks_like_token, new_token, no_such_session


class MemorySessionLog:
    """SessionLog in memory, one lock; for tests and runs that need no history."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._sessions: dict[int, SessionInfo] = {}
        self._requests: dict[int, RequestRecord] = {}
        self._turns: list[TurnRecord] = []
        self._labels: list[Label] = []
        self._exports: list[ExportRecord] = []
        self._instructions: dict[str, str] = {}

    def start_session(self, kind: str, title: str = "", owner: str = "") -> int:
        with self._lock:
            sid = next(self._ids)
            self._sessions[sid] = SessionInfo(id=sid, kind=kind, title=title[:200], token=new_token(),
                                              owner=owner or "")
            return sid

    def token(self, session_id: int) -> str:
        with self._lock:
            return self._need(session_id).token

    def find(self, token: Any, owner: str | None = None) -> int:
        if looks_like_token(token):
            with self._lock:
                for info in self._sessions.values():
                    if secrets.compare_digest(info.token, token.strip()) and (owner is None or info.owner == owner):
                        return info.id
        raise no_such_session(token)

    def _need(self, session_id: int) -> SessionInfo:
        if session_id not in self._sessions:
            raise NotFoundError(f"No session {session_id}", "start a new search")
        return self._sessions[session_id]

    def log_request(self, request: RequestRecord) -> int:
        with self._lock:
            self._need(request.session_id).requests += 1
            rid = next(self._ids)
            self._requests[rid] = replace(request, id=rid, stages=list(request.stages))
            return rid

    def add_stage(self, request_id: int, stage: StageRecord) -> None:
        with self._lock:
            self._requests[request_id].stages.append(stage)

    def log_turn(self, turn: TurnRecord) -> int:
        with self._lock:
            self._need(turn.session_id)
            tid = next(self._ids)
            self._turns.append(replace(turn, id=tid))
            return tid

    def add_label(self, label: Label) -> int:
        label = label.checked()
        with self._lock:
            self._need(label.session_id).labels += 1
            lid = next(self._ids)
            self._labels.append(replace(label, id=lid))
            return lid

    def labels(self, session_id: int | None = None, query: str | None = None) -> list[Label]:
        wanted = None if query is None else bounds.name(query)
        with self._lock:
            return [replace(lb, session_token=self._sessions[lb.session_id].token) for lb in self._labels
                    if (session_id is None or lb.session_id == session_id) and (wanted is None or lb.query == wanted)]

    def remove_label(self, label_id: int) -> Label:
        with self._lock:
            found = next((lb for lb in self._labels if lb.id == label_id), None)
            if found is None:
                raise NotFoundError(f"No label {label_id}", "it was already undone")
            self._labels.remove(found)
            self._sessions[found.session_id].labels -= 1
            return found

    def set_instructions(self, query: str, text: str) -> None:
        with self._lock:
            if (text or "").strip():
                self._instructions[query] = text.strip()
            else:
                self._instructions.pop(query, None)

    def instructions(self, query: str) -> str:
        with self._lock:
            return self._instructions.get(query, "")

    def log_export(self, export: ExportRecord) -> int:
        with self._lock:
            eid = next(self._ids)
            self._exports.append(replace(export, id=eid))
            return eid

    def exports(self) -> list[ExportRecord]:
        with self._lock:
            return list(self._exports)

    def sessions(self, limit: int = 50, owner: str | None = None) -> list[SessionInfo]:
        with self._lock:
            found = sorted((s for s in self._sessions.values() if owner is None or s.owner == owner),
                           key=lambda s: s.id, reverse=True)[:limit]
            return [replace(info, queries=self._queries(info.id)) for info in found]

    def _queries(self, session_id: int) -> tuple[str, ...]:
        asked = [r.query for r in sorted(self._requests.values(), key=lambda r: r.id or 0)
                 if r.session_id == session_id]
        asked += [lb.query for lb in self._labels if lb.session_id == session_id]
        return tuple(dict.fromkeys(q for q in asked if q))

    def session(self, session_id: int) -> SessionDetail:
        with self._lock:
            info = self._need(session_id)
            return SessionDetail(
                session=replace(info, queries=self._queries(session_id)),
                requests=[r for r in self._requests.values() if r.session_id == session_id],
                turns=[t for t in self._turns if t.session_id == session_id],
                labels=[lb for lb in self._labels if lb.session_id == session_id])
