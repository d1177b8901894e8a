"""`python app.py serve --processes 2` on a data directory, for integration and browser tests: started and waited
for, a route cookie (`ecolens_route`) found for each web process by asking nginx where it sends it, requests
through the proxy to a chosen process, and the pid of the web process behind an address (to kill it)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tests.live_server import ROOT, app_env, free_port


def request(url: str, cookie: str = "", data: bytes | None = None, headers: dict | None = None):
    """(status, headers, body) of one request; an HTTP error status is returned, not raised."""
    req = urllib.request.Request(url, data=data, headers={**({"Cookie": cookie} if cookie else {}), **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def wait_for(what: str, check, limit_s: float = 240.0):
    """Ask `check()` again until it gives something true (its value), at most `limit_s` seconds."""
    deadline = time.monotonic() + limit_s
    while True:
        try:
            found = check()
        except OSError:
            found = None
        if found:
            return found
        assert time.monotonic() < deadline, f"{what} did not happen within {limit_s:.0f} s"
        time.sleep(0.2)


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = {c for c, parent in parents.items() if parent == p}
        found |= kids
        todo += list(kids)
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Site:
    """The serve command behind `url` (ends with a slash); `routes`: process address -> a route cookie value."""

    def __init__(self, url: str, proc: subprocess.Popen, data_dir: Path):
        self.url, self.proc, self.data_dir = url, proc, data_dir
        self.routes: dict[str, str] = {}

    def process_of(self, route: str) -> str:
        return request(self.url, cookie=f"ecolens_route={route}")[1]["X-EcoLens-Process"]

    def find_routes(self, processes: int) -> None:
        for _ in range(64):
            candidate = uuid.uuid4().hex
            self.routes.setdefault(self.process_of(candidate), candidate)
            if len(self.routes) == processes:
                return
        raise AssertionError(f"no route found for every process: {self.routes}")

    def login(self, name: str, password: str, route: str) -> str:
        """The Cookie header (login cookies only) of `name` after logging in through `route`'s process."""
        form = urllib.parse.urlencode({"username": name, "password": password}).encode()
        status, headers, body = request(self.url + "login", f"ecolens_route={route}", form,
                                        {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 200, body
        tokens = [c.split(";", 1)[0] for c in headers.get_all("set-cookie") if c.startswith("access-token")]
        assert len(tokens) == 2, tokens
        return "; ".join(tokens)

    def user(self, cookie: str, route: str) -> tuple[str | None, str]:
        """(who the process behind `route` says is logged in, that process's address)."""
        status, headers, body = request(self.url + "gradio_api/user", f"ecolens_route={route}; {cookie}")
        assert status == 200, body
        return json.loads(body), headers["X-EcoLens-Process"]

    def call(self, api: str, args: list, cookie: str, route: str) -> tuple[str, object]:
        """('complete', data) or ('error', message) of one API call through `route`'s process."""
        cookies = f"ecolens_route={route}; {cookie}"
        status, _, body = request(self.url + f"gradio_api/call/{api}", cookies, json.dumps({"data": args}).encode(),
                                  {"Content-Type": "application/json"})
        assert status == 200, body
        _, _, stream = request(self.url + f"gradio_api/call/{api}/{json.loads(body)['event_id']}", cookies)
        text = stream.decode("utf-8", "replace")
        kind = "complete" if "event: complete" in text else "error"
        data = text.split(f"event: {kind}", 1)[-1].split("data:", 1)[-1].strip()
        return kind, json.loads(data) if data else None

    def web_pid(self, address: str) -> int | None:
        """The pid of the live web process listening on `address` (127.0.0.1:PORT), from /proc."""
        port = address.rsplit(":", 1)[1].encode()
        for pid in descendants(self.proc.pid):
            try:
                args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            ours = any(arg.endswith(b"app.py") for arg in args) and b"--port" in args
            if ours and args[args.index(b"--port") + 1] == port and alive(pid):
                return pid
        return None


@contextmanager
def served(data_dir: Path, processes: int = 2, **env: str) -> Iterator[Site]:
    """`serve --processes N` on `data_dir` with ECOLENS_* `env`, until the block ends (then killed, children too)."""
    port = free_port()
    log_path = data_dir.parent / f"serve-{port}.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "app.py", "serve", "--processes", str(processes), "--port", str(port)],
                            cwd=ROOT, env=app_env(data_dir, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1", **env),
                            stdout=log, stderr=subprocess.STDOUT)
    site = Site(f"http://127.0.0.1:{port}/", proc, data_dir)
    try:
        def up():
            assert proc.poll() is None, log_path.read_text()[-3000:]
            return request(site.url)[0] == 200
        wait_for("serve's start", up)
        site.find_routes(processes)
        yield site
    finally:
        if proc.poll() is None:
            kids = descendants(proc.pid)
            proc.kill()
            for pid in kids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        log.close()
