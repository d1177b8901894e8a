"""Cancelling a running search: a token the caller keeps and the engine checks between steps. Calls already
sent to a backend cannot be recalled; the engine stops waiting for them and sends no new ones."""
from __future__ import annotations

import threading

from core.contracts.errors import EcoLensError


class SearchCancelled(EcoLensError):
    """The search was cancelled (a newer search replaced it, the user pressed Stop, or the page was closed)."""

    title = "Search cancelled"


class CancelToken:
    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise SearchCancelled when the token was cancelled."""
        if self._event.is_set():
            raise SearchCancelled(f"the search was cancelled: {self.reason}")

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True as soon as the token is cancelled."""
        return self._event.wait(seconds)



REPLACED = "a newer search replaced it"


class LatestSearches:
    """At most one running search per key (a browser session): starting a new one cancels the one before, and
    the new one can wait until the old one's consumer has stopped (so the old one shows nothing after it)."""

    def __init__(self) -> None:
        self._latest: dict[str, CancelToken] = {}
        self._ended: dict[int, threading.Event] = {}  # id(token) -> set when that search's consumer stopped
        self._lock = threading.Lock()

    def start(self, key: str, reason: str = REPLACED) -> tuple[CancelToken, threading.Event | None]:
        """A token for a new search under `key`, and, when it replaced a running one, an event that is set once
        the replaced search has finished (see finish)."""
        token = CancelToken()
        with self._lock:
            old = self._latest.get(key)
            self._latest[key] = token
            self._ended[id(token)] = threading.Event()
            ended = self._ended.get(id(old)) if old is not None and not old.cancelled else None
        if old is not None:
            old.cancel(reason)
        return token, ended

    def cancel(self, key: str, reason: str) -> bool:
        """Cancel the running search under `key`; nothing will wait for it. True if there was one."""
        with self._lock:
            token = self._latest.pop(key, None)
        if token is None or token.cancelled:
            return False
        token.cancel(reason)
        return True

    def finish(self, key: str, token: CancelToken) -> None:
        """The search of `token` has ended and shows nothing more: forget it and release whoever waits."""
        with self._lock:
            if self._latest.get(key) is token:
                del self._latest[key]
            ended = self._ended.pop(id(token), None)
        if ended is not None:
            ended.set()
