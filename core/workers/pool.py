"""Local model work off the web server's CPU share: one worker process per kind of model work (image encoder,
judge, painter or diffusers pipeline, captioner), each loading its model once, at a lower OS priority
(`worker_nice`), so that text embedding, FAISS, SQLite and page updates in the server keep the CPU while a
costly search runs.

Each worker has a bounded queue in the server (`worker_queue`), ordered by lane (core/workers/scope.py): work
of plain searches first, then costly searches, then work of no search (ingest). A cancelled search's queued
calls are dropped (a call already sent runs to its end and its answer is discarded). A worker that dies in
the middle of a call fails that call with a BackendError (its stage degrades with a notice) and is replaced by
a fresh process at the next call; a call that outlives `backend_timeout_s` stops its worker the same way.
Processes are spawned (never forked: the server has threads)."""
from __future__ import annotations

import atexit
import heapq
import itertools
import logging
import multiprocessing
import threading
import time
from multiprocessing.connection import wait
from typing import Any

from core.backends.http_bounds import search_left
from core.contracts import errors
from core.contracts.cancel import SearchCancelled
from core.contracts.errors import BackendError
from core.workers import worker as worker_main
from core.workers.scope import current

log = logging.getLogger(__name__)
KINDS = ("embedder", "judge", "generator", "captioner")


class WorkerCrashed(BackendError):
    """A worker process stopped in the middle of a call (killed, out of memory, a crash in native code)."""

    title = "Worker stopped"


class _Call:
    __slots__ = ("seq", "method", "args", "kwargs", "cancel", "priority", "state", "ok", "value", "done")

    def __init__(self, seq: int, method: str, args: tuple, kwargs: dict, cancel, priority: int):
        self.seq, self.method, self.args, self.kwargs = seq, method, args, kwargs
        self.cancel, self.priority, self.state = cancel, priority, "queued"
        self.ok, self.value, self.done = False, None, threading.Event()

    def finish(self, ok: bool, value: Any) -> None:
        self.ok, self.value, self.state = ok, value, "done"
        self.done.set()


def _rebuild(kind: str, method: str, error: Any) -> Exception:
    """The worker's (class name, message, hint) as an exception of this process."""
    name, message, hint = error
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.EcoLensError):
        return cls(message, hint)
    return BackendError(f"{message} ({name} in the {kind} worker's {method})", hint)


class Worker:
    """One process for one kind of model work, and its queue. `call` blocks the calling thread until the answer
    comes back (or the caller's search is cancelled). Up to `concurrency` calls are in the process at once (a
    judge that batches concurrent calls, as the transformers judge does, still sees them together); the
    others wait in the queue, best lane first."""

    def __init__(self, kind: str, settings, plugins: tuple[str, ...] = (), *, concurrency: int = 1,
                 context: str = "spawn"):
        self.kind, self.settings, self.plugins = kind, settings, tuple(plugins)
        self.concurrency = max(1, int(concurrency))
        self.queue_size, self.call_limit_s = settings.worker_queue, settings.backend_timeout_s
        self.start_limit_s, self.nice = settings.worker_start_s, settings.worker_nice
        self._ctx = multiprocessing.get_context(context)
        self._heap: list[tuple[int, int, _Call]] = []
        self._in_flight: dict[int, tuple[_Call, float, Any]] = {}  # seq -> (call, deadline, process)
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._start_lock = threading.Lock()
        self._proc = self._conn = None
        self._send_lock = threading.Lock()
        self._stopped: set[int] = set()  # pids of processes this side stopped (not crashes)
        self._facts: dict[str, Any] | None = None
        self._failed: BackendError | None = None
        self._closed = False
        self.pid: int | None = None
        self.stats = {"calls": 0, "dropped": 0, "crashes": 0, "starts": 0}
        self._thread = threading.Thread(target=self._serve, daemon=True, name=f"worker-{kind}")
        self._thread.start()

    # ---- the process --------------------------------------------------------------------------------
    def facts(self) -> dict[str, Any]:
        """The backend's plain attributes and method names (starting the process if needed); BackendError when
        its model could not be loaded."""
        self._ensure_started()
        assert self._facts is not None
        return self._facts

    def _ensure_started(self) -> tuple[Any, Any]:
        """The running process and its pipe, started when there is none."""
        with self._start_lock:
            if self._failed is not None:  # a failed load is not retried (as in the server's own registry)
                raise BackendError(self._failed.message, self._failed.hint)
            if self._proc is not None and self._proc.is_alive():
                return self._proc, self._conn
            self._discard()
            try:
                self._start()
            except BackendError as exc:
                self._failed = exc
                raise
            return self._proc, self._conn

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=worker_main.main, name=f"ecolens-{self.kind}-worker", daemon=True,
                                 args=(self.kind, self.settings, self.plugins, child, self.nice,
                                       self.concurrency))
        t0 = time.monotonic()
        proc.start()
        child.close()
        self.stats["starts"] += 1
        ready = wait([parent, proc.sentinel], timeout=self.start_limit_s)
        message = None
        if parent in ready:
            try:
                message = parent.recv()
            except (EOFError, OSError):
                message = None
        if message is None or message[0] != "ready":
            proc.join(5 if message is not None else 0)  # a worker that said why ends by itself
            if proc.is_alive():
                proc.kill()
                proc.join(5)
            parent.close()
            if message is not None:  # the worker said why: the backend's own error
                log.error("the %s worker could not load its model: %s", self.kind, message[1])
                raise BackendError(message[1], message[2])
            what = (f"did not load its model within {self.start_limit_s:g} s" if not ready else
                    f"stopped while loading its model (exit code {proc.exitcode})")
            log.error("the %s worker %s", self.kind, what)
            raise BackendError(f"the {self.kind} worker process {what}",
                               "see data_dir/logs and the terminal; raise worker_start_s for a slow model, or set "
                               "workers = 'off' to load it in the server itself")
        self._proc, self._conn, self._facts = proc, parent, message[1]
        self.pid = message[1].get("pid")
        threading.Thread(target=self._receive, args=(proc, parent), daemon=True,
                         name=f"worker-{self.kind}-replies").start()
        log.info("the %s worker (pid %s, nice +%d) loaded its model in %.1f s", self.kind, self.pid, self.nice,
                 time.monotonic() - t0)

    def _discard(self, kill: bool = False) -> None:
        """Forget the process (stopping it if it still runs); the next call starts a new one."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if proc is not None:
            self._stopped.add(proc.pid)
        if conn is not None and not kill:
            try:
                with self._send_lock:
                    conn.send(None)
            except (OSError, ValueError):
                pass
        if proc is not None:
            proc.join(0 if kill else 2)
            if proc.is_alive():
                proc.kill()
                proc.join(5)

    def _receive(self, proc, conn) -> None:
        """The answers of one process, until it ends; then its unanswered calls fail (see _lost)."""
        while True:
            try:
                ready = wait([conn, proc.sentinel])
                if conn not in ready:
                    break
                seq, ok, value = conn.recv()
            except (EOFError, OSError, ValueError):
                break
            with self._cond:
                entry = self._in_flight.pop(seq, None)
                self._cond.notify_all()
            if entry is not None:
                entry[0].finish(ok, value if ok else _rebuild(self.kind, entry[0].method, value))
        self._lost(proc)
        conn.close()

    def _lost(self, proc) -> None:
        """The process ended: fail its calls still in it, and let the next call start a new one."""
        proc.join(5)
        with self._cond:
            lost = [seq for seq, (_, _, p) in self._in_flight.items() if p is proc]
            calls = [self._in_flight.pop(seq)[0] for seq in lost]
            self._cond.notify_all()
        ours = proc.pid in self._stopped
        if not ours:
            self.stats["crashes"] += 1
            log.error("the %s worker (pid %s) stopped (exit code %s) with %d calls in it; a new one starts for "
                      "the next call", self.kind, proc.pid, proc.exitcode, len(calls))
        with self._start_lock:
            if self._proc is proc:
                self._discard(kill=True)
        for call in calls:
            call.finish(False, WorkerCrashed(
                f"the {self.kind} worker process stopped during this call (exit code {proc.exitcode}); a new one "
                "was started for the calls after it", "see the log; if it happens again, the model may need "
                "more memory, or set workers = 'off'"))

    # ---- calls --------------------------------------------------------------------------------------
    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Run backend.method(*args, **kwargs) in the worker; its result, or its error raised here."""
        scope = current()
        cancel = scope.cancel
        if cancel is not None:
            cancel.check()
        task = _Call(next(self._seq), method, args, kwargs, cancel, scope.priority)
        limit = time.monotonic() + self.call_limit_s
        with self._cond:
            while len(self._heap) >= self.queue_size and not self._closed:
                if cancel is not None and cancel.cancelled:
                    cancel.check()
                if time.monotonic() > limit:
                    raise BackendError(f"the {self.kind} worker has {len(self._heap)} calls waiting already",
                                       "try again in a moment, or raise the worker_queue setting")
                self._cond.wait(0.1)
            if self._closed:
                raise BackendError(f"the {self.kind} worker has been shut down", "restart EcoLens")
            heapq.heappush(self._heap, (task.priority, task.seq, task))
            self.stats["calls"] += 1
            self._cond.notify_all()
        search = search_left()  # the running search's time limit binds a worker call as it binds a server's
        search_end = time.monotonic() + search[0] if search is not None else None
        while not task.done.wait(0.1):
            if cancel is not None and cancel.cancelled:
                self._drop(task)
                cancel.check()
            if search_end is not None and time.monotonic() >= search_end and not task.done.is_set():
                self._drop(task)  # a call already sent runs on; its answer is dropped
                raise BackendError(f"the search's time limit of {search[1]:g} s passed while waiting for the "
                                   f"{self.kind} worker", "raise the deadline_*_s setting of this kind of search")
        if task.ok:
            return task.value
        raise task.value

    def _drop(self, task: _Call) -> None:
        """Take a cancelled search's call out of the queue (a call already sent runs on; its answer is dropped)."""
        with self._cond:
            if task.state == "queued":
                self._heap = [entry for entry in self._heap if entry[2] is not task]
                heapq.heapify(self._heap)
                self.stats["dropped"] += 1
                task.finish(False, SearchCancelled("the search was cancelled"))
                self._cond.notify_all()

    def queued(self) -> int:
        with self._cond:
            return len(self._heap)

    def _next(self) -> tuple[_Call | None, list[_Call]]:
        """Wait for a call to send (room in the process and one queued) or for calls past their time."""
        with self._cond:
            while True:
                if self._closed:
                    return None, []
                now = time.monotonic()
                late = [seq for seq, (_, deadline, _) in self._in_flight.items() if deadline <= now]
                if late:
                    return None, [self._in_flight.pop(seq)[0] for seq in late]
                if self._heap and len(self._in_flight) < self.concurrency:
                    _, _, task = heapq.heappop(self._heap)
                    self._cond.notify_all()  # room in the queue
                    if task.cancel is not None and task.cancel.cancelled:
                        self.stats["dropped"] += 1
                        task.finish(False, SearchCancelled("the search was cancelled"))
                        continue
                    task.state = "sent"
                    return task, []
                deadlines = [deadline for _, deadline, _ in self._in_flight.values()]
                self._cond.wait(max(0.01, min(deadlines) - now) if deadlines else None)

    def _serve(self) -> None:
        """The dispatcher: sends calls to the process, best lane first, and stops a process whose call has
        outlived backend_timeout_s."""
        while True:
            task, late = self._next()
            if task is None and not late:  # closed
                with self._cond:
                    calls = [t for _, _, t in self._heap] + [t for t, _, _ in self._in_flight.values()]
                    self._heap, self._in_flight = [], {}
                for call in calls:
                    call.finish(False, BackendError(f"the {self.kind} worker has been shut down", "restart EcoLens"))
                return
            if late:
                self._too_late(late)
                continue
            try:
                self._send(task)
            except Exception as exc:  # never leave a caller waiting
                log.exception("the %s worker's dispatcher failed on a call", self.kind)
                task.finish(False, BackendError(f"the {self.kind} worker failed: {exc}"))

    def _send(self, task: _Call) -> None:
        try:
            proc, conn = self._ensure_started()
        except BackendError as exc:
            task.finish(False, exc)
            return
        with self._cond:
            self._in_flight[task.seq] = (task, time.monotonic() + self.call_limit_s, proc)
            self._cond.notify_all()
        try:
            with self._send_lock:
                conn.send((task.seq, task.method, task.args, task.kwargs))
        except (OSError, EOFError, ValueError):
            return  # the process has gone: its reader fails the call (see _lost)
        except Exception as exc:  # the arguments do not pickle: a programming error, said plainly
            with self._cond:
                self._in_flight.pop(task.seq, None)
            task.finish(False, BackendError(f"the {self.kind} worker could not be sent the call: {exc}"))

    def _too_late(self, late: list[_Call]) -> None:
        log.error("the %s worker did not answer %s within %g s; it is stopped and replaced", self.kind,
                  ", ".join(t.method for t in late), self.call_limit_s)
        for task in late:
            task.finish(False, BackendError(
                f"the {self.kind} worker did not answer within {self.call_limit_s:g} s (it was stopped and a new "
                "one starts for the next call)", "check the model, or raise the backend_timeout_s setting"))
        with self._start_lock:
            self._discard(kill=True)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        with self._start_lock:
            self._discard()


class WorkerPool:
    """The workers of one server, one per kind of model work, each started at its first call."""

    def __init__(self, settings, plugins: tuple[str, ...] = (), context: str = "spawn"):
        self.settings, self.plugins, self.context = settings, tuple(plugins), context
        self._workers: dict[str, Worker] = {}
        self._lock = threading.Lock()
        atexit.register(self.close)

    def worker(self, kind: str) -> Worker:
        if kind not in KINDS:
            raise ValueError(f"no worker for backend kind {kind!r}")
        with self._lock:
            if kind not in self._workers:
                # the judge takes judge_concurrency calls at once (a batching judge sees them together)
                concurrency = self.settings.judge_concurrency if kind == "judge" else 1
                self._workers[kind] = Worker(kind, self.settings, self.plugins, concurrency=concurrency,
                                             context=self.context)
            return self._workers[kind]

    def backend(self, kind: str, build) -> Any:
        """What the server holds for backend `kind`: its stand-in for the worker (the embedder: `build()` here
        for texts, pictures in the worker)."""
        from core.workers.proxies import RemoteBackend, SplitEmbedder

        if kind == "embedder":
            return SplitEmbedder(build(), self.worker(kind))
        return RemoteBackend(self.worker(kind))

    def describe(self) -> dict[str, dict[str, Any]]:
        """Per worker: its process id, calls waiting and counters (calls, dropped, crashes, starts)."""
        with self._lock:
            return {k: {"pid": w.pid, "queued": w.queued(), **w.stats} for k, w in self._workers.items()}

    def close(self) -> None:
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for w in workers:
            w.close()
