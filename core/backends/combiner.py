"""Combiner: calls made at once from several threads, gathered into batches for one forward pass each."""
from __future__ import annotations

import threading
from typing import Any, Callable

from core.contracts.errors import BackendError


class _Slot:
    __slots__ = ("item", "done", "result", "error")

    def __init__(self, item: Any):
        self.item, self.done, self.result, self.error = item, False, None, None


class Combiner:
    """Gathers calls made at once from several threads into batches: the first caller runs batches of what is
    waiting (at most `batch_size`) until its own item is done, then hands over to a waiting caller. No call
    waits for a timer: a lone call runs at once, and calls that arrive during a forward pass go together in
    the next one."""

    def __init__(self, run_batch: Callable[[list], list], batch_size: int):
        self._run = run_batch
        self.batch_size = max(1, int(batch_size))
        self._cond = threading.Condition()
        self._pending: list[_Slot] = []
        self._running = False

    def submit(self, item: Any) -> Any:
        slot = _Slot(item)
        with self._cond:
            self._pending.append(slot)
            while not slot.done and self._running:
                self._cond.wait()
            if not slot.done:
                self._running = True
        if not slot.done:
            try:
                self._drain(slot)
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()
        if slot.error is not None:
            err = slot.error
            raise BackendError(err.message, err.hint) if isinstance(err, BackendError) else err
        return slot.result

    def _drain(self, mine: _Slot) -> None:
        while not mine.done:
            with self._cond:
                batch, self._pending = self._pending[:self.batch_size], self._pending[self.batch_size:]
            if not batch:
                return
            try:
                results = self._run([s.item for s in batch])
            except Exception as exc:
                for s in batch:
                    s.error = exc
            else:
                for s, r in zip(batch, results):
                    s.result = r
            with self._cond:
                for s in batch:
                    s.done = True
                self._cond.notify_all()

