"""Measurements of one benchmark process: percentiles of timings, its private and file-backed memory (now and
at peak), and the pauses it receives from outside (bench/scale.py's phases)."""
from __future__ import annotations

import threading

import numpy as np


def pct(times: list[float]) -> tuple[float, float]:
    """p50 and p95 of `times` (seconds) in milliseconds."""
    arr = np.array(times) * 1000
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def memory_now() -> dict[str, int]:
    """Bytes of this process: private anonymous memory, and file-backed resident pages (memory maps, code)."""
    out = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[0].rstrip(":") in ("Rss", "Anonymous"):
                out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return {"anon": out.get("Anonymous", 0), "file": out.get("Rss", 0) - out.get("Anonymous", 0)}


class PeakMemory:
    """Samples memory_now() every second in a thread (reading smaps costs time in a large process); keeps the
    peaks."""

    def __init__(self):
        self.anon = self.file = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while True:
            now = memory_now()
            self.anon, self.file = max(self.anon, now["anon"]), max(self.file, now["file"])
            if self._stop.wait(1.0):
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class Pauses:
    """Counts the SIGCONTs this process receives: on a shared machine a long run may be paused from outside
    (SIGSTOP to its process group while someone else measures, SIGCONT after). A pause inflates the wall time
    of whatever was being timed, never its CPU time; a query timed across a pause is left out of the
    percentiles (counted as `paused_queries`: not timed again, which would find its pages warm), and every phase
    records how many pauses it saw."""

    count = 0

    @classmethod
    def install(cls) -> None:
        import signal

        def on_cont(signum, frame):
            cls.count += 1

        signal.signal(signal.SIGCONT, on_cont)
