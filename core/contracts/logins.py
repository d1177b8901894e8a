"""The login store's contract: who holds which login token of the web app, kept where every web process of one
data directory reads it and a restarted process finds it again (storage.logins implements it on SQLite; the web
app hands it to Gradio as its token table, ui.login_tokens). Tokens are the random values of the login cookie;
a store keeps only their hashes."""
from __future__ import annotations

from typing import Protocol

MIN_LOGIN_DAYS, MAX_LOGIN_DAYS = 0.001, 366.0  # the login_days setting's range (about 90 s to a year)


class LoginStore(Protocol):
    cookie_id: str  # the login cookie's name part, the same for every web process of one data directory

    def add(self, token: str, name: str) -> None:
        """`token` now logs `name` in, until login_days from now."""

    def name(self, token: str) -> str | None:
        """Whose login `token` is; None for an unknown or expired one."""

    def remove(self, token: str) -> None:
        """Log `token` out (nothing happens for an unknown one)."""

    def names(self) -> list[str]:
        """Everyone with a login that has not expired, each once."""

    def remove_person(self, name: str) -> int:
        """Log `name` out everywhere; returns how many logins ended."""

    def count(self) -> int:
        """Logins that have not expired."""
