"""Plain searches first in the web server's own process. The model work of costly searches runs in worker
processes at a lower OS priority (core.workers.pool), but each costly search still does work in the server:
cache look-ups, moving pictures and answers to and from the workers, its page updates. All threads of one
Python process share one interpreter lock, so the OS cannot put a plain search first there; this does. A
plain search holds the right of way from its start to its last page update (`plain`); costly work and label
writes call `give_way` at each step, which waits while a plain search runs, never longer than `most_s` (so
nothing starves: a costly search under a stream of plain ones is slowed, never stopped)."""
from __future__ import annotations

import itertools
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from core.workers.scope import HEAVY, LIGHT, current

GIVE_WAY_S = 0.5  # the longest one step of costly work waits for plain searches
PLAIN_MAX_S = 10.0  # a plain search's right of way lapses after this long (one whose page never took its last
# update, say, must not slow every costly search after it)


class RightOfWay:
    def __init__(self, most_s: float = GIVE_WAY_S, lapse_s: float = PLAIN_MAX_S, clock=time.monotonic):
        self.most_s, self.lapse_s, self.clock = most_s, lapse_s, clock
        self.enabled = True
        self._cond = threading.Condition()
        self._holds: dict[int, float] = {}  # each running plain search: when it started
        self._ids = itertools.count(1)
        self.waits = 0  # steps that waited (how often costly work gave way), for the benchmarks and tests

    @contextmanager
    def plain(self) -> Iterator[None]:
        """Held by a plain search while it runs (at most `lapse_s`): costly work waits at its next step."""
        mine = next(self._ids)
        with self._cond:
            self._holds[mine] = self.clock()
        try:
            yield
        finally:
            with self._cond:
                self._holds.pop(mine, None)
                if not self._holds:
                    self._cond.notify_all()

    def _held(self) -> bool:
        """Whether a hold younger than `lapse_s` is in place (call with the condition held)."""
        oldest = self.clock() - self.lapse_s
        return any(t > oldest for t in self._holds.values())

    def busy(self) -> bool:
        """Whether a plain search runs (one that started more than `lapse_s` ago no longer counts)."""
        if not self._holds:  # the common case costs one read, no lock
            return False
        with self._cond:
            return self._held()

    def give_way(self, most_s: float | None = None) -> float:
        """Wait while a plain search runs, at most `most_s` (default: this road's); the seconds waited."""
        if not self.enabled or not self.busy():
            return 0.0
        t0 = time.monotonic()
        end = t0 + (self.most_s if most_s is None else most_s)
        with self._cond:
            while self._held() and (left := end - time.monotonic()) > 0:
                self._cond.wait(min(left, 0.1))  # woken when the last hold ends; a lapse is seen within 0.1 s
            self.waits += 1
        return time.monotonic() - t0


ROAD = RightOfWay()  # one per process: the server's interpreter lock is one


def give_way() -> float:
    """A step of model work: inside a costly search it waits for running plain searches (see RightOfWay);
    plain searches and work of no search (an ingest, the command line) go on at once."""
    if current().priority != HEAVY:
        return 0.0
    return ROAD.give_way()


def in_plain_search() -> bool:
    """Whether the calling thread works for a plain search (its cache writes can wait until it has answered)."""
    return current().priority == LIGHT
