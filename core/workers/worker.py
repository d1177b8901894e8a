"""The worker process: registers the plug-ins the server uses, lowers its own OS priority, builds one backend
from its registered name and the settings (loading its model once), then answers calls (up to `concurrency` at
once, in threads) until the pipe closes. It logs to data_dir/logs/worker-KIND.log.

Messages: the worker first sends ("ready", facts) or ("failed", message, hint); then for each call
(id, method, args, kwargs) it sends (id, True, result) or (id, False, error), where error is (class name, message,
hint)."""
from __future__ import annotations

import importlib
import inspect
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.logs import configure_logging

SIMPLE = (str, int, float, bool, type(None))
log = logging.getLogger(__name__)


class LazyEmbedder:
    """The embedder a judge receives in a judge worker: built only if the judge uses it (the field-guide judge
    never does, a CLIP judge does), so a judge worker holds no second copy of the encoder without need."""

    def __init__(self, settings):
        self._settings, self._built = settings, None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._built is None:
            from core.backends.registry import create_embedder

            self._built = create_embedder(self._settings)
        return getattr(self._built, name)


def build(kind: str, settings) -> Any:
    """Backend `kind` ("embedder", "judge", "generator", "captioner") as the settings name it."""
    from core.backends import registry

    if kind == "embedder":
        return registry.create_embedder(settings)
    if kind == "judge":
        reads = registry.reads_embedder(settings.judge)
        return registry.create_judge(settings, LazyEmbedder(settings) if reads else None)
    if kind == "generator":
        return registry.create_generator(settings)
    if kind == "captioner":
        return registry.create_captioner(settings)
    raise ValueError(f"no worker for backend kind {kind!r}")


def facts(backend: Any) -> dict[str, Any]:
    """What the server's stand-in for the backend shows: its plain attributes (model_id, is_standin, dim ...)
    and the names of its public methods."""
    attrs: dict[str, Any] = {}
    methods: list[str] = []
    for name in dir(backend):
        if name.startswith("_"):
            continue
        try:
            value = getattr(backend, name)
        except Exception:  # a property that fails is simply not shown
            continue
        if inspect.ismethod(value) or inspect.isfunction(value) or inspect.isbuiltin(value):
            methods.append(name)
        elif isinstance(value, SIMPLE):
            attrs[name] = value
    return {"attrs": attrs, "methods": methods, "pid": os.getpid()}


def _error(exc: BaseException) -> tuple[str, str, str]:
    """An exception as (class name, message, hint): the server rebuilds EcoLens's own errors by name."""
    return type(exc).__name__, getattr(exc, "message", None) or str(exc) or type(exc).__name__, \
        getattr(exc, "hint", "") or ""


def lower_priority(nice: int) -> str:
    """Lower this process's OS priority by `nice` steps. A server that runs at the lowest nice already (19: a
    benchmark under `nice -n 19`) leaves no step below it; then the worker takes Linux's idle scheduling class,
    which still yields the CPU to the server. Returns what was done, for the log."""
    if not nice:
        return "same priority as the server"
    before = os.nice(0)
    after = os.nice(nice)
    if after > before:
        return f"nice {after}"
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            return f"nice {after}, idle scheduling class"
        except OSError as exc:
            log.warning("the worker could not take the idle scheduling class: %s", exc)
    return f"nice {after} (no lower priority available)"


def main(kind: str, settings, plugins: tuple[str, ...], conn, nice: int, concurrency: int = 1) -> None:
    """The worker's life: see the module's docstring. Up to `concurrency` calls run at once, in threads (a
    judge that batches concurrent calls sees them together). Ends when the server closes the pipe or sends
    None."""
    try:  # its own rotating file beside the server's (data_dir/logs/worker-KIND.log), warnings on stderr
        configure_logging(settings.path(), settings.log_level, console=True, name=f"worker-{kind}")
    except Exception:  # the folder cannot be written: stderr only
        logging.basicConfig(level=settings.log_level, stream=sys.stderr,
                            format=f"%(asctime)s %(levelname)s [worker {kind}] %(name)s: %(message)s")
    priority = lower_priority(nice)
    try:
        for module in plugins:
            importlib.import_module(module).register()
        backend = build(kind, settings)
    except BaseException as exc:  # told to the server, which reports it like a load in its own process
        log.exception("the %s worker could not load its backend", kind)
        conn.send(("failed", getattr(exc, "message", None) or str(exc) or type(exc).__name__,
                   getattr(exc, "hint", "")))
        return
    log.info("loaded %s at %s", getattr(backend, "model_id", kind), priority)
    conn.send(("ready", facts(backend)))
    sending = threading.Lock()

    def answer(call_id: int, method: str, args: tuple, kwargs: dict) -> None:
        try:
            reply = (call_id, True, getattr(backend, method)(*args, **kwargs))
        except Exception as exc:
            reply = (call_id, False, _error(exc))
        with sending:
            try:
                conn.send(reply)
            except (EOFError, OSError):
                return
            except Exception as exc:  # a result that does not pickle
                conn.send((call_id, False, (type(exc).__name__, f"its answer could not be sent back: {exc}", "")))

    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix=f"worker-{kind}") as calls:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):  # the server has gone
                break
            if message is None:
                break
            calls.submit(answer, *message)
