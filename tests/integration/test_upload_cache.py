"""Gradio's cache of uploads and handed-out files is EcoLens's own: an in-process server, raw HTTP requests.
An upload lands in data_dir/uploads (private to this user) and is served back to the browser that uploaded
it, not to another browser nor to a request without the owner cookie; a file another program put in the
shared system folder (/tmp/gradio) is not served; a cached upload is deleted after upload_keep_s seconds
and then no longer served."""
from __future__ import annotations

import json
import os
import socket
import stat
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from core.sessions.memory_log import MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine
from ui.server import build_app, launch_options, own_upload_folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, cookie: str = "") -> tuple[int, bytes, str]:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.read(), resp.headers.get("Set-Cookie", "")
    except urllib.error.HTTPError as exc:
        return exc.code, b"", ""


def _browser(base: str) -> str:
    """A new browser: the owner cookie its first page load gets."""
    status, _, set_cookie = _get(f"{base}/")
    assert status == 200 and set_cookie.startswith("ecolens-owner=") and "HttpOnly" in set_cookie
    return set_cookie.split(";", 1)[0]


def _upload(base: str, name: str, data: bytes, cookie: str = "") -> str:
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", **({"Cookie": cookie} if cookie else {})}
    request = urllib.request.Request(f"{base}/gradio_api/upload", data=body, method="POST", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as resp:
        return json.loads(resp.read())[0]


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADIO_TEMP_DIR", raising=False)
    engine = FakeEngine(tmp_path, upload_keep_s=3)
    folder = own_upload_folder(engine.settings, environ=os.environ)  # what launch() does first
    app = build_app(engine, MemorySessionLog())
    opts = launch_options(engine.settings, environ={})
    opts.update(server_port=_free_port(), prevent_thread_lock=True, quiet=True)
    app.queue().launch(**opts)
    try:
        yield f"http://127.0.0.1:{opts['server_port']}", folder, engine.settings
    finally:
        app.close()


def test_uploads_live_in_a_private_folder_of_the_app_and_expire(server):
    base, folder, settings = server
    assert folder == settings.path("uploads").resolve()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    mine = _browser(base)
    path = Path(_upload(base, "mine.txt", b"my own upload " + uuid.uuid4().bytes, mine))
    assert path.is_relative_to(folder) and path.is_file()
    assert _get(f"{base}/gradio_api/file={path}", mine)[0] == 200

    shared = Path(tempfile.gettempdir()) / "gradio" / uuid.uuid4().hex  # the system folder other programs use
    shared.mkdir(parents=True)
    planted = shared / "planted.txt"
    planted.write_text("put here by another program")
    try:
        assert _get(f"{base}/gradio_api/file={planted}", mine)[0] in (403, 404)
    finally:
        planted.unlink()
        shared.rmdir()

    end = time.monotonic() + 20  # upload_keep_s=3: deleted on Gradio's next sweep (every 1 s)
    while path.exists() and time.monotonic() < end:
        time.sleep(0.2)  # polling a condition with a deadline, not a fixed wait
    assert not path.exists()
    assert _get(f"{base}/gradio_api/file={path}", mine)[0] in (403, 404)


def test_one_browsers_upload_is_not_served_to_another(server):
    base, _, _ = server
    alice, bob = _browser(base), _browser(base)
    assert alice != bob
    secret = b"alice's photo " + uuid.uuid4().bytes
    path = _upload(base, "alice.jpg", secret, alice)
    assert _get(f"{base}/gradio_api/file={path}", alice)[:2] == (200, secret)
    assert _get(f"{base}/gradio_api/file={path}", bob)[0] == 404
    assert _get(f"{base}/gradio_api/file={path}")[0] == 404  # no cookie at all
    sneaky = path.replace("/alice.jpg", "/../" + Path(path).parent.name + "/alice.jpg")
    assert _get(f"{base}/gradio_api/file={sneaky}", bob)[0] == 404
    assert _upload(base, "alice.jpg", secret, bob) == path  # bob has the same picture: now it is his too
    assert _get(f"{base}/gradio_api/file={path}", bob)[0] == 200


def test_an_operator_chosen_folder_is_kept(tmp_path):
    env = {"GRADIO_TEMP_DIR": str(tmp_path / "mine")}
    engine = FakeEngine(tmp_path)
    assert own_upload_folder(engine.settings, environ=env) == tmp_path / "mine"
    assert env["GRADIO_TEMP_DIR"] == str(tmp_path / "mine")
