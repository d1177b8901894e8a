"""Cancelling a running search: a token the caller keeps and the engine checks between steps. Calls already
sent to a backend cannot be recalled; the engine stops waiting for them and sends no new ones."""
from __future__ import annotations

import threading

from core.errors import EcoLensError


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
    """At most one running search per key (a browser session): starting a new one cancels the one before."""

    def __init__(self) -> None:
        self._tokens: dict[str, CancelToken] = {}
        self._lock = threading.Lock()

    def start(self, key: str, reason: str = REPLACED) -> tuple[CancelToken, bool]:
        """A token for a new search under `key`, and whether an earlier running search was cancelled."""
        token = CancelToken()
        with self._lock:
            old = self._tokens.get(key)
            self._tokens[key] = token
        replaced = old is not None and not old.cancelled
        if old is not None:
            old.cancel(reason)
        return token, replaced

    def cancel(self, key: str, reason: str) -> bool:
        """Cancel the running search under `key`; True if there was one."""
        with self._lock:
            token = self._tokens.pop(key, None)
        if token is None or token.cancelled:
            return False
        token.cancel(reason)
        return True

    def finish(self, key: str, token: CancelToken) -> None:
        """Forget `token` when it is still the latest under `key` (the search ended)."""
        with self._lock:
            if self._tokens.get(key) is token:
                del self._tokens[key]
