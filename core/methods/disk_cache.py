"""The disk store of the backend cache (DiskCache): a diskcache.Cache (SQLite, values over 32 KiB in files
beside it) holding bytes under "<kind>:<key>", bounded to `cache_size_mb` megabytes, least recently used
evicted first. Writes are atomic and safe across threads and processes. A damaged or unreadable entry is logged
and treated as a miss; a damaged database is set aside and a fresh one started; a cache that cannot be opened
at all is logged and every lookup is a miss. The wrappers that put it in front of each backend are cache.py."""
from __future__ import annotations

import io
import json
import logging
import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable

import diskcache
import numpy as np

log = logging.getLogger(__name__)

CULL_LIMIT = 10  # entries evicted at most per write once the cache is over its bound (diskcache's default)
TIMEOUT_S = 10.0  # seconds a lookup or write waits for another writer before it counts as a miss / is skipped
WRITE_BEHIND = 256  # entries of put_later waiting for the writer thread at most; beyond, the caller writes
WRITER_IDLE_S = 5.0  # the writer thread ends after this many seconds without entries (a new one starts on demand)
JOURNAL_LIMIT = 4 << 20  # bytes the SQLite write-ahead log is truncated to after a checkpoint
DB_FILES = (diskcache.core.DBNAME, diskcache.core.DBNAME + "-wal", diskcache.core.DBNAME + "-shm")
# the hand-written format used before diskcache: root/<kind>/<key[:2]>/<key>.<json|npy> (and its temporary files)
OLD_KINDS = ("embed", "llm", "judge", "generated", "caption", "reader")
_OLD_FILE = re.compile(r"^\.?[0-9a-f]{64}\.(json|npy)(\.\d+\.\d+\.tmp)?$")
_OLD_DIR = re.compile(r"^[0-9a-f]{2}$")
_old_checked: set[str] = set()
_old_lock = threading.Lock()


class DamagedEntry(Exception):
    """An entry whose stored bytes cannot be read back as what was written."""


class _BytesDisk(diskcache.Disk):
    """diskcache's Disk for our values, which are always bytes: a stored pickle (never written by us) is damage,
    not something to unpickle, and a value file that has gone is logged before diskcache calls it a miss."""

    def store(self, value, read, key=diskcache.core.UNKNOWN):
        if type(value) is not bytes:
            raise TypeError("the disk cache stores bytes only")
        return super().store(value, read, key=key)

    def fetch(self, mode, filename, value, read):
        if mode not in (diskcache.core.MODE_RAW, diskcache.core.MODE_BINARY):
            raise DamagedEntry(f"stored with mode {mode}, not as bytes")
        try:
            return super().fetch(mode, filename, value, read)
        except OSError as exc:
            log.warning("disk cache: the value file %s of an entry cannot be read (%s); a miss", filename, exc)
            raise


def drop_old_format(root: Path) -> int:
    """Remove the entries of the hand-written format used before diskcache (root/<kind>/<xx>/<sha256>.json or
    .npy): nothing reads them any more, and they would sit outside the size bound. Only files of exactly that
    shape go, then the folders they leave empty; anything else stays. Says so in one log line per folder and
    process. Returns the number of files removed."""
    root = Path(root)
    with _old_lock:
        if str(root) in _old_checked:
            return 0
        _old_checked.add(str(root))
    kinds = [root / k for k in OLD_KINDS if (root / k).is_dir()]
    if not kinds:
        return 0
    removed = 0
    for kind in kinds:
        for sub in sorted(kind.iterdir()):
            if not (_OLD_DIR.match(sub.name) and sub.is_dir() and not sub.is_symlink()):
                continue
            for f in sub.iterdir():
                if _OLD_FILE.match(f.name) and f.is_file() and not f.is_symlink():
                    try:
                        f.unlink()
                        removed += 1
                    except FileNotFoundError:  # another process removed it first
                        pass
                    except OSError as exc:
                        log.warning("disk cache: could not remove the old-format entry %s: %s", f, exc)
            _rmdir_if_empty(sub)
        _rmdir_if_empty(kind)
    log.info("disk cache: %s held %d entries in the format used before diskcache; they are never read (every "
             "one would be a miss) and were removed", root, removed)
    return removed


def _rmdir_if_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:  # not empty (something that is not an old entry), or gone already
        pass


class DiskCache:
    """Entries under "<kind>:<key>" in a diskcache.Cache at `root`, at most `size_mb` megabytes (None:
    diskcache's own bound), least recently used evicted first; hit/miss counters per kind (this object's).

    diskcache measures its size as the SQLite file's pages plus the value files; the write-ahead log
    (cache.db-wal, truncated to JOURNAL_LIMIT after each checkpoint, about 4 MiB before one) and cache.db-shm
    come on top. An entry's write culls at most CULL_LIMIT old entries, so the cache may pass its bound by
    about one entry between writes; opening a cache over its bound (its bound was lowered) culls it at once.
    Culling takes whole batches, so a bound that holds fewer than CULL_LIMIT entries can lose the entry just
    written (the smallest bound, 1 MB, holds hundreds of embeddings or answers)."""

    def __init__(self, root: Path, size_mb: float | None = None):
        self.root = Path(root)
        self.size_limit = None if size_mb is None else max(1, int(float(size_mb) * (1 << 20)))
        self.hits: dict[str, int] = {}
        self.misses: dict[str, int] = {}
        self._lock = threading.Lock()
        self._put_failed = False
        # entries written after the answer (put_later): readable here at once, in the store when the writer
        # thread has written them
        self._pending: dict[tuple[str, str], bytes] = {}  # (kind, key) -> the entry's bytes
        self._wake = threading.Condition(self._lock)
        self._writer: threading.Thread | None = None
        self.store: diskcache.Cache | None = self._open()
        if self.store is not None:
            self.shrink()
        try:
            drop_old_format(self.root)
        except OSError as exc:
            log.warning("disk cache: could not look for old-format entries under %s: %s", self.root, exc)

    # ---- opening --------------------------------------------------------------------------------------
    def _open(self) -> diskcache.Cache | None:
        settings: dict[str, Any] = dict(eviction_policy="least-recently-used", cull_limit=CULL_LIMIT,
                                        sqlite_journal_size_limit=JOURNAL_LIMIT)
        if self.size_limit is not None:
            settings["size_limit"] = self.size_limit
        for attempt in (1, 2):
            try:
                return diskcache.Cache(str(self.root), timeout=TIMEOUT_S, disk=_BytesDisk, **settings)
            except sqlite3.DatabaseError as exc:  # a damaged database file: set it aside once and start afresh
                if _disk_trouble(exc):  # a full or failing disk, not a damaged file: nothing to set aside
                    log.error("disk cache: %s could not be opened (%s: the disk may be full); running without a "
                              "cache (every lookup is a miss) until there is room", self.root, exc)
                    return None
                if attempt == 1 and "locked" not in str(exc) and self._set_aside(exc):
                    continue
                failure: BaseException = exc
            except (OSError, diskcache.Timeout) as exc:
                failure = exc
            log.error("disk cache: %s could not be opened; running without a cache (every lookup is a miss)",
                      self.root, exc_info=failure)
            return None
        return None

    def _set_aside(self, exc: BaseException) -> bool:
        """A damaged database: move its files aside (cache.db.damaged-<time>) so a fresh one can be made."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        try:
            for name in DB_FILES:
                src = self.root / name
                if src.exists():
                    os.replace(src, self.root / f"{name}.damaged-{stamp}")
        except OSError:
            log.exception("disk cache: could not move the damaged database under %s aside", self.root)
            return False
        log.warning("disk cache: the database under %s is damaged (%s); moved it aside as *.damaged-%s and "
                    "started an empty cache (its entries are misses)", self.root, exc, stamp)
        return True

    def shrink(self) -> int:
        """Evict least recently used entries until the cache is inside its bound; returns how many went."""
        if self.store is None:
            return 0
        try:
            if self.store.volume() <= self.store.size_limit:
                return 0
            before = self.store.volume()
            gone = self.store.cull(retry=True)
        except (sqlite3.Error, OSError, diskcache.Timeout):
            log.exception("disk cache: could not shrink %s to its bound", self.root)
            return 0
        log.info("disk cache: %s was over its bound of %.1f MB (%.1f MB); evicted %d least recently used entries",
                 self.root, self.store.size_limit / (1 << 20), before / (1 << 20), gone)
        return gone

    def volume(self) -> int:
        """diskcache's measure of the cache's size in bytes (database pages plus value files); 0 without one."""
        if self.store is None:
            return 0
        try:
            return int(self.store.volume())
        except (sqlite3.Error, OSError):
            return 0

    def close(self) -> None:
        self.flush()
        if self.store is not None:
            self.store.close()

    # ---- entries --------------------------------------------------------------------------------------
    def _count(self, table: dict[str, int], kind: str) -> None:
        with self._lock:
            table[kind] = table.get(kind, 0) + 1

    def _get(self, kind: str, key: str, decode: Callable[[bytes], Any], count_miss: bool) -> Any:
        with self._lock:
            data = self._pending.get((kind, key))
        if data is None and self.store is not None:
            try:
                data = self.store.get(f"{kind}:{key}")
            except DamagedEntry as exc:
                log.warning("disk cache: the %s entry %s is damaged (%s); a miss", kind, key, exc)
            except (sqlite3.Error, OSError, diskcache.Timeout) as exc:
                log.warning("disk cache: reading the %s entry %s failed (%s: %s); a miss", kind, key,
                            type(exc).__name__, exc)
        value = None
        if data is not None:
            try:
                value = decode(data)
            except Exception as exc:  # any undecodable value is a damaged entry: a miss, written anew
                log.warning("disk cache: the %s entry %s is damaged (%s: %s); a miss", kind, key,
                            type(exc).__name__, exc)
        if value is None:
            if count_miss:
                self._count(self.misses, kind)
            return None
        self._count(self.hits, kind)
        return value

    def _put(self, kind: str, key: str, data: bytes) -> None:
        if self.store is None:
            return
        try:
            self.store.set(f"{kind}:{key}", data)
        except (sqlite3.Error, OSError, diskcache.Timeout) as exc:  # a cache that cannot write only costs time
            if not self._put_failed:
                log.warning("disk cache: writing to %s failed (%s: %s); answers are not cached until it works "
                            "again (further failures are logged at debug level)", self.root, type(exc).__name__,
                            exc)
                self._put_failed = True
            else:
                log.debug("disk cache: writing the %s entry %s failed: %s", kind, key, exc)

    def _put_later(self, kind: str, key: str, data: bytes) -> None:
        """Write the entry after the caller has answered: a plain search does not wait for the cache's write
        lock, which costly searches' answers hold often under load (up to 0.46 s measured with bench/load.py).
        The entry is read from memory until it is written; at most WRITE_BEHIND wait, beyond that the caller
        writes it itself."""
        if self.store is None:
            return
        with self._lock:
            queued = len(self._pending) < WRITE_BEHIND
            if queued:
                self._pending[(kind, key)] = data
                if self._writer is None or not self._writer.is_alive():
                    self._writer = threading.Thread(target=self._write_pending, daemon=True,
                                                    name="disk-cache-writer")
                    self._writer.start()
                self._wake.notify()
        if not queued:
            self._put(kind, key, data)

    def _write_one(self, entry: tuple[str, str], data: bytes) -> None:
        """Write one waiting entry, then take it off the list (unless a newer value replaced it meanwhile)."""
        self._put(*entry, data)
        with self._lock:
            if self._pending.get(entry) is data:
                del self._pending[entry]
            self._wake.notify_all()

    def _write_pending(self) -> None:
        """The writer thread: waiting entries in turn; it ends after WRITER_IDLE_S without any."""
        while True:
            with self._lock:
                while not self._pending:
                    if not self._wake.wait(WRITER_IDLE_S) and not self._pending:
                        self._writer = None
                        return
                entry, data = next(iter(self._pending.items()))
            self._write_one(entry, data)

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Every entry of put_later in the store: waits for the writer (at most `timeout_s`), then writes here
        what it has not (it ended, never started, or is slow). True once all are written."""
        end = time.monotonic() + timeout_s
        with self._lock:
            while self._pending and self._writer is not None and self._writer.is_alive():
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._wake.wait(min(left, 0.1))
            left_over = dict(self._pending)
        for entry, data in left_over.items():
            self._write_one(entry, data)
        return True

    def get_json(self, kind: str, key: str, count_miss: bool = True) -> Any:
        return self._get(kind, key, lambda b: json.loads(b.decode("utf-8")), count_miss)

    def put_json(self, kind: str, key: str, value: Any) -> None:
        self._put(kind, key, json.dumps(value, ensure_ascii=False).encode("utf-8"))

    def get_array(self, kind: str, key: str) -> np.ndarray | None:
        return self._get(kind, key, lambda b: np.load(io.BytesIO(b), allow_pickle=False), True)

    def put_array(self, kind: str, key: str, value: np.ndarray, later: bool = False) -> None:
        """`later`: written by the cache's writer thread after the caller goes on (see _put_later)."""
        buf = io.BytesIO()
        np.save(buf, np.asarray(value), allow_pickle=False)
        (self._put_later if later else self._put)(kind, key, buf.getvalue())

    def stats(self) -> dict[str, Any]:
        return {"hits": dict(self.hits), "misses": dict(self.misses),
                "hit_total": sum(self.hits.values()), "miss_total": sum(self.misses.values())}


def _disk_trouble(exc: BaseException) -> bool:
    """SQLite's words for a disk that is full or failing (the file itself may be fine)."""
    text = str(exc).lower()
    return "disk i/o" in text or "database or disk is full" in text
