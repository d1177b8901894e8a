"""One worker pool for several web processes on one machine (`python app.py serve --processes N`): the serve
command runs the pool (core.workers.pool.WorkerPool, each model loaded once) in a process of its own behind a
local socket, and each web process reaches it through SharedPool, which offers WorkerPool's face
(backend, worker, describe, close), so the stand-ins of core.workers.proxies work unchanged.

A call carries its search's lane (plain searches' work first) and runs under the search's time limit in the web
process; a cancelled or late call is abandoned by its web process (its connection is closed; the pool's answer
is dropped), as a call already sent to a worker is. The socket is a Unix socket in the data directory, and
every connection proves the key the serve command hands its children (multiprocessing's HMAC handshake)."""
from __future__ import annotations

import logging
import os
import queue
import signal
import threading
import time
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Listener
from typing import Any

from core.backends.http_bounds import search_left
from core.contracts.errors import BackendError
from core.workers.pool import KINDS, WorkerPool
from core.workers.scope import current, lane

log = logging.getLogger(__name__)
# not ECOLENS_*: those are settings, and an unknown one is refused
ADDRESS_ENV, KEY_ENV = "_ECOLENS_POOL_SOCKET", "_ECOLENS_POOL_KEY"


# ---- the pool's side (its own process) ------------------------------------------------------------------
def _answer(pool: WorkerPool, conn) -> None:
    """Answer one web process's connection, one call at a time, until it closes."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        try:
            if message[0] == "facts":
                reply = (True, pool.worker(message[1]).facts())
            else:
                _, kind, method, args, kwargs, priority = message
                with lane(int(priority)):
                    reply = (True, pool.worker(kind).call(method, *args, **kwargs))
        except Exception as exc:
            reply = (False, (type(exc).__name__, getattr(exc, "message", None) or str(exc),
                             getattr(exc, "hint", "") or ""))
        try:
            conn.send(reply)
        except (EOFError, OSError, ValueError):  # the web process gave up on this call (cancelled or late)
            break
    conn.close()


def serve_pool(settings, plugins: tuple[str, ...], address: str, key: bytes, ready=None) -> None:
    """The pool process: a WorkerPool for `settings`, answering every web process that connects to `address`
    with `key`, until the process is stopped. `ready` (an Event) is set once it listens."""
    import importlib

    from core.logs import configure_logging

    try:
        configure_logging(settings.path(), settings.log_level, console=True, name="worker-pool")
    except Exception:
        logging.basicConfig(level=settings.log_level)
    for module in plugins:
        importlib.import_module(module).register()
    pool = WorkerPool(settings, plugins)
    signal.signal(signal.SIGTERM, _stopped)  # the serve command stops it: the workers are closed
    try:
        _listen(pool, address, key, ready)
    finally:
        pool.close()


def _stopped(*_) -> None:
    raise SystemExit(0)


def _listen(pool: WorkerPool, address: str, key: bytes, ready) -> None:
    if os.path.exists(address):
        os.unlink(address)  # a socket left by a pool that was killed
    with Listener(address, family="AF_UNIX", authkey=key) as listener:
        os.chmod(address, 0o600)
        log.info("the shared worker pool listens on %s", address)
        if ready is not None:
            ready.set()
        while True:
            try:
                conn = listener.accept()
            except Exception as exc:  # a client with the wrong key, or one that hung up during the handshake
                log.warning("a connection to the worker pool was refused: %s", exc)
                continue
            threading.Thread(target=_answer, args=(pool, conn), daemon=True, name="pool-connection").start()


# ---- a web process's side ---------------------------------------------------------------------------------
class SharedWorker:
    """A worker of the shared pool as a web process sees it: facts() and call(), like core.workers.pool.Worker."""

    def __init__(self, pool: "SharedPool", kind: str):
        self.pool, self.kind = pool, kind
        self._facts: dict[str, Any] | None = None

    def facts(self) -> dict[str, Any]:
        if self._facts is None:
            self._facts = self.pool.ask(("facts", self.kind), self.pool.start_limit_s)
        return self._facts

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        scope = current()
        if scope.cancel is not None:
            scope.cancel.check()
        return self.pool.ask(("call", self.kind, method, args, kwargs, scope.priority), self.pool.call_limit_s,
                             scope.cancel)

    def queued(self) -> int:
        return 0


class SharedPool:
    """WorkerPool's face over the shared pool at `address` (see the module's docstring). Connections are kept
    and reused, one per call in flight."""

    def __init__(self, settings, address: str, key: bytes):
        self.settings, self.address, self.key = settings, address, key
        self.call_limit_s, self.start_limit_s = settings.backend_timeout_s, settings.worker_start_s
        self._idle: queue.SimpleQueue = queue.SimpleQueue()
        self._workers: dict[str, SharedWorker] = {}
        self._lock = threading.Lock()

    def _connect(self):
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        try:
            return Client(self.address, family="AF_UNIX", authkey=self.key)
        except (OSError, EOFError, AuthenticationError) as exc:
            raise BackendError(f"the shared worker pool at {self.address} cannot be reached: {exc!r}",
                               "the serve command starts it; restart `python app.py serve`") from exc

    def ask(self, message: tuple, limit_s: float, cancel=None) -> Any:
        """Send `message` and wait for its answer, at most `limit_s` (and the running search's time left)."""
        conn = self._connect()
        end = time.monotonic() + limit_s
        search = search_left()
        if search is not None:
            end = min(end, time.monotonic() + search[0])
        try:
            conn.send(message)
            while not conn.poll(0.1):
                if cancel is not None and cancel.cancelled:
                    conn.close()
                    cancel.check()
                if time.monotonic() >= end:
                    conn.close()
                    raise BackendError(f"the shared worker pool did not answer within {limit_s:g} s",
                                       "check the pool's log (data_dir/logs/worker-pool.log), or raise "
                                       "backend_timeout_s")
            ok, value = conn.recv()
        except (EOFError, OSError) as exc:
            conn.close()
            raise BackendError(f"the shared worker pool closed the connection: {exc}",
                               "see data_dir/logs/worker-pool.log; restart `python app.py serve`") from exc
        self._idle.put(conn)
        if ok:
            return value
        from core.workers.pool import _rebuild

        raise _rebuild("shared pool", message[0] if message[0] == "facts" else message[2], value)

    def worker(self, kind: str) -> SharedWorker:
        if kind not in KINDS:
            raise ValueError(f"no worker for backend kind {kind!r}")
        with self._lock:
            return self._workers.setdefault(kind, SharedWorker(self, kind))

    def backend(self, kind: str, build) -> Any:
        from core.workers.proxies import RemoteBackend, SplitEmbedder

        if kind == "embedder":
            return SplitEmbedder(build(), self.worker(kind))
        return RemoteBackend(self.worker(kind))

    def describe(self) -> dict[str, dict[str, Any]]:
        return {kind: {"pid": None, "queued": 0, "shared": self.address} for kind in self._workers}

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


def from_environment(settings, environ=os.environ) -> SharedPool | None:
    """The shared pool the serve command handed this web process (None: it runs its own)."""
    address = environ.get(ADDRESS_ENV)
    if not address:
        return None
    return SharedPool(settings, address, bytes.fromhex(environ.get(KEY_ENV, "")))
