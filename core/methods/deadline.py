"""Time limits inside a search.

`SearchDeadline`: the whole search's limit (one setting per kind of search: deadline_fast_s,
deadline_visualize_s, deadline_verify_s, deadline_cover_s). The engine starts it and applies it around the
search (`applied`): every model-server call made in it, in any thread started with a copy of its context,
gets at most what is left (core.backends.http_bounds.search_limit), and the stages stop waiting when it has
passed. What the search has by then is returned: photos not yet checked keep their first-stage order, and
one notice says which limit passed, which remote model took the time, and what was left undone.

`call_with_deadline`: waiting for one backend call at most a given time, so that a hung backend degrades its
stage instead of hanging the search. The call itself cannot be killed; it runs on in a daemon thread and its
result is discarded."""
from __future__ import annotations

import contextvars
import logging
import math
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, TypeVar

from core.backends import http_bounds
from core.contracts.errors import BackendError
from core.contracts.events import STEP_BACKEND  # which step waits on which model (re-exported here)
from core.redact import mask_url

log = logging.getLogger(__name__)
T = TypeVar("T")

BACKEND_WHO = {"llm": "the language model", "generator": "the picture maker", "judge": "the photo checker"}


def backend_where(settings: Any, kind: str) -> str:
    """Who a backend of `kind` is, for a notice: its role and, for a remote one, its server address with any
    credentials masked ('the photo checker at http://gpu-box:8000/v1'); an in-process one by its setting."""
    name = str(getattr(settings, kind) or "") if kind in BACKEND_WHO else ""
    who = BACKEND_WHO.get(kind, kind)
    if name == "openai" or name.startswith("openai:"):
        url = str(settings.openai_base_url or "")
        return f"{who} at {mask_url(url.rstrip('/')) if url else 'api.openai.com'}"
    return f"{who} ({name})" if name else who


@dataclass
class SearchDeadline:
    """One search's time limit. `total_s` None: no limit (a search made outside the engine)."""

    total_s: float | None = None
    name: str = ""  # the kind of search it bounds ("Verify")
    setting: str = ""  # the setting that sets it ("deadline_verify_s")
    start: float = field(default_factory=time.monotonic)
    noticed: bool = False

    @property
    def end(self) -> float:
        return math.inf if self.total_s is None else self.start + self.total_s

    def left(self) -> float:
        return self.end - time.monotonic()

    def passed(self) -> bool:
        return self.left() <= 0

    def bound(self, timeout_s: float) -> float:
        """`timeout_s` cut to what is left of the search (never below zero)."""
        return max(0.0, min(float(timeout_s), self.left()))

    @contextmanager
    def applied(self) -> Iterator[None]:
        """Every model-server call inside the block ends by this deadline (threads given a copy of the context
        too: `in_context`)."""
        if self.total_s is None:
            yield
            return
        with http_bounds.search_limit(self.end, self.total_s):
            yield

    def slowest(self, timings_ms: dict[str, float], settings: Any) -> str:
        """The remote model that took most of this search so far, with its address and time ('' if none did)."""
        spent: dict[str, float] = {}
        for step, ms in timings_ms.items():
            kind = STEP_BACKEND.get(step)
            if kind:
                spent[kind] = spent.get(kind, 0.0) + ms / 1000
        if not spent:
            return ""
        kind = max(spent, key=lambda k: spent[k])
        return f"{backend_where(settings, kind)} took {spent[kind]:.0f} s of it"

    def notice_text(self, undone: str, slow: str) -> str:
        """The notice of a search cut by its limit: which limit, who took the time, what was left undone."""
        name = f"{self.name}'s" if self.name else "the search's"
        text = f"the search stopped at {name} time limit of {self.total_s:g} s"
        if slow:
            text += f" ({slow})"
        return f"{text}: {undone}; raise {self.setting or 'the deadline_*_s settings'} to wait longer"


def in_context(fn: Callable[..., T]) -> Callable[..., T]:
    """`fn` bound to a copy of the caller's context: a thread running it keeps the search's time limit."""
    ctx = contextvars.copy_context()
    return lambda *args, **kwargs: ctx.run(fn, *args, **kwargs)


def call_with_deadline(fn: Callable[[], T], timeout_s: float, what: str, cancel=None) -> T:
    """fn()'s result, its exception, or BackendError when it has not returned within `timeout_s` seconds.
    With a `cancel` token (core.contracts.cancel.CancelToken), stop waiting as soon as it is cancelled
    (SearchCancelled). `fn` runs with the caller's context (the search's time limit)."""
    box: dict[str, object] = {}
    done = threading.Event()
    call = in_context(fn)

    def work() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, daemon=True, name=f"deadline:{what}").start()
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
