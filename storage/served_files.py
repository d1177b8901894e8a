"""Which files of the web app's upload folder were handed to whom (table served_files): an upload to the
browser or person that sent it, an export or a picture to the one it was made for. The web app's file route
(ui.upload_guard) serves a file from that folder only to one of its owners. In the database, so that every web
process and a restarted one answer alike. Writes wait briefly for a locked database (storage.retry)."""
from __future__ import annotations

import logging
from typing import Iterable

from sqlalchemy import Engine, select
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from storage.models import utcnow
from storage.retry import SHORT_S, write_transaction
from storage.session_models import ServedFileRow

log = logging.getLogger(__name__)


class SqlServedFiles:
    def __init__(self, engine: Engine, budget_s: float = SHORT_S):
        self.engine, self.budget_s = engine, budget_s

    def grant(self, paths: Iterable[str], owner: str) -> None:
        rows = [{"path": str(p), "owner": owner[:200], "created_at": utcnow()} for p in dict.fromkeys(paths)]
        if not rows:
            return
        write_transaction(self.engine, lambda s: s.execute(insert(ServedFileRow).values(rows).on_conflict_do_nothing()),
                          self.budget_s, "The record of a handed-out file")

    def owners(self, path: str) -> set[str]:
        with Session(self.engine) as s:
            return set(s.scalars(select(ServedFileRow.owner).where(ServedFileRow.path == str(path))))
