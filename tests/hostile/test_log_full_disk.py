"""A log file that cannot be written (a full disk: OSError ENOSPC injected into the file's stream) never
breaks the program that logs: no exception, no traceback, one report on stderr naming the cause, the lines
dropped meanwhile; once the disk takes writes again, the file says how many lines were lost and why, and a
second failure is reported again."""
from __future__ import annotations

import errno
import logging

import pytest

from core.logs import LogFile, configure_logging


class FullDisk:
    """A file stream on a full disk: every write fails with ENOSPC."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        pass

    def seek(self, *args) -> int:  # the rotation check asks where the file ends
        return 0

    def tell(self) -> int:
        return 0

    def close(self) -> None:
        pass


@pytest.fixture()
def log_file(tmp_path):
    path = configure_logging(tmp_path, "INFO")
    handler = next(h for h in logging.getLogger().handlers if isinstance(h, LogFile))
    yield path, handler
    for h in [h for h in logging.getLogger().handlers if isinstance(h, LogFile)]:
        logging.getLogger().removeHandler(h)
        h.close()


def test_a_full_disk_under_the_log_file_is_reported_once_and_the_program_goes_on(log_file, capsys):
    path, handler = log_file
    log = logging.getLogger("ecolens.test")
    log.warning("before the disk filled")
    sound = handler.stream
    handler.stream = FullDisk()
    for i in range(5):
        log.warning("line %d while the disk is full", i)  # no exception reaches the caller
    log.error("a real fault", exc_info=ValueError("boom"))
    err = capsys.readouterr().err
    assert err.count("cannot be written") == 1 and "No space left on device" in err and "Traceback" not in err
    assert str(path) in err and "free some disk space" in err
    handler.stream = sound  # space was freed
    log.warning("after space was freed")
    text = path.read_text(encoding="utf-8")
    assert "before the disk filled" in text and "after space was freed" in text
    assert "6 log line(s) were lost while the log file could not be written (No space left on device)" in text
    assert "while the disk is full" not in text
    handler.stream = FullDisk()  # full again: said again
    log.warning("full again")
    assert capsys.readouterr().err.count("cannot be written") == 1
    handler.stream = sound
    log.warning("and back")
    assert "1 log line(s) were lost" in path.read_text(encoding="utf-8")


def test_the_note_waits_while_the_disk_stays_full(log_file, capsys):
    path, handler = log_file
    log = logging.getLogger("ecolens.test")
    sound = handler.stream
    handler.stream = FullDisk()
    for i in range(3):
        log.warning("lost %d", i)
    handler.stream = sound
    log.warning("back")
    assert "3 log line(s) were lost" in path.read_text(encoding="utf-8")
    assert capsys.readouterr().err.count("cannot be written") == 1
