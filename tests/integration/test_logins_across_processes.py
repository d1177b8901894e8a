"""Logins under `python app.py serve --processes 2` with a users file: a person who logs in through one web process
is logged in on the other (the same cookie, read from the database), keeps their login and their sessions when
their web process is killed with SIGKILL and started again by the supervisor, and a logout through one process
ends the login on both. Another person still cannot open their session."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest

from core.people.users import add_user
from tests.integration.test_serve_processes import FORM, _alive, _descendants
from tests.live_server import ROOT, app_env, cli, db_rows, free_port
from tests.photos import colour_image

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (apt-get install nginx)")
QUERY = "a heron"
PEOPLE = {"ana": "annotator", "ben": "annotator"}


def request(url: str, cookie: str = "", data: bytes | None = None, headers: dict | None = None):
    """(status, headers, body) of one request through the proxy; an HTTP error status is returned, not raised."""
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


class Site:
    def __init__(self, url: str, proc: subprocess.Popen, data: Path):
        self.url, self.proc, self.data = url, proc, data
        self.routes: dict[str, str] = {}  # process address -> a route cookie value that nginx sends there

    def process_of(self, route: str) -> str:
        return request(self.url, cookie=f"ecolens_route={route}")[1]["X-EcoLens-Process"]

    def login(self, name: str, route: str) -> str:
        """The Cookie header of `name` after logging in through `route`'s process."""
        form = urllib.parse.urlencode({"username": name, "password": f"{name}-pw"}).encode()
        status, headers, body = request(self.url + "login", f"ecolens_route={route}", form,
                                        {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 200, body
        tokens = [c.split(";", 1)[0] for c in headers.get_all("set-cookie") if c.startswith("access-token")]
        assert len(tokens) == 2
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


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("logins")
    photos = root / "photos"
    photos.mkdir()
    for i in range(6):
        colour_image(500 + i, 96).save(photos / f"heron-{i}.jpg", quality=90)
    data = root / "data"
    done = cli(data, "ingest", str(photos))
    assert done.returncode == 0, done.stderr
    users = root / "users.txt"
    for name, role in PEOPLE.items():
        add_user(users, name, f"{name}-pw", role)
    port = free_port()
    log = open(root / "serve.log", "w")
    proc = subprocess.Popen([sys.executable, "app.py", "serve", "--processes", "2", "--port", str(port)], cwd=ROOT,
                            env=app_env(data, ECOLENS_USERS_FILE=str(users), NO_PROXY="127.0.0.1",
                                        no_proxy="127.0.0.1"),
                            stdout=log, stderr=subprocess.STDOUT)
    found = Site(f"http://127.0.0.1:{port}/", proc, data)
    try:
        def up():
            assert proc.poll() is None, (root / "serve.log").read_text()[-3000:]
            return request(found.url)[0] == 200
        wait_for("serve's start", up)
        for _ in range(64):  # a route cookie for each process, found by asking the proxy where each goes
            candidate = uuid.uuid4().hex
            found.routes.setdefault(found.process_of(candidate), candidate)
            if len(found.routes) == 2:
                break
        assert len(found.routes) == 2
        yield found
    finally:
        if proc.poll() is None:
            proc.kill()
            for pid in _descendants(proc.pid):
                os.kill(pid, signal.SIGKILL)
        log.close()


def web_pid(site: Site, address: str) -> int | None:
    """The pid of the live web process listening on `address` (127.0.0.1:PORT), from /proc."""
    port = address.rsplit(":", 1)[1]
    for pid in _descendants(site.proc.pid):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ours = any(arg.endswith(b"app.py") for arg in args) and b"--port" in args
        if ours and args[args.index(b"--port") + 1] == port.encode() and _alive(pid):
            return pid
    return None


def test_a_login_holds_on_every_process_and_across_a_killed_process(site):
    (a, route_a), (b, route_b) = sorted(site.routes.items())
    ana = site.login("ana", route_a)
    ben = site.login("ben", route_b)
    assert site.user(ana, route_a) == ("ana", a)
    assert site.user(ana, route_b) == ("ana", b)  # the cookie made by process a, honoured by process b
    assert site.user(ben, route_a) == ("ben", a)
    assert site.user("", route_b) == (None, b)
    assert len(db_rows(site.data, "SELECT token_hash FROM logins")) == 2
    assert not any(ana.split("=", 1)[1] in str(row) for row in db_rows(site.data, "SELECT * FROM logins"))

    def searched():
        kind, out = site.call("search", [QUERY, *FORM], ana, route_a)
        return out[8]["session_id"] if kind == "complete" and isinstance(out[8], dict) else None
    session = wait_for("ana's first search (the collection being prepared)", searched)
    assert site.call("history_open", [session], ana, route_b)[0] == "complete"  # hers on the other process
    refused = site.call("history_open", [session], ben, route_b)
    assert refused[0] == "error" and "no session" in str(refused[1]).lower(), refused

    # process a killed: the supervisor starts it again, and ana is still logged in there, with her session
    old = web_pid(site, a)
    assert old is not None
    os.kill(old, signal.SIGKILL)
    wait_for("process a's restart", lambda: (web_pid(site, a) or old) != old)
    assert wait_for("ana's login answered by the new process a", lambda: site.user(ana, route_a) == ("ana", a))
    assert site.call("history_open", [session], ana, route_a)[0] == "complete"
    assert site.call("history_open", [session], ben, route_a)[0] == "error"

    # a logout through process b ends ana's login on process a too; ben stays logged in
    status, _, _ = request(site.url + "logout", f"ecolens_route={route_b}; {ana}")
    assert status in (200, 302)
    assert site.user(ana, route_a) == (None, a)
    assert site.user(ben, route_a) == ("ben", a)
    assert [r[0] for r in db_rows(site.data, "SELECT name FROM logins")] == ["ben"]
