"""Where the Ray ingest runs, and what it says when Ray fails.

`ray_session`: a private Ray instance on this machine for the length of one ingest (loopback address, no
dashboard, no usage report, one logical CPU more than the actors reserve so that Ray Data's own tasks are
never starved), or, with the `ray_address` setting, a connection to an existing Ray cluster (left running
afterwards). Either way the number of actors is fitted to the CPUs Ray has.

`check_workers`: before any photo is handed to Ray, one task on a Ray worker registers the same plug-ins as
this process and resolves the embedder by name, within `ray_start_timeout_s`: a worker that cannot start,
cannot import EcoLens or does not know the embedder is reported at once, never as a silent wait.

`ray_failure`: any exception out of Ray as EcoLens's BackendError (what failed, how to fix it), never Ray's
raw traceback. `bounded`: the first batch of embeddings must come within `ray_start_timeout_s`."""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import queue
import re
import threading
from pathlib import Path
from typing import Any, Iterator

from core.contracts.errors import BackendError, EcoLensError

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]  # the repository root: the workers import EcoLens from here
INSTALL = "pip install 'ray[data]'"
LOCAL_FIX = ("run the same ingest with --engine local to tell the photos from the Ray workers; with ray_address "
             "set, check that the cluster's workers run this EcoLens and Python")
_ERROR_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$")


def _quiet() -> None:
    for name in ("ray", "ray.data", "ray.train", "ray.tune"):  # why: library code leaves the terminal alone
        logging.getLogger(name).setLevel(logging.CRITICAL)


@contextlib.contextmanager
def ray_session(settings: Any, workers: int, gpus: int) -> Iterator[tuple[Any, int]]:
    """(the ray module, the number of actors the cluster's CPUs allow) for the length of one ingest."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise BackendError("ray is not installed (needed by ingest_engine='ray')",
                           f"{INSTALL}, or use the local engine (--engine local)") from None
    if ray.is_initialized():  # this process already runs one: reused, and left running
        yield ray, _fitted(ray, workers)
        return
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # why: no report to the outside world
    # why: Ray starts one idle Python worker per CPU in advance; on a small machine they only compete with the
    # actors for the cores while Ray starts (the actors and Ray Data's tasks start their own workers)
    os.environ["RAY_enable_worker_prestart"] = "0"
    os.environ["RAY_prestart_worker_first_driver"] = "0"
    runtime_env = {"env_vars": {"PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}}
    address = str(settings.ray_address or "").strip()
    try:
        if address:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR, runtime_env=runtime_env)
        else:
            tag = hashlib.sha256(str(settings.path().resolve()).encode()).hexdigest()[:8]
            cores = os.cpu_count() or 1
            ray.init(address="local", num_cpus=max(cores, workers + 1), num_gpus=gpus, include_dashboard=False,
                     _node_ip_address="127.0.0.1", log_to_driver=False, logging_level=logging.ERROR,
                     _temp_dir=f"/tmp/ecolens-ray-{tag}", object_store_memory=512 * 1024 * 1024,
                     runtime_env=runtime_env)
    except Exception as exc:
        where = f"the Ray cluster at {address}" if address else "a Ray instance on this machine"
        raise BackendError(f"could not start or join {where} ({_cause_line(exc)})",
                           "check ray_address (host:port of a running `ray start --head`, or empty for a private "
                           "one) or use --engine local") from None
    _quiet()
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.enable_operator_progress_bars = False
    ctx.print_on_execution_start = False
    try:
        yield ray, _fitted(ray, workers)
    finally:
        ray.shutdown()  # a joined cluster only loses this driver's connection


def _fitted(ray: Any, workers: int) -> int:
    """At most one actor per CPU the cluster has, one CPU left for Ray Data's own tasks (two actors reserving
    both CPUs of a 2-core machine deadlocked)."""
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
    except Exception:
        return workers
    if cpus < 1:  # each actor reserves a CPU: none would ever start, and the ingest would wait for its bound
        raise BackendError("the Ray cluster has no CPU for the ingest's actors (each needs one; it has "
                           f"{cpus})", "start its nodes with CPUs (`ray start ... --num-cpus N`), or use "
                           "--engine local")
    fitted = max(1, min(workers, cpus - 1))
    if fitted < workers:
        log.info("ray ingest: %d actors instead of %d (the cluster has %d CPUs)", fitted, workers, cpus)
    return fitted


def worker_check(plugins: tuple[str, ...], embedder: str) -> str:
    """Run on a Ray worker: register the plug-ins and resolve the embedder's name (no model is loaded)."""
    from core.backends.registry import table
    from core.backends.resolution import resolve
    from core.plugins.registry import load_modules

    load_modules(plugins)
    resolve(table("embedder"), "embedder", embedder)
    return "ok"


def check_workers(ray: Any, plugins: tuple[str, ...], settings: Any) -> None:
    """One task on a Ray worker, within ray_start_timeout_s: BackendError saying what is wrong otherwise."""
    timeout = float(settings.ray_start_timeout_s)
    ref = ray.remote(num_cpus=0, max_retries=0)(worker_check).remote(tuple(plugins), settings.embedder)
    try:
        ray.get(ref, timeout=timeout)
    except Exception as exc:
        if type(exc).__name__ == "GetTimeoutError":
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
            raise BackendError(f"no Ray worker started within {timeout:g} s (ray_start_timeout_s)",
                               "check that Ray's workers can start and import EcoLens (the same Python and "
                               "packages), raise ray_start_timeout_s, or use --engine local") from None
        raise ray_failure(exc) from None


def bounded(batches: Iterator[Any], first_s: float) -> Iterator[Any]:
    """The items of `batches` (read in a thread), BackendError when the first has not come within `first_s`
    seconds: actors that cannot start are reported, never waited on without a word."""
    box: queue.Queue = queue.Queue(maxsize=2)
    done = object()
    stop = threading.Event()

    def pump() -> None:
        try:
            for item in batches:
                while not stop.is_set():
                    try:
                        box.put(("item", item), timeout=0.5)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            box.put(("end", done))
        except BaseException as exc:  # handed to the consumer
            box.put(("error", exc))

    threading.Thread(target=pump, daemon=True, name="ray-batches").start()
    first = True
    try:
        while True:
            try:
                kind, value = box.get(timeout=first_s if first else None)
            except queue.Empty:
                raise BackendError(f"the Ray actors sent nothing within {first_s:g} s (ray_start_timeout_s): an "
                                   "actor could not start or load the embedder",
                                   "raise ray_start_timeout_s for a large model, check the workers' memory, or "
                                   "use --engine local") from None
            if kind == "end":
                return
            if kind == "error":
                raise ray_failure(value) from None
            first = False
            yield value
    finally:
        stop.set()


def ray_failure(exc: BaseException) -> EcoLensError:
    """An exception out of Ray as EcoLens's error: the EcoLens error inside it (with its own fix), else the
    last 'SomeError: message' line of Ray's text; never its traceback."""
    if isinstance(exc, EcoLensError):
        return exc
    seen, e = 0, exc
    while e is not None and seen < 8:
        if isinstance(e, EcoLensError):
            return BackendError(f"the Ray ingest failed in a worker: {e.message}", e.hint or LOCAL_FIX)
        e, seen = getattr(e, "cause", None) or e.__cause__, seen + 1
    return BackendError(f"the Ray ingest failed: {_cause_line(exc)}", LOCAL_FIX)


def _cause_line(exc: BaseException) -> str:
    lines = [m for m in (_ERROR_LINE.match(line.strip()) for line in str(exc).splitlines()) if m]
    text = f"{lines[-1].group(1).rsplit('.', 1)[-1]}: {lines[-1].group(2)}" if lines else (
        str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    return text if len(text) <= 300 else text[:297] + "..."
