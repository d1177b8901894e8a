"""The session log in SQLite, implementing core.contracts.sessionlog.SessionLog. One lock serialises every write (one
writer, as SQLite wants); WAL (set by storage.db) lets reads run meanwhile. While another process holds the
database, writes are retried with backoff (storage.retry: seconds for a search, minutes for a label), then
fail with core.contracts.errors.StorageError; nothing is ever reported saved that was not. Pictures found in stage
artefacts are written as PNG files under `files_dir` and the rows keep their paths."""
from __future__ import annotations

import dataclasses
import threading
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np
from PIL import Image
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session

from core.contracts import bounds
from core.contracts.errors import NotFoundError
from core.people.session_tokens import looks_like_token, new_token, no_such_session
from core.contracts.sessionlog import (ExportRecord, Label, RequestRecord, SessionDetail, SessionInfo, StageRecord,
                             TurnRecord)
from storage.models import utcnow
from storage.retry import LONG_S, SHORT_S, Busy, retrying
from storage.session_models import (ExportRow, InstructionRow, LabelRow, RequestRow, SessionRow, StageRow,
                                    TurnRow)


def _aware(ts: datetime | None) -> datetime:
    """SQLite drops the zone; every stored time is UTC."""
    if ts is None:
        return datetime.now(timezone.utc)
    return ts if ts.tzinfo else ts.replace(tzinfo=timezone.utc)


class SqlSessionLog:
    def __init__(self, engine: Engine, files_dir: Path | str | None = None, short_s: float = SHORT_S,
                 long_s: float = LONG_S):
        """`short_s` / `long_s`: how long a search record / a label waits for a locked database."""
        self.engine = engine
        self.files_dir = Path(files_dir) if files_dir else None
        self.short_s, self.long_s = short_s, long_s
        self._write = threading.Lock()

    # ---- artefacts to JSON -------------------------------------------------------------------------
    def _jsonable(self, value: Any, request_id: int, where: str) -> Any:
        if isinstance(value, Image.Image):
            return self._save_picture(value, request_id, where)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if isinstance(value, dict):
            return {str(k): self._jsonable(v, request_id, f"{where}-{k}") for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._jsonable(v, request_id, f"{where}-{i}") for i, v in enumerate(value)]
        if isinstance(value, np.ndarray):
            return value.tolist()
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, (datetime, date)):
            return value.isoformat()
        if isinstance(value, Path):
            return str(value)
        if value is None or isinstance(value, (str, int, float, bool)):
            return value
        return str(value)

    def _save_picture(self, image: Image.Image, request_id: int, where: str) -> str | None:
        if self.files_dir is None:
            return None
        folder = self.files_dir / f"request-{request_id}"
        folder.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in where)[:120]
        path = folder / f"{safe}.png"
        image.save(path)
        return str(path)

    def _stage_row(self, request_id: int, position: int, stage: StageRecord) -> StageRow:
        ranking = [[int(i), float(s)] for i, s in stage.ranking]
        return StageRow(request_id=request_id, position=position, name=stage.name, ranking=ranking,
                        artefacts=self._jsonable(stage.artefacts, request_id, stage.name))

    # ---- writes (one writer, retried while another process holds the lock) ----------------------------
    def _transaction(self, what: str, budget_s: float, work: Callable[[Session], Any]) -> Any:
        """Run `work(session)` in one write transaction; retried with backoff while the database is locked
        (storage.retry), StorageError when it cannot be saved."""
        def attempt(busy_ms: int) -> Any:
            # this process's writers take turns too, but never wait longer than their own budget allows: a
            # search's record does not queue behind a label that waits minutes for another process
            if not self._write.acquire(timeout=busy_ms / 1000):
                raise Busy()
            try:
                with Session(self.engine) as s, s.begin():
                    s.execute(text(f"PRAGMA busy_timeout = {int(busy_ms)}"))
                    return work(s)
            finally:
                self._write.release()
        return retrying(attempt, budget_s, what)

    def start_session(self, kind: str, title: str = "", owner: str = "") -> int:
        def work(s: Session) -> int:
            row = SessionRow(kind=kind, title=(title or "")[:200], token=new_token(), owner=(owner or "")[:200])
            s.add(row)
            s.flush()
            return row.id
        return self._transaction("The session", self.long_s if kind == "label" else self.short_s, work)

    def token(self, session_id: int) -> str:
        with Session(self.engine) as s:
            return self._need(s, session_id).token or ""

    def find(self, token: Any, owner: str | None = None) -> int:
        """Looked up by the token only (bound as a parameter, never as SQL text), then its owner checked."""
        if looks_like_token(token):
            with Session(self.engine) as s:
                row = s.scalars(select(SessionRow).where(SessionRow.token == token.strip())).first()
                if row is not None and (owner is None or (row.owner or "") == owner):
                    return row.id
        raise no_such_session(token)

    def log_request(self, request: RequestRecord) -> int:
        def work(s: Session) -> int:
            self._need(s, request.session_id)
            row = RequestRow(session_id=request.session_id, query=bounds.name(request.query), method=request.method,
                             settings=self._jsonable(request.settings, 0, "settings"),
                             models=self._jsonable(request.models, 0, "models"),
                             filters=self._jsonable(request.filters, 0, "filters"), created_at=request.created_at)
            s.add(row)
            s.flush()
            s.add_all([self._stage_row(row.id, i, st) for i, st in enumerate(request.stages)])
            return row.id
        return self._transaction("The search record", self.short_s, work)

    def add_stage(self, request_id: int, stage: StageRecord) -> None:
        def work(s: Session) -> None:
            position = s.scalar(select(func.count()).select_from(StageRow).where(StageRow.request_id == request_id))
            s.add(self._stage_row(request_id, int(position or 0), stage))
        self._transaction("The stage record", self.short_s, work)

    def log_turn(self, turn: TurnRecord) -> int:
        def work(s: Session) -> int:
            self._need(s, turn.session_id)
            row = TurnRow(session_id=turn.session_id, position=turn.index, question=turn.question,
                          answer=turn.answer, description=turn.description, request_id=turn.request_id,
                          created_at=turn.created_at)
            s.add(row)
            s.flush()
            return row.id
        return self._transaction("The dialogue turn", self.short_s, work)

    def add_label(self, label: Label) -> int:
        label = label.checked()

        def work(s: Session) -> int:
            self._need(s, label.session_id)
            row = LabelRow(session_id=label.session_id, query=label.query, photo_id=int(label.photo_id),
                           label=int(label.label), annotator=label.annotator, seconds=float(label.seconds),
                           created_at=label.created_at)
            s.add(row)
            s.flush()
            return row.id
        return self._transaction(f"The label of photo {label.photo_id}", self.long_s, work)

    def log_export(self, export: ExportRecord) -> int:
        def work(s: Session) -> int:
            row = ExportRow(session_id=export.session_id, format=export.format, path=export.path,
                            rows=export.rows, created_at=export.created_at)
            s.add(row)
            s.flush()
            return row.id
        return self._transaction("The export record", self.short_s, work)

    def remove_label(self, label_id: int) -> Label:
        def work(s: Session) -> Label:
            row = s.get(LabelRow, int(label_id))
            if row is None:
                raise NotFoundError(f"No label {label_id} in the log", "it was already undone")
            label = self._label(row)
            s.delete(row)
            return label
        return self._transaction(f"Undoing label {label_id}", self.long_s, work)

    def set_instructions(self, query: str, text: str) -> None:
        note = (text or "").strip()
        query = bounds.name(query)  # one query however its accents were typed

        def work(s: Session) -> None:
            row = s.get(InstructionRow, query)
            if not note:
                if row is not None:
                    s.delete(row)
            elif row is None:
                s.add(InstructionRow(query=query, text=note, updated_at=utcnow()))
            else:
                row.text, row.updated_at = note, utcnow()
        self._transaction("The labelling instructions", self.long_s, work)

    def instructions(self, query: str) -> str:
        with Session(self.engine) as s:
            row = s.get(InstructionRow, bounds.name(query))
            return row.text if row is not None else ""

    # ---- reads -------------------------------------------------------------------------------------
    @staticmethod
    def _need(s: Session, session_id: int) -> SessionRow:
        row = s.get(SessionRow, session_id)
        if row is None:
            raise NotFoundError(f"No session {session_id} in the log", "start a new session")
        return row

    @staticmethod
    def _label(row: LabelRow, token: str | None = "") -> Label:
        return Label(session_id=row.session_id, query=row.query, photo_id=row.photo_id, label=row.label,
                     annotator=row.annotator, seconds=row.seconds or 0.0, id=row.id,
                     created_at=_aware(row.created_at), session_token=token or "")

    def labels(self, session_id: int | None = None, query: str | None = None) -> list[Label]:
        stmt = select(LabelRow, SessionRow.token).join(SessionRow, SessionRow.id == LabelRow.session_id) \
            .order_by(LabelRow.id)
        if session_id is not None:
            stmt = stmt.where(LabelRow.session_id == session_id)
        if query is not None:
            stmt = stmt.where(LabelRow.query == bounds.name(query))
        with Session(self.engine) as s:
            return [self._label(r, token) for r, token in s.execute(stmt)]

    def exports(self) -> list[ExportRecord]:
        with Session(self.engine) as s:
            return [ExportRecord(session_id=r.session_id, format=r.format, path=r.path, rows=r.rows, id=r.id,
                                 created_at=_aware(r.created_at))
                    for r in s.scalars(select(ExportRow).order_by(ExportRow.id))]

    def _info(self, s: Session, row: SessionRow) -> SessionInfo:
        n_req = s.scalar(select(func.count()).select_from(RequestRow).where(RequestRow.session_id == row.id))
        n_lab = s.scalar(select(func.count()).select_from(LabelRow).where(LabelRow.session_id == row.id))
        asked = s.execute(select(RequestRow.query, func.min(RequestRow.id)).where(RequestRow.session_id == row.id)
                          .group_by(RequestRow.query)).all()
        labelled = s.execute(select(LabelRow.query, func.min(LabelRow.id)).where(LabelRow.session_id == row.id)
                             .group_by(LabelRow.query)).all()
        # searches first (in the order asked), then queries only labelled
        queries = [q for q, _ in sorted(asked, key=lambda x: x[1])]
        queries += [q for q, _ in sorted(labelled, key=lambda x: x[1])]
        return SessionInfo(id=row.id, kind=row.kind, title=row.title or "", created_at=_aware(row.created_at),
                           requests=int(n_req or 0), labels=int(n_lab or 0),
                           queries=tuple(dict.fromkeys(q for q in queries if q)), token=row.token or "",
                           owner=row.owner or "")

    def sessions(self, limit: int = 50, owner: str | None = None) -> list[SessionInfo]:
        stmt = select(SessionRow)
        if owner is not None:
            stmt = stmt.where(SessionRow.owner == owner)
        with Session(self.engine) as s:
            rows = s.scalars(stmt.order_by(SessionRow.id.desc()).limit(limit)).all()
            return [self._info(s, r) for r in rows]

    def session(self, session_id: int) -> SessionDetail:
        with Session(self.engine) as s:
            info = self._info(s, self._need(s, session_id))
            requests = []
            for r in s.scalars(select(RequestRow).where(RequestRow.session_id == session_id).order_by(RequestRow.id)):
                stages = [StageRecord(name=st.name, ranking=[(int(i), float(sc)) for i, sc in st.ranking or []],
                                      artefacts=dict(st.artefacts or {}))
                          for st in s.scalars(select(StageRow).where(StageRow.request_id == r.id)
                                              .order_by(StageRow.position, StageRow.id))]
                requests.append(RequestRecord(session_id=session_id, query=r.query, method=r.method,
                                              settings=dict(r.settings or {}), models=dict(r.models or {}),
                                              filters=dict(r.filters or {}), id=r.id,
                                              created_at=_aware(r.created_at), stages=stages))
            turns = [TurnRecord(session_id=session_id, index=t.position, question=t.question or "",
                                answer=t.answer or "", description=t.description or "", request_id=t.request_id,
                                id=t.id, created_at=_aware(t.created_at))
                     for t in s.scalars(select(TurnRow).where(TurnRow.session_id == session_id)
                                        .order_by(TurnRow.position, TurnRow.id))]
            labels = [self._label(lb) for lb in s.scalars(select(LabelRow).where(LabelRow.session_id == session_id)
                                                         .order_by(LabelRow.id))]
            return SessionDetail(session=info, requests=requests, turns=turns, labels=labels)
