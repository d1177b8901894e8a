"""The float16 store read into the file cache in the background (core.vectors.warm_up): when it is read, from
where, when it is left alone (and that it says so), and that a pass stops when asked."""
from __future__ import annotations

import logging
import os

import pytest

from core.vectors.warm_up import StoreWarmUps, WarmUp, available_memory

GB = 1 << 30


def _file(tmp_path, size: int, name: str = "vectors-1.faiss.f16"):
    path = tmp_path / name
    path.write_bytes(os.urandom(size))
    return path


def test_a_store_that_fits_is_read_through_once(tmp_path, caplog):
    path = _file(tmp_path, 3 * (8 << 20) + 123)  # three whole chunks and a piece
    warm = StoreWarmUps(0.5, available=lambda: 64 * GB)
    with caplog.at_level(logging.INFO, logger="core.vectors.warm_up"):
        run = warm.warm(path)
        assert run is not None and run.done.wait(30)
    assert (run.start, run.read, run.error) == (0, path.stat().st_size, None)
    assert "read into the file cache" in caplog.text
    assert warm.warm(path) is None  # nothing new to read


def test_a_store_that_grew_is_read_on_from_where_the_last_pass_ended(tmp_path):
    path = _file(tmp_path, 5000)
    warm = StoreWarmUps(0.5, available=lambda: 64 * GB)
    first = warm.warm(path)
    assert first.done.wait(30)
    with open(path, "ab") as f:  # an ingest appended rows
        f.write(os.urandom(777))
    second = warm.warm(path)
    assert second.done.wait(30)
    assert (second.start, second.read) == (5000, 777)


def test_a_replaced_store_is_read_from_its_start(tmp_path):
    path = _file(tmp_path, 5000)
    warm = StoreWarmUps(0.5, available=lambda: 64 * GB)
    assert warm.warm(path).done.wait(30)
    fresh = _file(tmp_path, 3000, "fresh.f16")
    os.replace(fresh, path)  # a repair wrote it anew (another inode)
    again = warm.warm(path)
    assert again.done.wait(30)
    assert (again.start, again.read) == (0, 3000)


@pytest.mark.parametrize("share, available, why", [
    (0.5, lambda: 8000, "more than 0.5 of the 0 MB available"),  # 5,000 bytes > half of 8,000
    (0.5, lambda: None, "the system does not say how much memory is available"),
])
def test_a_store_too_large_for_the_memory_is_left_to_the_searches_and_that_is_said(tmp_path, caplog, share,
                                                                                    available, why):
    path = _file(tmp_path, 5000)
    with caplog.at_level(logging.INFO, logger="core.vectors.warm_up"):
        assert StoreWarmUps(share, available=available).warm(path) is None
    assert why in caplog.text and "reads it from disk as searches go" in caplog.text


def test_nothing_is_read_when_the_setting_is_zero_or_there_is_no_store(tmp_path):
    path = _file(tmp_path, 5000)
    assert StoreWarmUps(0.0, available=lambda: 64 * GB).warm(path) is None
    assert StoreWarmUps(0.5, available=lambda: 64 * GB).warm(None) is None
    assert StoreWarmUps(0.5, available=lambda: 64 * GB).warm(tmp_path / "absent.f16") is None


def test_a_pass_asked_to_stop_before_it_begins_reads_nothing(tmp_path):
    path = tmp_path / "sparse.f16"
    with open(path, "wb") as f:
        f.truncate(4 * GB)  # sparse: takes no disk, reads as zeros
    run = WarmUp(path, 0, 4 * GB)
    run.stop()  # asked before its first chunk: it reads none
    run.begin()
    assert run.done.wait(30)
    assert run.read == 0 and run.error is None


def test_a_store_that_cannot_be_read_ends_the_pass_with_a_log_line(tmp_path, caplog):
    run = WarmUp(tmp_path / "gone.f16", 0, 100)
    with caplog.at_level(logging.WARNING, logger="core.vectors.warm_up"):
        run.begin()
        assert run.done.wait(30)
    assert run.error and "searches read it from disk as they go" in caplog.text


def test_the_memory_available_is_read_from_the_system():
    free = available_memory()
    assert free is None or free > 0


def test_scattered_rows_are_read_without_read_ahead_while_a_pass_runs_or_when_the_store_is_too_large(tmp_path,
                                                                                                  monkeypatch):
    import threading

    path = _file(tmp_path, 5000)
    release = threading.Event()
    real = WarmUp._run
    monkeypatch.setattr(WarmUp, "_run", lambda self: (release.wait(30), real(self)))
    warm = StoreWarmUps(0.5, available=lambda: 64 * GB)
    run = warm.warm(path)
    scattered = warm.scattered_reads(path)
    assert scattered()  # the pass is reading the file in order: a search's scattered rows page by page
    release.set()
    assert run.done.wait(30)
    assert not scattered()  # read through: read-ahead back on
    assert not StoreWarmUps(0.0).scattered_reads(path)()  # warm-ups off: as before, read-ahead on
    small = StoreWarmUps(0.5, available=lambda: 8000)
    assert small.warm(path) is None
    assert small.scattered_reads(path)()  # too large to cache ahead: read-ahead would only fill the cache
