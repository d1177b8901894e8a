"""The web app's logins in the database (tables logins and web_keys, migration 0015), so that a person logged in
through one web process is known to every other process of the data directory and to a restarted one
(core.contracts.logins.LoginStore). Only the SHA-256 of a token is stored: the token is 128 random bits, so a
plain hash is enough to make a copy of the database useless for logging in. A login ends `days` after it was
made; an ended one is refused at once and deleted at the next login. Writes wait briefly for a locked
database (storage.retry)."""
from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import datetime, timedelta
from typing import Callable

from sqlalchemy import Engine, bindparam, delete, func, select
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from core.contracts.errors import InputError
from core.contracts.logins import MAX_LOGIN_DAYS, MIN_LOGIN_DAYS
from storage.models import utcnow
from storage.retry import SHORT_S, write_transaction
from storage.session_models import LoginRow, WebKeyRow

log = logging.getLogger(__name__)
COOKIE_KEY = "cookie_id"
MAX_NAME = 200  # as LoginRow.name holds
_WHOSE = select(LoginRow.name).where(LoginRow.token_hash == bindparam("hash"), LoginRow.expires_at > bindparam("now"))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class SqlLogins:
    """`days`: how long a login lasts (the login_days setting); `clock`: now, as an aware UTC datetime."""

    def __init__(self, engine: Engine, days: float, clock: Callable[[], datetime] = utcnow,
                 budget_s: float = SHORT_S):
        if not MIN_LOGIN_DAYS <= float(days) <= MAX_LOGIN_DAYS:
            raise InputError(f"login_days must be {MIN_LOGIN_DAYS:g} to {MAX_LOGIN_DAYS:g}, not {days}",
                             "set login_days to how many days a login lasts, e.g. 14")
        self.engine, self.clock, self.budget_s = engine, clock, budget_s
        self.lifetime = timedelta(days=float(days))
        self.cookie_id = self._cookie_id()

    def _write(self, what: str, statements: Callable[[Session], object]):
        return write_transaction(self.engine, statements, self.budget_s, what)

    def _cookie_id(self) -> str:
        """The value migration 0015 made; made again (once, whoever comes first) if someone deleted it."""
        def ensure(s: Session) -> str:
            s.execute(insert(WebKeyRow).values(name=COOKIE_KEY, value=secrets.token_urlsafe(24))
                      .on_conflict_do_nothing())
            return s.scalar(select(WebKeyRow.value).where(WebKeyRow.name == COOKIE_KEY))
        with Session(self.engine) as s:
            found = s.scalar(select(WebKeyRow.value).where(WebKeyRow.name == COOKIE_KEY))
        return found or self._write("The login cookie's name", ensure)

    def add(self, token: str, name: str) -> None:
        now = self.clock()
        row = {"token_hash": token_hash(token), "name": str(name)[:MAX_NAME], "created_at": now,
               "expires_at": now + self.lifetime}

        def store(s: Session) -> None:
            pruned = s.execute(delete(LoginRow).where(LoginRow.expires_at <= now)).rowcount
            s.execute(insert(LoginRow).values(row).on_conflict_do_update(
                index_elements=[LoginRow.token_hash], set_={k: row[k] for k in ("name", "created_at", "expires_at")}))
            if pruned:
                log.info("%d ended logins deleted", pruned)
        self._write("A login", store)
        log.info("%r logged in (until %s)", row["name"], row["expires_at"].isoformat(timespec="minutes"))

    def name(self, token: str) -> str | None:
        """Asked for every request of a logged-in browser: one indexed read on a pooled connection (no ORM
        session), well under a millisecond."""
        with self.engine.connect() as c:
            return c.execute(_WHOSE, {"hash": token_hash(token), "now": self.clock()}).scalar()

    def remove(self, token: str) -> None:
        self._write("A logout", lambda s: s.execute(delete(LoginRow).where(LoginRow.token_hash == token_hash(token))))

    def names(self) -> list[str]:
        with Session(self.engine) as s:
            return list(s.scalars(select(LoginRow.name).where(LoginRow.expires_at > self.clock())
                                  .distinct().order_by(LoginRow.name)))

    def remove_person(self, name: str) -> int:
        ended = self._write("A logout", lambda s: s.execute(delete(LoginRow).where(LoginRow.name == str(name)))
                            .rowcount)
        log.info("%r logged out (%d logins ended)", str(name)[:MAX_NAME], ended)
        return int(ended or 0)

    def count(self) -> int:
        with Session(self.engine) as s:
            return int(s.scalar(select(func.count()).select_from(LoginRow)
                                .where(LoginRow.expires_at > self.clock())) or 0)
