"""Writing to SQLite while another process may hold the write lock: retries with backoff inside a time budget,
and database or disk trouble turned into core.contracts.errors.StorageError (a message and a hint, no raw SQL).

Budgets differ by what is at stake: a search's log entry waits a few seconds (the result is shown either
way, with a notice when it was not saved); a label waits up to two minutes (an annotator's judgement is
never dropped, and never reported saved unless it is)."""
from __future__ import annotations

import errno
import logging
import time
from typing import Callable, TypeVar

from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session

from core.contracts.errors import StorageError

log = logging.getLogger(__name__)
T = TypeVar("T")
SHORT_S = 8.0  # a search, a dialogue turn, an export record
LONG_S = 120.0  # a label (and the session it belongs to)
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


class Busy(Exception):
    """This process's own writer lock stayed taken (another thread is waiting on the database)."""


def is_busy(exc: BaseException) -> bool:
    text = str(getattr(exc, "orig", exc) or exc).lower()
    return "locked" in text or "busy" in text


def is_disk_trouble(exc: BaseException) -> bool:
    """A full or failing disk (or a file size limit), as SQLite or the OS says it."""
    if isinstance(exc, OSError):
        return exc.errno in _FULL
    text = str(getattr(exc, "orig", "") or "").lower()
    return "full" in text or "disk i/o" in text or "ioerr" in text


def storage_error(exc: BaseException) -> StorageError | None:
    """A StorageError saying what happened to the database or the disk, or None for anything else."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, OSError) and exc.errno in _FULL:
        return StorageError(f"The disk is full or a file size limit was reached ({exc.strerror})",
                            "free some space (or raise the limit) and run the command again")
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
        return StorageError(f"A file cannot be written ({exc.strerror})",
                            "check the permissions of the data directory (data_dir)")
    if isinstance(exc, DBAPIError):
        text = str(getattr(exc, "orig", "") or "").lower()
        if is_busy(exc):
            return StorageError("The database is locked by another program and stayed locked",
                                "wait for the other program (an ingest, a backup) to finish, then try again")
        if "full" in text:
            return StorageError("The disk is full: the database cannot grow",
                                "free some space and try again")
        if "disk i/o" in text or "ioerr" in text:
            return StorageError("The database could not be written to disk (a disk I/O error: the disk may be full "
                                "or failing)", "free some space or check the disk, then run the command again "
                                               "(an interrupted ingest resumes where it stopped)")
        if "malformed" in text or "not a database" in text or "corrupt" in text:
            return StorageError("The database file is damaged",
                                "restore data_dir/ecolens.sqlite from a backup, or move it away to start afresh")
        if "readonly" in text or "unable to open" in text:
            return StorageError("The database cannot be written (read-only or missing folder)",
                                "check the permissions of the data directory (data_dir)")
        return StorageError(f"The database could not be used ({type(getattr(exc, 'orig', exc)).__name__})",
                            "see data_dir/logs/ecolens.log for details")
    return None


def retrying(attempt: Callable[[int], T], budget_s: float, what: str) -> T:
    """Run `attempt(busy_timeout_ms)` until it succeeds; while the database is locked (or `attempt` raises
    Busy), wait (SQLite's busy handler, then backoff) until `budget_s` is spent, then raise StorageError
    naming `what`."""
    start = time.monotonic()
    delay = 0.05
    tries = 0
    while True:
        left = budget_s - (time.monotonic() - start)
        tries += 1
        try:
            return attempt(max(50, int(min(left, 10.0) * 1000)))
        except (OperationalError, Busy) as exc:
            if isinstance(exc, OperationalError) and not is_busy(exc):
                if is_disk_trouble(exc):  # the disk, not the code: one line naming the cause
                    log.error("%s failed: %s", what, getattr(exc, "orig", exc))
                else:
                    log.exception("%s failed", what)
                raise storage_error(exc) from None
            left = budget_s - (time.monotonic() - start)
            if left <= 0:
                log.error("%s failed: the database stayed locked for %.0f s (%d tries)", what, budget_s, tries)
                raise StorageError(f"{what} could not be saved: the database stayed locked for {budget_s:.0f} s",
                                   "another program holds the database; try again when it has finished") from None
            log.warning("%s: the database is locked, retrying (try %d, %.0f s left)", what, tries, left)
            time.sleep(min(delay, left))
            delay = min(delay * 2, 2.0)


def write_transaction(engine: Engine, work: Callable[[Session], T], budget_s: float, what: str) -> T:
    """`work(session)` in one write transaction on `engine`, retried while the database is locked (`retrying`)."""
    def attempt(busy_ms: int) -> T:
        with Session(engine) as s, s.begin():
            s.execute(text(f"PRAGMA busy_timeout = {int(busy_ms)}"))
            return work(s)
    return retrying(attempt, budget_s, what)
