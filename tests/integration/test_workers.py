"""The worker pool (core/workers/): local model work runs in worker processes of their own, a cancelled
search's queued calls are dropped, plain searches' calls go before costly ones, and a worker that dies in the
middle of a call is replaced while the search that used it gets a notice instead of a hang. The backends are
the tiny ones of tests/worker_plugin.py, registered by name in the workers as a world plug-in's are; one pool
serves the whole module (spawned processes are slow to start)."""
from __future__ import annotations

import os
import threading
import time

import pytest

from core.backends.base import JudgeRequest
from core.backends.registry import Backends
from core.config import Settings
from core.contracts.cancel import CancelToken, SearchCancelled
from core.search.presets import request_for
from core.workers.pool import WorkerCrashed, WorkerPool
from core.workers.scope import search_scope
from tests import worker_plugin
from tests.fakes import FakeBackends, FakeEmbedder
from tests.unit.test_ui_fakes import DIM, FakeEngine

PLUGINS = ("tests.worker_plugin",)


@pytest.fixture(scope="module")
def backends(tmp_path_factory):
    worker_plugin.register()
    data = tmp_path_factory.mktemp("workers")
    settings = Settings(data_dir=str(data), judge="test-pid", generator="test-gate", backend_timeout_s=120,
                        worker_nice=5)
    b = Backends(settings)
    b.workers = WorkerPool(settings, PLUGINS)
    yield b
    b.workers.close()


def until(condition, what: str, timeout: float = 60) -> None:
    """Wait until `condition()` holds (the workers run in other processes: their state is polled)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def painted(backends) -> list[str]:
    path = backends.settings.path("painted.txt")
    return path.read_text().splitlines() if path.exists() else []


class Held:
    """A generator call that keeps the painter's worker busy until release()."""

    def __init__(self, backends, gate, name: str):
        self.gate, self.prompt = gate, f"hold:{gate} {name}"
        worker = backends.workers.worker("generator")
        sent = worker.stats["calls"] + 1
        self.thread = threading.Thread(target=backends.generator.generate, args=(self.prompt,),
                                       kwargs={"seed": 1})
        self.thread.start()
        until(lambda: worker.stats["calls"] >= sent and worker.queued() == 0, "the held call to be sent")

    def release(self) -> None:
        self.gate.touch()
        self.thread.join(60)
        assert not self.thread.is_alive()


def test_model_work_runs_in_another_process_with_a_lower_priority(backends):
    judge = backends.judge
    answer = judge.ask(JudgeRequest(image=None, question="Is it a bird?"))
    pid = int(answer.reason.split()[1])
    assert pid != os.getpid() and pid == judge.worker_pid == backends.workers.describe()["judge"]["pid"]
    assert os.getpriority(os.PRIO_PROCESS, pid) > os.getpriority(os.PRIO_PROCESS, os.getpid()) or \
        os.sched_getscheduler(pid) == os.SCHED_IDLE
    assert (judge.model_id, judge.is_standin) == ("test-pid-judge", True)  # what the worker's backend says
    assert backends.describe()["judge"] == {"model_id": "test-pid-judge", "standin": True}


def test_a_verify_search_is_judged_in_the_worker(backends, tmp_path):
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=backends.judge,
                                                        generator=backends.generator))
    result = engine.search(request_for("Verify", "a red bird", k=5, rerank_k=6, m=1))
    reasons = {a["reason"] for p in result.stages["rerank"]["photos"] for a in p["answers"]}
    assert reasons == {f"pid {backends.judge.worker_pid}"} and str(os.getpid()) not in str(reasons)
    assert result.stages["visret"]["visualizations"]  # the picture came from the painter's worker


def test_a_cancelled_search_drops_its_queued_work(backends, tmp_path):
    worker = backends.workers.worker("generator")
    held = Held(backends, tmp_path / "gate", "first")
    token, outcomes = CancelToken(), []

    def queued(i: int) -> None:
        with search_scope(token, heavy=True):
            try:
                backends.generator.generate(f"dropped {i}", seed=i)
                outcomes.append("drawn")
            except SearchCancelled:
                outcomes.append("cancelled")
    dropped = worker.stats["dropped"]
    threads = [threading.Thread(target=queued, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    until(lambda: worker.queued() == 3, "three queued calls")
    token.cancel("the page was closed")
    for t in threads:
        t.join(10)
    assert outcomes == ["cancelled"] * 3 and worker.queued() == 0
    assert worker.stats["dropped"] - dropped == 3
    held.release()
    backends.generator.generate("after", seed=2)
    assert not [p for p in painted(backends) if p.startswith("dropped")]  # the worker never drew them
    assert painted(backends)[-2:] == [held.prompt, "after"]


def test_plain_searches_work_goes_before_costly_searches_work(backends, tmp_path):
    worker = backends.workers.worker("generator")
    held = Held(backends, tmp_path / "gate", "busy")

    def call(prompt: str, heavy: bool) -> threading.Thread:
        def run() -> None:
            with search_scope(CancelToken(), heavy=heavy):
                backends.generator.generate(prompt, seed=3)
        t = threading.Thread(target=run)
        t.start()
        return t
    threads = [call("costly 1", True), call("costly 2", True)]
    until(lambda: worker.queued() == 2, "two costly calls queued")
    threads.append(call("plain", False))
    until(lambda: worker.queued() == 3, "the plain call queued")
    held.release()
    for t in threads:
        t.join(30)
    assert painted(backends)[-3:] == ["plain", "costly 1", "costly 2"]


def test_a_crashed_worker_is_replaced_and_the_call_fails_at_once(backends):
    worker = backends.workers.worker("generator")
    backends.generator.generate("before", seed=1)
    before, crashes = worker.pid, worker.stats["crashes"]
    with pytest.raises(WorkerCrashed, match="stopped during this call \\(exit code 7\\)"):
        backends.generator.generate("a crash", seed=1)
    assert worker.stats["crashes"] == crashes + 1
    out = backends.generator.generate("drawn again", seed=1)  # a new process draws it
    assert out.model_id == "test-gate-painter" and worker.pid not in (None, before)


def test_a_search_whose_worker_crashed_gets_a_notice(backends, tmp_path):
    engine = FakeEngine(tmp_path, backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=backends.judge,
                                                        generator=backends.generator))
    result = engine.search(request_for("Visualize", "a bird crash landing", k=5, m=1))
    assert any("worker process stopped during this call" in n for n in result.notices), result.notices
    assert result.hits  # the search ended with results (the rewrite baseline), not a hang or a failure


def test_a_call_that_outlives_the_backend_timeout_stops_its_worker(backends, tmp_path):
    from core.workers.pool import Worker

    worker = Worker("generator", backends.settings.replace(backend_timeout_s=1.0), PLUGINS)
    try:
        assert worker.call("generate", "quick", seed=1).prompt == "quick"
        first = worker.pid
        t0 = time.monotonic()
        with pytest.raises(Exception, match="did not answer within 1 s"):
            worker.call("generate", f"hold:{tmp_path / 'never'} stuck", seed=1)  # the gate never opens
        assert time.monotonic() - t0 < 30
        assert worker.call("generate", "again", seed=1).prompt == "again" and worker.pid != first
    finally:
        worker.close()


def test_the_embedder_embeds_texts_here_and_pictures_in_its_worker(tmp_path):
    from PIL import Image

    from core.workers.proxies import SplitEmbedder

    calls = []

    class Worker:
        def call(self, method, *args):
            calls.append(method)
            return "from the worker"
    local = FakeEmbedder(DIM)
    local.preprocess_images = local.encode_preprocessed = lambda *a: None  # as open_clip's embedder has them
    split = SplitEmbedder(local, Worker())
    assert split.embed_texts(["a frog"]).shape == (1, DIM) and split.model_id == local.model_id
    assert split.embed_images([Image.new("RGB", (8, 8))]) == "from the worker" and calls == ["embed_images"]
    assert not hasattr(split, "encode_preprocessed")  # an ingest embeds pictures through the worker too
