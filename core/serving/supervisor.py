"""`python app.py serve --processes N` (N >= 2): the shared worker pool (core.workers.shared), N web processes
on free ports of 127.0.0.1, and nginx in front of them on the public address, all children of this process.
It waits until every web process listens before nginx starts; a web process that stops is reported and
started again; nginx stopping ends the whole; SIGINT / SIGTERM stop nginx and every child."""
from __future__ import annotations

import logging
import multiprocessing
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.contracts.errors import BackendError
from core.serving import nginx
from core.workers import shared

log = logging.getLogger(__name__)
RUN = "serve"  # data_dir/serve: nginx's configuration, pid, log and temporary files; the pool's socket


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` ports that were free on `host` a moment ago (the OS picks them)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def listening(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class Supervisor:
    """The children of one serve command. `command`: how to start one web process (its --port and --host are
    added); `settings`: the loaded settings (data directory, upload limit, workers)."""

    settings: object
    command: list[str]
    processes: int
    host: str
    port: int
    plugins: tuple[str, ...] = ()
    start_limit_s: float = 300.0
    nginx_path: str = ""
    stop_event: threading.Event = field(default_factory=threading.Event)
    web: list = field(default_factory=list)  # [port, Popen]
    proxy: subprocess.Popen | None = None
    pool: object | None = None
    env: dict = field(default_factory=dict)

    def run_dir(self) -> Path:
        return Path(self.settings.path(RUN))

    # ---- start --------------------------------------------------------------------------------------
    def start(self) -> None:
        self.nginx_path = self.nginx_path or nginx.find_nginx()  # before anything starts: the message first
        run = self.run_dir()
        run.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ)
        if self.settings.workers != "off":
            self._start_pool(run)
        ports = free_ports(self.processes)
        for i, port in enumerate(ports):
            self.web.append([port, self._start_web(i, port)])
        self._wait_listening()
        conf = nginx.write_config(run, self.host, self.port, ports, self.settings.max_upload_mb)
        # -e: its log from the first moment (before reading the configuration) in data_dir/serve, not /var/log
        self.proxy = subprocess.Popen([self.nginx_path, "-p", str(run), "-e", str(run / "error.log"), "-c", str(conf)],
                                      stdin=subprocess.DEVNULL)
        end = time.monotonic() + 30
        while not listening(self.port, "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host.strip("[]")):
            if self.proxy.poll() is not None:
                raise BackendError(f"nginx stopped at its start (exit code {self.proxy.returncode})",
                                   f"see {run / 'error.log'}; is port {self.port} taken?")
            if time.monotonic() > end:
                raise BackendError(f"nginx did not listen on port {self.port} within 30 s", f"see {run / 'error.log'}")
            time.sleep(0.1)
        log.info("nginx (pid %d) serves %d web processes (ports %s) on %s", self.proxy.pid, self.processes,
                 ", ".join(map(str, ports)), nginx.listen_address(self.host, self.port))

    def _start_pool(self, run: Path) -> None:
        address = str(run / "pool.sock")
        if len(address) > 100:  # a Unix socket's path is at most 107 bytes
            address = os.path.join(tempfile.mkdtemp(prefix="ecolens-pool-"), "pool.sock")
        key = secrets.token_bytes(32)
        ctx = multiprocessing.get_context("spawn")
        ready = ctx.Event()
        self.pool = ctx.Process(target=shared.serve_pool, args=(self.settings, self.plugins, address, key, ready),
                                name="ecolens-worker-pool")
        self.pool.start()
        if not ready.wait(60):
            raise BackendError("the shared worker pool did not start within 60 s", "see data_dir/logs/worker-pool.log")
        self.env.update({shared.ADDRESS_ENV: address, shared.KEY_ENV: key.hex()})

    def _start_web(self, number: int, port: int) -> subprocess.Popen:
        env = dict(self.env, _ECOLENS_PROCESS=str(number))
        return subprocess.Popen(self.command + ["--port", str(port), "--host", "127.0.0.1"], env=env,
                                stdin=subprocess.DEVNULL)

    def _wait_listening(self) -> None:
        end = time.monotonic() + self.start_limit_s
        waiting = list(self.web)
        while waiting:
            for entry in list(waiting):
                port, proc = entry
                if proc.poll() is not None:
                    raise BackendError(f"a web process (port {port}) stopped at its start (exit code "
                                       f"{proc.returncode})", "see its messages above and data_dir/logs")
                if listening(port):
                    waiting.remove(entry)
            if waiting and (time.monotonic() > end or self.stop_event.wait(0.2)):
                if self.stop_event.is_set():
                    raise KeyboardInterrupt
                raise BackendError(f"{len(waiting)} web processes did not listen within {self.start_limit_s:g} s",
                                   "see data_dir/logs")

    # ---- run and stop -------------------------------------------------------------------------------
    def supervise(self) -> int:
        """Watch the children until a stop signal (0) or nginx ending (1)."""
        while not self.stop_event.wait(0.5):
            if self.proxy is not None and self.proxy.poll() is not None:
                log.error("nginx stopped (exit code %s); stopping EcoLens (see %s)", self.proxy.returncode,
                          self.run_dir() / "error.log")
                return 1
            if self.pool is not None and not self.pool.is_alive():
                log.error("the shared worker pool stopped (exit code %s); stopping EcoLens", self.pool.exitcode)
                return 1
            for i, entry in enumerate(self.web):
                port, proc = entry
                if proc.poll() is not None:
                    log.error("web process %d (pid %d, port %d) stopped with exit code %s; starting it again", i,
                              proc.pid, port, proc.returncode)
                    entry[1] = self._start_web(i, port)
        return 0

    def stop(self) -> None:
        """Stop nginx, the web processes and the pool, and wait for them (killing what does not end in 10 s)."""
        children = ([self.proxy] if self.proxy is not None else []) + [proc for _, proc in self.web]
        for proc in children:
            if proc.poll() is None:
                proc.terminate()  # nginx: fast shutdown; a web process: Python's default, it ends
        for proc in children:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self.pool is not None:
            if self.pool.is_alive():
                self.pool.terminate()  # its handler closes the workers
            self.pool.join(15)
            if self.pool.is_alive():
                self.pool.kill()
                self.pool.join(5)
        log.info("EcoLens stopped: nginx, %d web processes and the worker pool", len(self.web))

    def on_signals(self) -> None:
        """SIGINT and SIGTERM set stop_event (call from the main thread)."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop_event.set())
