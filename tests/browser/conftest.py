"""Browser tests: the real server (python app.py) on a free port with a fresh data dir, and Debian's Chromium
driven by Playwright with fresh profiles. The server answers at once and prepares the photo collection in the
background; pages wait for it unless a test asks to see that progress."""
from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = ROOT / "docs" / "screenshots"
START_TIMEOUT_S = 120  # the server answers before the synthetic world is built
READY_TIMEOUT_MS = 300_000  # building and indexing the synthetic world

playwright_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)", allow_module_level=True)


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server_command(port: int) -> list[str]:
    return [sys.executable, "app.py", "--port", str(port)]


def _backend_env() -> dict[str, str]:
    """Defaults when the field-guide encoder is trained; otherwise the offline stand-ins."""
    if (ROOT / "assets" / "fieldguide" / "encoder.pt").exists():
        return {}
    return {"ECOLENS_EMBEDDER": "hash", "ECOLENS_GENERATOR": "standin", "ECOLENS_JUDGE": "clip"}


class Server:
    def __init__(self, url: str, data_dir: Path):
        self.url, self.data_dir = url, data_dir

    def rows(self, sql: str, *params) -> list[tuple]:
        with sqlite3.connect(self.data_dir / "ecolens.sqlite", timeout=30) as conn:
            return conn.execute(sql, params).fetchall()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("ecolens-data")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_") and k != "SPACE_ID"}
    env.update(ECOLENS_DATA_DIR=str(data_dir), **_backend_env())
    log = open(data_dir / "server.log", "w")
    proc = subprocess.Popen(_server_command(port), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError("the server exited: " + (data_dir / "server.log").read_text()[-3000:])
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    break
        except OSError:
            pass
        if time.time() > deadline:
            proc.terminate()
            raise RuntimeError("the server did not start in time")
        time.sleep(0.5)
    yield Server(url, data_dir)
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="session")
def playwright():
    with playwright_api.sync_playwright() as p:
        yield p


def wait_until_ready(page) -> None:
    """Wait until the page no longer shows the preparation of the photo collection."""
    page.wait_for_function("() => { const el = document.querySelector('#prepare-status');"
                           " return !el || el.offsetParent === null || !el.innerText.trim(); }",
                           timeout=READY_TIMEOUT_MS)


@pytest.fixture()
def open_browser(playwright, server):
    """open_browser() -> a page on the app in a fresh Chromium profile (call twice for two browsers)."""
    contexts = []

    def make(wait_ready: bool = True):
        ctx = playwright.chromium.launch_persistent_context(
            tempfile.mkdtemp(prefix="ecolens-chromium-"), executable_path=CHROMIUM, headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        contexts.append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        page.goto(server.url)
        page.wait_for_selector("#search-query textarea")
        if wait_ready:
            wait_until_ready(page)
        return page

    yield make
    for ctx in contexts:
        ctx.close()


@pytest.fixture()
def shot():
    SHOTS.mkdir(parents=True, exist_ok=True)

    def save(page, name: str, full_page: bool = True, toasts: bool = False) -> None:
        for button in [] if toasts else page.locator("button.toast-close").all():  # they would cover the banner
            try:
                button.click(timeout=1000)
            except playwright_api.Error:  # the toast went away by itself
                pass
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)
    return save
