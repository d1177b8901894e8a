"""A search's events as they happen, for a front end that shows them (the web app): the search runs in a thread of
its own and hands each event over a queue; closing the iterator early cancels it; with a heartbeat, each quiet spell
yields a Waiting event naming the step still running (core.contracts.events.Waiting)."""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Callable, Iterator

from core.contracts.cancel import CancelToken, SearchCancelled
from core.contracts.errors import EcoLensError
from core.contracts.events import Cancelled, Done, Event, Failed, StageEvent, Waiting
from core.vectors.threads import set_threads

log = logging.getLogger(__name__)

# run(on_event, cancel): one search to its end (SearchEngine.search with the request bound)
Runner = Callable[[Callable[[Event], None], CancelToken], object]


def events(run: Runner, name: str, cancel: CancelToken | None = None,
           heartbeat_s: float | None = None) -> Iterator[Event]:
    """The events of one search (`run`, called on a thread of its own; `name` for the log) as they happen,
    ending with Done, Failed or Cancelled. Closing the iterator early cancels the search."""
    token = cancel or CancelToken()
    q: queue.Queue = queue.Queue()

    def work() -> None:
        # one search among the many a web process serves at once: FAISS searches on this thread alone. Why: each
        # search's thread is new, so FAISS's OpenMP would start a team of threads for it whose waiting threads spin
        # after each call: about 7-10 ms of CPU a Fast search on two cores (docs/benchmarks-log.md); a search's
        # query vectors are few, so the team gave it nothing
        set_threads(1)
        try:
            run(q.put, token)
        except SearchCancelled:
            q.put(Cancelled(token.reason or "cancelled"))
        except Exception as exc:  # handed to the consumer, who decides how to show it
            if not isinstance(exc, EcoLensError):
                log.exception("search %r failed", name)
            q.put(Failed(exc))

    threading.Thread(target=work, daemon=True, name="search").start()
    finished = False
    running: list[tuple[str, float]] = []  # the steps started and not yet done, innermost last
    t0 = time.monotonic()
    try:
        while True:
            try:
                event = q.get(timeout=heartbeat_s)
            except queue.Empty:
                stage, since = running[-1] if running else ("", t0)
                yield Waiting(stage, round(time.monotonic() - since, 1))
                continue
            if isinstance(event, StageEvent):
                if event.status == "started":
                    running.append((event.stage, time.monotonic()))
                else:
                    running = [r for r in running if r[0] != event.stage]
            yield event
            if isinstance(event, (Done, Failed, Cancelled)):
                finished = True
                return
    finally:
        if not finished:
            token.cancel("nobody is waiting for the results any more")
