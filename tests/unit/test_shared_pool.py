"""The shared worker pool's protocol (core.workers.shared): a web process's SharedPool asks the pool process's
WorkerPool for a backend's facts and calls, with the search's lane; the pool's errors come back as EcoLens's
own; a cancelled search stops waiting. Here the pool side runs in a thread over a stand-in WorkerPool."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from core.contracts.cancel import CancelToken, SearchCancelled
from core.contracts.errors import BackendError, InputError
from core.workers import shared
from core.workers.scope import current, search_scope


class FakeWorker:
    def __init__(self):
        self.lanes, self.release = [], threading.Event()

    def facts(self):
        return {"attrs": {"model_id": "fake", "dim": 4}, "methods": ["double", "fail", "wait"], "pid": 1}

    def call(self, method, *args, **kwargs):
        self.lanes.append(current().priority)
        if method == "fail":
            raise InputError("bad picture", "send another")
        if method == "wait":
            self.release.wait(10)
            return "late"
        return [2 * a for a in args]


@pytest.fixture
def pool(tmp_path):
    worker = FakeWorker()
    fake = SimpleNamespace(worker=lambda kind: worker)
    address, key = str(tmp_path / "pool.sock"), b"k" * 32
    ready = threading.Event()
    threading.Thread(target=shared._listen, args=(fake, address, key, ready), daemon=True).start()
    assert ready.wait(10)
    settings = SimpleNamespace(backend_timeout_s=10.0, worker_start_s=10.0)
    client = shared.SharedPool(settings, address, key)
    yield client, worker
    worker.release.set()
    client.close()


def test_facts_calls_lanes_and_errors_cross_the_socket(pool):
    client, worker = pool
    backend = client.backend("judge", build=None)
    assert backend.model_id == "fake" and backend.dim == 4
    assert backend.double(1, 2) == [2, 4]
    with search_scope(None, heavy=True):
        backend.double(3)
    assert worker.lanes == [2, 1]  # no search: the background lane; a costly search's: its lane
    with pytest.raises(InputError) as err:
        backend.fail()
    assert err.value.hint == "send another"
    with pytest.raises(AttributeError):
        backend.absent


def test_a_cancelled_search_stops_waiting_for_the_pool(pool):
    client, worker = pool
    backend = client.backend("judge", build=None)
    token = CancelToken()
    threading.Timer(0.3, token.cancel).start()
    with search_scope(token, heavy=False), pytest.raises(SearchCancelled):
        backend.wait()
    worker.release.set()
    assert backend.double(5) == [10]  # the connection of the abandoned call is not reused


def test_a_wrong_key_is_refused(pool, tmp_path):
    client, _ = pool
    other = shared.SharedPool(client.settings, client.address, b"x" * 32)
    with pytest.raises(BackendError, match="cannot be reached"):
        other.worker("judge").facts()
