"""Gradio's login tokens kept in the login store (core.contracts.logins.LoginStore; the database, given by app.py),
so that a login made through one web process is honoured by every other process of the data directory and by a
restarted one.

Gradio keeps its logins in `App.tokens`, a dict of cookie token -> user name that `/login` fills, that every
request's login check reads (`tokens.get(cookie)`) and that `/logout` empties (it deletes every key whose value
is the person logging out, or the one cookie's key), and it names the login cookie `access-token-{cookie_id}`
with a `cookie_id` made at random per process. `App.configure_app` sets `tokens` to a new dict when the app is
built, so the store is put in its place by a lifespan handler, which the server runs after the app is built
and before it accepts a single request; the same handler sets the store's `cookie_id`, which every process of
the data directory shares. A handler that fails stops the server (no process runs with the forgetting dict)."""
from __future__ import annotations

import logging
from collections.abc import MutableMapping
from contextlib import asynccontextmanager
from typing import Any, Callable, Iterator

from core.contracts.logins import LoginStore

log = logging.getLogger(__name__)


class Everyone:
    """A key `LoginTokens` hands out when iterated: one per logged-in person (the store keeps no tokens to list).
    A cookie's value is always a str, never one of these, so no request can name one."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Everyone({self.name!r})"


class LoginTokens(MutableMapping):
    """The mapping Gradio uses as `App.tokens`, reading and writing `store`. A cookie token maps to its person;
    iteration yields one `Everyone` key per logged-in person, mapping to that person and deleting all their
    logins: Gradio's logout from every session (its default) then ends the person's logins in the store."""

    def __init__(self, store: LoginStore, allowed: Callable[[str], bool] | None = None):
        self.store, self.allowed = store, allowed

    def __getitem__(self, key: Any) -> str:
        if isinstance(key, Everyone):
            return key.name
        found = self.store.name(key) if isinstance(key, str) and key else None
        # a login outlives the process (login_days): one whose person was taken out of the users file ends then
        if found is None or (self.allowed is not None and not self.allowed(found)):
            raise KeyError(key)
        return found

    def __setitem__(self, key: Any, name: Any) -> None:
        if not isinstance(key, str) or not key:
            raise KeyError(key)
        self.store.add(key, str(name))

    def __delitem__(self, key: Any) -> None:
        if isinstance(key, Everyone):
            self.store.remove_person(key.name)
        elif isinstance(key, str) and key:
            self.store.remove(key)
        else:
            raise KeyError(key)

    def __iter__(self) -> Iterator[Everyone]:
        return iter([Everyone(name) for name in self.store.names()])

    def __len__(self) -> int:
        return self.store.count()


def lifespan(store: LoginStore, allowed: Callable[[str], bool] | None = None):
    """Gradio's `app_kwargs["lifespan"]`: puts the store in as the app's tokens and its cookie id, before the
    server answers anything. `allowed(name)`: whether a stored login's person may still log in (with a users
    file: whether the file still lists them)."""
    @asynccontextmanager
    async def kept_logins(app: Any):
        app.tokens = LoginTokens(store, allowed)
        app.cookie_id = store.cookie_id
        log.info("logins are kept in the database (cookie access-token-%s...)", store.cookie_id[:6])
        yield
    return kept_logins
