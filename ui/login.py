"""The web app's password check (ECOLENS_PASSWORD) with a brake on guessing.

Every wrong password costs the guesser a second before the answer, and after MAX_FAILURES wrong passwords
within WINDOW_S seconds every attempt, right or wrong, is refused with HTTP 429 and a message saying how
long to wait. 300 guesses that took 0.2 s now take the window. The brake is for the whole app (the check
does not see who is asking); a person who mistyped waits at most a minute."""
from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections import deque
from typing import Any, Awaitable, Callable

from fastapi import HTTPException

log = logging.getLogger(__name__)
USER = "ecolens"
MAX_FAILURES = 10
WINDOW_S = 60.0
FAILURE_DELAY_S = 1.0


class LoginGuard:
    """Counts wrong passwords in a sliding window; `clock` is time.monotonic (a fake in tests)."""

    def __init__(self, password: str, clock: Callable[[], float] = time.monotonic,
                 max_failures: int = MAX_FAILURES, window_s: float = WINDOW_S,
                 users: Callable[[str, str], bool] | None = None):
        """`users(name, password)`: each person's own password (the users file) instead of the one shared."""
        self.password, self.clock, self.users = password, clock, users
        self.max_failures, self.window_s = max_failures, window_s
        self.failures: deque[float] = deque()
        self._lock = threading.Lock()

    def wait_s(self) -> float:
        """Seconds until the next attempt is allowed (0 when it is allowed now)."""
        with self._lock:
            now = self.clock()
            while self.failures and now - self.failures[0] > self.window_s:
                self.failures.popleft()
            if len(self.failures) < self.max_failures:
                return 0.0
            return max(0.0, self.window_s - (now - self.failures[0]))

    def check(self, username: str, password: str) -> bool:
        """True for the right user and password; records a wrong one. HTTPException 429 while locked."""
        wait = self.wait_s()
        if wait > 0:
            log.warning("login refused: %d wrong passwords in %.0f s", self.max_failures, self.window_s)
            raise HTTPException(status_code=429, detail=f"Too many wrong passwords. Wait {wait:.0f} seconds, "
                                                        "then try again.")
        if self.users is not None:
            ok = self.users(str(username or ""), str(password or ""))
        else:
            ok = secrets.compare_digest(str(username or "").encode("utf-8", "replace"), USER.encode()) and \
                secrets.compare_digest(str(password or "").encode("utf-8", "replace"), self.password.encode("utf-8"))
        if not ok:
            with self._lock:
                self.failures.append(self.clock())
            log.warning("wrong password for user %r", str(username)[:40])
        return ok


def auth_function(password: str, users: Any = None) -> Callable[[str, str], Awaitable[bool]]:
    """What Gradio's `auth` gets: an async check (Gradio awaits coroutine functions), so a wrong password's
    delay never blocks the server. `users` (core.people.users.Users): each person logs in with their own name and
    password, checked in a worker thread (a scrypt hash takes tens of milliseconds)."""
    guard = LoginGuard(password, users=(lambda n, p: users.check(n, p) is not None) if users is not None else None)

    async def check(username: str, password: str) -> bool:
        ok = await asyncio.to_thread(guard.check, username, password) if users is not None \
            else guard.check(username, password)
        if not ok:
            await asyncio.sleep(FAILURE_DELAY_S)
        return ok
    check.guard = guard  # type: ignore[attr-defined]
    return check
