"""The slots of costly searches: searches that call costly backends (every preset but Fast) share
`max_heavy_searches` slots, at most `max_waiting_heavy` wait for one (a further one is refused with BusyError), and
plain searches never wait."""
from __future__ import annotations

import threading
from contextlib import contextmanager

from core.contracts.errors import BusyError


class CostlySlots:
    def __init__(self, settings):
        self.settings = settings
        self.free = threading.BoundedSemaphore(settings.max_heavy_searches)
        self._waiting = 0  # costly searches waiting for a slot (at most max_waiting_heavy)
        self._waiting_lock = threading.Lock()

    @contextmanager
    def held(self, run, heavy: bool):
        """A slot for the block when `heavy` (waiting for one, with a notice on `run`, checking for
        cancellation); nothing for a plain search."""
        if not heavy:
            yield
            return
        s = self.settings
        if not self.free.acquire(blocking=False):
            with self._waiting_lock:
                full = self._waiting >= s.max_waiting_heavy
                if not full:
                    self._waiting += 1
            if full:
                raise BusyError(f"{s.max_heavy_searches} expensive searches are running and "
                                f"{s.max_waiting_heavy} are waiting already",
                                "try again in a minute, or use Fast, which never waits")
            run.notice("other expensive searches are running; this one waits for a free slot")
            try:
                while not self.free.acquire(timeout=0.2):
                    run.check()
            finally:
                with self._waiting_lock:
                    self._waiting -= 1
        try:
            yield
        finally:
            self.free.release()
