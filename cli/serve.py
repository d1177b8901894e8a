"""`python app.py serve [--processes N] [--port P] [--host H]`: the web app. With one process (the default) it
is `python app.py`; with N >= 2, N web processes on internal ports behind nginx on the public address, sharing
one worker pool (core.serving.supervisor; docs/deployment.md). While the page prepares the photo collection on
its first start, the terminal shows the preparation's progress too (prepare_for_page)."""
from __future__ import annotations

import argparse
import fcntl
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from cli.common import PhaseBars
from core.contracts.errors import InputError
from core.serving.supervisor import Supervisor

MAX_PROCESSES = 32


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="serve the web app; --processes N: N web processes behind nginx")
    p.add_argument("--processes", type=int, default=1, metavar="N",
                   help=f"web processes (1-{MAX_PROCESSES}; 2 or more run behind nginx, which must be installed)")
    # SUPPRESS: the top-level --port/--host still count when these are not given
    p.add_argument("--port", type=int, default=argparse.SUPPRESS, help="port of the web app (nginx's, with N >= 2)")
    p.add_argument("--host", default=argparse.SUPPRESS, help="address of the web app (nginx's, with N >= 2)")


def check_processes(n: int) -> int:
    if not 1 <= n <= MAX_PROCESSES:
        raise InputError(f"--processes takes 1 to {MAX_PROCESSES}, not {n}",
                         "give the number of web processes, e.g. --processes 2 (about one per CPU core)")
    return n


def run_many(settings, command: list[str], plugins: tuple[str, ...], processes: int) -> int:
    """Serve with `processes` web processes behind nginx until interrupted; `command` starts one web process."""
    host = settings.host or ("0.0.0.0" if os.environ.get("SPACE_ID") else "127.0.0.1")  # as ui.server chooses
    boss = Supervisor(settings, command, processes, host, settings.port, plugins,
                      start_limit_s=max(300.0, float(settings.worker_start_s)))
    boss.on_signals()
    try:
        boss.start()
        print(f"EcoLens: {processes} web processes behind nginx on http://{host}:{settings.port} "
              "(Ctrl-C stops them all)", file=sys.stderr, flush=True)
        return boss.supervise()
    except KeyboardInterrupt:
        return 130
    finally:
        boss.stop()


def prepare_for_page(services, progress) -> list[str]:
    """The first start's preparation of the photo collection (run in the background by the web app): its
    progress goes to the page and, as one bar per phase, to the terminal, which then says that the page can
    search."""
    bars = PhaseBars()

    def both(what: str, done: int, total: int) -> None:
        progress(what, done, total)
        bars(what, done, total)
    if services.catalog.count() == 0:
        print("EcoLens: preparing the photo collection (first start); the page is open and can search once "
              "this is done.", file=sys.stderr, flush=True)
    try:
        with _one_at_a_time(services.settings.path("prepare.lock")):  # several web processes (serve): one builds
            notices = services.ensure_corpus(both)
    finally:
        bars.close()
    if bars.used:
        print(f"EcoLens: the photo collection is ready ({services.catalog.count()} photos): the page can search "
              "now.", file=sys.stderr, flush=True)
    return notices


@contextmanager
def _one_at_a_time(path: Path):
    """An exclusive lock on the file `path` (held until the block ends), across processes."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
