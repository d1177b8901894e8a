"""`python app.py serve [--processes N] [--port P] [--host H]`: the web app. With one process (the default) it
is `python app.py`; with N >= 2, N web processes on internal ports behind nginx on the public address, sharing
one worker pool (core.serving.supervisor; docs/deployment.md)."""
from __future__ import annotations

import argparse
import os
import sys

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
