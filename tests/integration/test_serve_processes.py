"""`python app.py serve --processes 2`: nginx in front of two web processes and one shared worker pool. A search
works through the proxy by HTTP and by gradio_client, an upload of 2 MB passes (max_upload_mb 3), every
request of one session reaches one process (nginx's access log names the process of each request), labels
written through both processes are all stored, and stopping the parent leaves no process behind. Without
nginx on PATH, the command says how to install it."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.live_server import ROOT, app_env, db_rows
from tests.served_site import alive as _alive
from tests.served_site import descendants as _descendants
from tests.served_site import request as _get
from tests.served_site import served as serve_site

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (apt-get install nginx)")
FORM = ["Fast", 8, 1, 10, "full", False, "", "", "", [], "", "", None]


def _client(url: str, route: str):
    from gradio_client import Client

    return Client(url, verbose=False, httpx_kwargs={"cookies": {"ecolens_route": route}})


def _search(client, query: str, deadline: float):
    """The search's result dict, asking again while the collection is still being prepared."""
    while True:
        try:
            out = client.predict(query, *FORM, api_name="/search")
            if isinstance(out[8], dict) and out[8].get("results"):
                return out[8]
        except Exception:  # the collection is not ready yet (NotReady): the page would say so
            if time.monotonic() > deadline:
                raise
        assert time.monotonic() < deadline, "no search answered through the proxy in time"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    data = tmp_path_factory.mktemp("serve") / "data"
    with serve_site(data, 2, ECOLENS_MAX_UPLOAD_MB="3") as site:
        yield site.proc, site.url, data


def _process_of(url: str, route: str) -> str:
    return _get(url, cookie=f"ecolens_route={route}")[1]["X-EcoLens-Process"]


def test_sessions_keep_to_one_process_search_label_and_upload_through_nginx(served):
    proc, url, data = served
    conf = (data / "serve" / "nginx.conf").read_text()
    ports = re.findall(r"server 127\.0\.0\.1:(\d+)", conf)
    assert len(ports) == 2 and "proxy_buffering off" in conf and "client_max_body_size 4m" in conf
    # a browser: its first page gets the route cookie, and every later request goes to one process
    status, headers, _ = _get(url)
    cookie = next(v for k, v in headers.items() if k.lower() == "set-cookie" and v.startswith("ecolens_route="))
    route = cookie.split(";", 1)[0].split("=", 1)[1]
    assert {_process_of(url, route) for _ in range(6)} == {_process_of(url, route)}
    # one session for each process (routes chosen by asking the proxy where each goes)
    by_process: dict[str, str] = {}
    for _ in range(64):
        candidate = uuid.uuid4().hex
        by_process.setdefault(_process_of(url, candidate), candidate)
        if len(by_process) == 2:
            break
    assert sorted(p.rsplit(":", 1)[1] for p in by_process) == sorted(ports)
    deadline = time.monotonic() + 240
    labelled = []
    for n, route in enumerate(by_process.values()):
        client = _client(url, route)
        result = _search(client, f"a frog calling {n}", deadline)
        for hit in result["results"][:3]:
            labelled.append(client.predict(f"a frog calling {n}", int(hit["id"]), 1, f"serve-test-{n}", 1.0,
                                           api_name="/label"))
    assert len(labelled) == 6
    stored = db_rows(data, f"SELECT id FROM labels WHERE id IN ({','.join('?' * len(labelled))})", *labelled)
    assert sorted(r[0] for r in stored) == sorted(labelled)
    # nginx's access log: every request that carried a route went to that route's one process
    log = (data / "serve" / "access.log").read_text()
    seen: dict[str, set[str]] = {}
    for r, p in re.findall(r"route=(\S+) process=(\S+)", log):
        if r != "-":
            seen.setdefault(r, set()).add(p)
    for route in by_process.values():
        assert len(seen[route]) == 1, seen[route]
    assert {next(iter(seen[r])) for r in by_process.values()} == set(by_process)
    # an upload of 2 MB passes (max_upload_mb 3; nginx's own default would refuse it with 413)
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"big.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + os.urandom(2 << 20) + \
        f"\r\n--{boundary}--\r\n".encode()
    status, _, reply = _get(url + "gradio_api/upload", data=body,
                            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 200 and b"big.bin" in reply


def test_stopping_the_parent_stops_nginx_every_web_process_and_the_pool(served):
    proc, url, data = served
    children = _descendants(proc.pid)
    assert any("nginx" in Path(f"/proc/{c}/cmdline").read_bytes().decode(errors="replace") for c in children
               if _alive(c))
    ports = [int(p) for p in re.findall(r"server 127\.0\.0\.1:(\d+)", (data / "serve" / "nginx.conf").read_text())]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0
    deadline = time.monotonic() + 30
    while any(_alive(c) for c in children):
        assert time.monotonic() < deadline, [c for c in children if _alive(c)]
        time.sleep(0.1)
    for port in ports + [int(url.rsplit(":", 1)[1].strip("/"))]:
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, port


def test_without_nginx_the_command_says_how_to_install_it(tmp_path):
    env = app_env(tmp_path / "data", PATH=str(Path(sys.executable).parent))
    proc = subprocess.run([sys.executable, "app.py", "serve", "--processes", "2"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "no nginx on PATH" in proc.stderr and "apt-get install nginx" in proc.stderr
