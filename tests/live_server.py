"""The real web app (python app.py) on a free port, for integration and hostile tests: a fresh data directory,
the offline stand-in backends, and helpers to run CLI commands against the same data directory and to read
the database the way an outside observer would (sqlite3, not the app's own code)."""
from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STANDIN_ENV = {"ECOLENS_EMBEDDER": "hash", "ECOLENS_GENERATOR": "standin", "ECOLENS_JUDGE": "clip",
               "ECOLENS_LLM": "rule", "ECOLENS_CAPTIONER": "metadata"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def app_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of an EcoLens process on `data_dir`: no inherited ECOLENS_* settings, stand-ins."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_") and k not in ("SPACE_ID",)}
    env.update({**STANDIN_ENV, "ECOLENS_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", **extra})
    return env


def cli(data_dir: Path, *args: str | bytes, env: dict[str, str] | None = None, timeout: float = 180,
        stdin: bytes | None = None, preexec_fn=None) -> subprocess.CompletedProcess:
    """`python app.py ARGS` on `data_dir` (an argument may be bytes that are not UTF-8); stdout and stderr as
    text (invalid bytes replaced). `preexec_fn` runs in the child first (resource limits)."""
    proc = subprocess.run([sys.executable, "app.py", *args], cwd=ROOT, env=env or app_env(data_dir),
                          input=stdin, capture_output=True, timeout=timeout, preexec_fn=preexec_fn)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


class LiveServer:
    """`python app.py --port N` until stop(); `url` ends with a slash."""

    def __init__(self, data_dir: Path, env: dict[str, str] | None = None, start_timeout: float = 120,
                 preexec_fn=None):
        """`preexec_fn` runs in the server's process first (resource limits: a disk that fills up)."""
        self.data_dir, self.port = Path(data_dir), free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log_path = self.data_dir.parent / f"server-{self.port}.log"
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([sys.executable, "app.py", "--port", str(self.port)], cwd=ROOT,
                                     env=env or app_env(self.data_dir), stdout=self._log, stderr=subprocess.STDOUT,
                                     preexec_fn=preexec_fn)
        deadline = time.time() + start_timeout
        while not self.answers():
            if self.proc.poll() is not None:
                raise RuntimeError("the server exited: " + self.log()[-3000:])
            if time.time() > deadline:
                self.stop()
                raise RuntimeError("the server did not start in time: " + self.log()[-3000:])
            time.sleep(0.5)

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.url, timeout=2) as resp:
                return resp.status == 200
        except urllib.error.HTTPError as exc:  # a login page still means the server is up
            return exc.code in (401, 403)
        except OSError:
            return False

    def get(self, path: str, method: str = "GET", data: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        """(status, body) of one request; never raises for an HTTP error status."""
        status, body, _ = self.request(path, method, data, headers)
        return status, body

    def request(self, path: str, method: str = "GET", data: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, list[str]]]:
        """(status, body, headers as name -> values) of one request."""
        req = urllib.request.Request(self.url.rstrip("/") + path, method=method, data=data, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, resp.read(), _headers(resp.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), _headers(exc.headers)

    def login(self, password: str, user: str = "ecolens") -> tuple[int, str]:
        """(status, Cookie header to send afterwards) of one login attempt."""
        form = urllib.parse.urlencode({"username": user, "password": password}).encode()
        status, _, headers = self.request("/login", "POST", form,
                                          {"Content-Type": "application/x-www-form-urlencoded"})
        return status, "; ".join(c.split(";")[0] for c in headers.get("set-cookie", []))

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._log.close()


def _headers(message) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in message.items():
        out.setdefault(name.lower(), []).append(value)
    return out


def db_rows(data_dir: Path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(Path(data_dir) / "ecolens.sqlite", timeout=60) as conn:
        return conn.execute(sql, params).fetchall()


def integrity_ok(data_dir: Path) -> bool:
    return db_rows(data_dir, "PRAGMA integrity_check") == [("ok",)]


def counts(data_dir: Path) -> dict[str, int]:
    """Rows per table (Alembic's own table left out, and served_files: the record of which upload went to whom
    grows with every upload, even one the app then refuses to use)."""
    tables = [r[0] for r in db_rows(data_dir, "SELECT name FROM sqlite_master WHERE type='table' "
                                              "AND name NOT LIKE 'sqlite_%' "
                                              "AND name NOT IN ('alembic_version', 'served_files')")]
    return {t: db_rows(data_dir, f'SELECT COUNT(*) FROM "{t}"')[0][0] for t in tables}
