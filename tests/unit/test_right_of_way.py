"""Plain searches first in the server process (core.workers.right_of_way): costly steps wait while a plain
search runs, never longer than their bound, and plain work never waits; a costly search's judge calls wait
for a running plain search; a plain search's cache writes happen after it answers (DiskCache put_later)."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from core.methods.disk_cache import WRITE_BEHIND, DiskCache
from core.search.presets import request_for
from core.workers.right_of_way import ROAD, RightOfWay, give_way, in_plain_search
from core.workers.scope import search_scope
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge
from tests.unit.test_ui_fakes import DIM, FakeEngine


@contextmanager
def plain_search_running(road: RightOfWay) -> Iterator[None]:
    """A plain search in a thread of its own, holding `road` until the block ends."""
    held, release = threading.Event(), threading.Event()

    def plain_search() -> None:
        with road.plain():
            held.set()
            release.wait(10)

    t = threading.Thread(target=plain_search)
    t.start()
    assert held.wait(5)
    try:
        yield
    finally:
        release.set()
        t.join(5)


def test_costly_steps_wait_for_a_plain_search_and_no_longer():
    road = RightOfWay(most_s=5.0)
    assert road.give_way() == 0.0  # nothing plain runs: no wait
    waited: list[float] = []
    costly = threading.Thread(target=lambda: waited.append(road.give_way()))
    with plain_search_running(road):
        assert road.busy()
        costly.start()
        costly.join(0.3)
        assert costly.is_alive()  # it waits while the plain search runs
    costly.join(5)
    assert not costly.is_alive() and 0.25 <= waited[0] < 5.0 and road.waits == 1
    assert not road.busy()


def test_a_wait_is_bounded_under_an_endless_plain_search():
    road = RightOfWay(most_s=0.2)
    with road.plain():
        t0 = time.monotonic()
        waited = road.give_way()
        assert 0.19 <= waited and time.monotonic() - t0 < 1.5  # it goes on after its bound
        assert road.give_way(0.05) < 0.5  # a shorter bound of its own
        road.enabled = False
        assert road.give_way() == 0.0  # switched off: never waits


def test_a_plain_search_that_never_ends_stops_counting():
    now = [100.0]
    road = RightOfWay(most_s=5.0, lapse_s=10.0, clock=lambda: now[0])
    hold = road.plain()
    hold.__enter__()  # a page that never took its last update: the hold is never released
    try:
        assert road.busy()
        now[0] += 10.5  # past its lapse
        t0 = time.monotonic()
        assert not road.busy() and road.give_way() == 0.0 and time.monotonic() - t0 < 0.2
    finally:
        hold.__exit__(None, None, None)


def test_only_work_of_a_costly_search_gives_way():
    with ROAD.plain():
        t0 = time.monotonic()
        assert give_way() == 0.0  # no search: an ingest or the command line goes on
        with search_scope(None, heavy=False):
            assert give_way() == 0.0 and in_plain_search()  # a plain search never waits for another
        assert time.monotonic() - t0 < 0.1
        with search_scope(None, heavy=True):
            assert not in_plain_search()
            assert give_way() > 0.0  # a costly search's step waits (up to the bound)


def test_a_costly_search_judges_only_after_a_running_plain_search(tmp_path):
    judge = FakeJudge()
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge),
                        judge_concurrency=1)
    done: list = []
    search = threading.Thread(target=lambda: done.append(engine.search(request_for("rerank-full", "a frog",
                                                                                   rerank_k=4))))
    with plain_search_running(ROAD):
        search.start()
        search.join(0.3)
        assert search.is_alive() and not judge.calls  # no judge call while the plain search runs
    search.join(30)
    assert done and judge.calls  # then it runs to the end


def test_a_plain_search_is_not_slowed_by_the_road(tmp_path):
    engine = FakeEngine(tmp_path)
    with ROAD.plain():  # another plain search runs
        t0 = time.perf_counter()
        assert engine.search(request_for("Fast", "a frog", k=3)).ids
        assert time.perf_counter() - t0 < 2
    assert not ROAD.busy()  # the engine's own hold ended with the search


def test_entries_written_later_are_readable_at_once_and_stored_on_close(tmp_path):
    cache = DiskCache(Path(tmp_path) / "c", 10)
    cache.put_array("embed", "k1", np.arange(3.0), later=True)
    assert np.array_equal(cache.get_array("embed", "k1"), np.arange(3.0))  # from memory, or already written
    assert cache.flush()
    assert cache.store.get("embed:k1") is not None and not cache._pending
    cache.put_array("embed", "k2", np.ones(2), later=True)
    cache.close()  # closing writes what is still waiting
    again = DiskCache(Path(tmp_path) / "c", 10)
    assert np.array_equal(again.get_array("embed", "k2"), np.ones(2))
    again.close()


def test_a_full_write_behind_queue_writes_in_the_caller(tmp_path, monkeypatch):
    cache = DiskCache(Path(tmp_path) / "c", 10)
    gate = threading.Event()
    real_put = cache._put

    def slow_put(kind, key, data):  # the writer thread is stuck on its first entry
        if threading.current_thread().name == "disk-cache-writer":
            gate.wait(10)
        real_put(kind, key, data)

    monkeypatch.setattr(cache, "_put", slow_put)
    for i in range(WRITE_BEHIND + 5):
        cache.put_array("embed", f"k{i}", np.full(2, i), later=True)
    last = f"k{WRITE_BEHIND + 4}"
    assert cache.store.get(f"embed:{last}") is not None  # past the bound the caller wrote it itself
    gate.set()
    assert cache.flush()
    assert all(cache.get_array("embed", f"k{i}") is not None for i in range(WRITE_BEHIND + 5))
    cache.close()
