"""Migration 0013_owners on a log written before it: every old session gets a distinct token (their numbers no
longer open them) and no owner; then the SQL log keeps owners and tokens, finds a session by its token only
for its owner, and records who was handed which file, read back by another connection (another web process)."""
from __future__ import annotations

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text

from core.contracts.errors import NotFoundError
from storage.db import MIGRATIONS, open_engine
from storage.served_files import SqlServedFiles
from storage.sessionlog import SqlSessionLog


def test_old_sessions_get_tokens_and_the_log_keeps_owners(tmp_path):
    db = tmp_path / "ecolens.sqlite"
    old = create_engine(f"sqlite:///{db}")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with old.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0011_camtrap_packages")
        for i in range(3):
            conn.execute(text("INSERT INTO sessions (kind, title) VALUES ('search', :t)"), {"t": f"old {i}"})
    old.dispose()
    engine = open_engine(db)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, token, owner FROM sessions")).all()
    assert len({r.token for r in rows}) == 3 and all(len(r.token) >= 16 and r.owner == "" for r in rows)
    log = SqlSessionLog(engine)
    assert log.find(rows[0].token) == rows[0].id
    for asked in (rows[0].id, str(rows[0].id), "1 OR 1=1", "' OR ''='", None):
        with pytest.raises(NotFoundError, match="There is no session"):
            log.find(asked)
    mine = log.start_session("label", "frogs", owner="ana")
    assert log.find(log.token(mine), "ana") == mine
    with pytest.raises(NotFoundError, match="There is no session"):
        log.find(log.token(mine), "ben")
    assert [s.id for s in log.sessions(owner="ana")] == [mine] and len(log.sessions()) == 4
    assert log.sessions(owner="ana")[0].token == log.token(mine)

    SqlServedFiles(engine).grant(["/x/uploads/a/labels.csv", "/x/uploads/a/labels.csv"], "user:ana")
    SqlServedFiles(engine).grant(["/x/uploads/a/labels.csv"], "user:ana")  # again: no error, one row
    other = SqlServedFiles(open_engine(db))  # another process's connection
    assert other.owners("/x/uploads/a/labels.csv") == {"user:ana"} and other.owners("/x/uploads/b") == set()
