"""Waiting for a backend call at most a given time: a hung backend degrades its stage instead of hanging
the search. The call itself cannot be killed; it runs on in a daemon thread and its result is discarded."""
from __future__ import annotations

import contextvars
import threading
import time
from typing import Callable, TypeVar

from core.contracts.errors import BackendError

T = TypeVar("T")


def call_with_deadline(fn: Callable[[], T], timeout_s: float, what: str, cancel=None) -> T:
    """fn()'s result, its exception, or BackendError when it has not returned within `timeout_s` seconds.
    With a `cancel` token (core.contracts.cancel.CancelToken), stop waiting as soon as it is cancelled (SearchCancelled)."""
    box: dict[str, object] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    # the call belongs to the caller's search (core/workers/scope.py): the thread carries the caller's context
    threading.Thread(target=contextvars.copy_context().run, args=(work,), daemon=True,
                     name=f"deadline:{what}").start()
    deadline = time.monotonic() + timeout_s
    while not done.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
        if cancel is not None:
            cancel.check()
        if time.monotonic() >= deadline:
            break
    if not done.is_set():
        raise BackendError(f"{what} did not answer within {timeout_s:g} s",
                           "check the backend, or raise the backend_timeout_s setting")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
