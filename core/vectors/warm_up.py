"""Reading the float16 re-scoring store (core.vectors.half_store) into the operating system's file cache in the
background when an index is opened for searching.

Why: an IVF-PQ search re-scores a short list of some 2,500 vectors, each in its own place in the store. While
the store is not in the file cache, each of them is a read from disk, and through the plain memory map the
kernel reads megabytes around each one. Measured at five million photos (bench/scale.py, 2026-11-27): the first
filtered search after opening took 3.1 s, and the months filter's p95 was 24-26 ms against 14 ms once the file
was cached. One sequential pass reads the whole file at disk speed instead (5.1 GB in 4-7 s there), and the
pages it leaves are the operating system's: shared between processes, reclaimable, not counted in the
process's own memory. While the pass runs, searches read their few rows one page each (core.vectors.half_store).

Only when it fits: the store is read when its unread part is at most `share` of the memory available now
(/proc/meminfo); otherwise it is left to be read page by page as searches need it, and a log line says so. A
store that grows (an ingest appending) is read on from where the last pass ended."""
from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)

CHUNK = 8 << 20  # bytes read at a time (one reused buffer)


def available_memory() -> int | None:
    """Bytes of memory available to new work (MemAvailable), or None where the system does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


class WarmUp:
    """One background pass over a file's bytes [start, end). `done` is set when it ends (read through,
    stopped, or failed); `read` counts the bytes read so far."""

    def __init__(self, path: Path, start: int, end: int):
        self.path, self.start, self.end = Path(path), start, end
        self.read = 0
        self.seconds = 0.0
        self.error: str | None = None
        self.done = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"warm-up {self.path.name}", daemon=True)

    def begin(self) -> "WarmUp":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop after the chunk being read (the file is being replaced, or the process is closing)."""
        self._stop.set()

    def _run(self) -> None:
        t0 = time.monotonic()
        buf = bytearray(CHUNK)
        try:
            with open(self.path, "rb", buffering=0) as f:  # unbuffered: readinto fills `buf` straight from the OS
                f.seek(self.start)
                while self.start + self.read < self.end and not self._stop.is_set():
                    got = f.readinto(buf)  # the interpreter lock is released while it reads
                    if not got:
                        break
                    self.read += got
        except OSError as exc:
            self.error = str(exc)
            log.warning("reading %s into the file cache stopped: %s (searches read it from disk as they go)",
                        self.path, exc)
        finally:
            self.seconds = time.monotonic() - t0
            if self.error is None:
                log.info("%s: %.0f MB read into the file cache in %.1f s%s", self.path.name, self.read / 1e6,
                         self.seconds, " (stopped early)" if self._stop.is_set() else "")
            self.done.set()  # last: whoever waits for it sees the figures and the log line


class StoreWarmUps:
    """The warm-up passes of one process's stores, by file: a store opened again (a reload after an ingest's
    checkpoint) is read on from where its last pass ended, not from the start."""

    def __init__(self, share: float, available=available_memory):
        self.share, self.available = share, available
        self._passes: dict[Path, tuple[int, WarmUp]] = {}  # file -> (its inode, the latest pass)
        self._too_large: set[Path] = set()  # files left to the searches (too large, or memory unknown)
        self._lock = threading.Lock()

    def warm(self, path: Path | None) -> WarmUp | None:
        """Start reading `path` into the file cache if it fits (see the module); the pass, or None when
        nothing was started (off, nothing new to read, too large: a log line says which)."""
        if path is None or self.share <= 0:
            return None
        path = Path(path)
        try:
            st = os.stat(path)
        except OSError:
            return None
        with self._lock:
            inode, last = self._passes.get(path, (None, None))
            start = 0
            if last is not None and inode == st.st_ino:
                if not last.done.is_set():
                    return last  # still reading: it reads to the length the file had when it began
                start = last.start + last.read
            elif last is not None:
                last.stop()  # the file was replaced: its pages are not the new file's
            if start >= st.st_size:
                return None
            free = self.available()
            todo = st.st_size - start
            if free is None or todo > self.share * free:
                self._too_large.add(path)
                log.info("%s (%.0f MB unread) is not read into the file cache ahead of searches: %s; re-scoring "
                         "reads it from disk as searches go (index_warm_share=%s)", path.name, todo / 1e6,
                         "the system does not say how much memory is available" if free is None else
                         f"more than {self.share:g} of the {free / 1e6:.0f} MB available", self.share)
                return None
            self._too_large.discard(path)
            run = WarmUp(path, start, st.st_size)
            self._passes[path] = (st.st_ino, run)
        return run.begin()

    def scattered_reads(self, path: Path) -> Callable[[], bool]:
        """For core.vectors.half_store.HalfStore.scattered_reads: whether a search's few scattered rows are read
        with read-ahead off now, i.e. while this file's pass is reading it (read-ahead would fetch megabytes around
        each row, the pass fetches them in order), or always when the file was too large to read ahead of
        searches (read-ahead would fill the cache with pages nobody asked for). Otherwise (read through, or
        warm-ups off) read-ahead stays on: it is what caches the file as searches go."""
        path = Path(path)
        with self._lock:
            too_large = path in self._too_large
            last = self._passes.get(path)
        run = last[1] if last is not None else None
        return lambda: too_large or (run is not None and not run.done.is_set())
