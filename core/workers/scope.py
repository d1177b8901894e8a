"""Which search a piece of model work belongs to: its cancel token and its lane. The engine opens a scope for
each search; a worker's queue reads it when a call is queued, so plain searches' work goes first and a
cancelled search's queued work is dropped. Threads that a search starts carry the scope when they copy the
context (contextvars.copy_context().run)."""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from core.contracts.cancel import CancelToken

LIGHT, HEAVY, BACKGROUND = 0, 1, 2  # queue priorities: plain searches, costly searches, work of no search (ingest)


@dataclass(frozen=True)
class Scope:
    cancel: CancelToken | None
    priority: int


_CURRENT: ContextVar[Scope | None] = ContextVar("ecolens_search_scope", default=None)


@contextmanager
def search_scope(cancel: CancelToken | None, heavy: bool):
    """Model work started inside belongs to the search of `cancel` (a costly one when `heavy`)."""
    reset = _CURRENT.set(Scope(cancel, HEAVY if heavy else LIGHT))
    try:
        yield
    finally:
        _CURRENT.reset(reset)


@contextmanager
def lane(priority: int):
    """Model work started inside goes in lane `priority`, of no search here (the shared pool: a web process's
    search sent it)."""
    reset = _CURRENT.set(Scope(None, priority))
    try:
        yield
    finally:
        _CURRENT.reset(reset)


def current() -> Scope:
    """The scope of the running search, or a background scope outside any search."""
    return _CURRENT.get() or Scope(None, BACKGROUND)
