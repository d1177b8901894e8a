"""The app as a whole: launch options (host, served folders, upload limit, password), the stable API names,
an in-process server driven by gradio_client, and the import layering of ui/ and core/."""
from __future__ import annotations

import ast
import asyncio
import socket
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.config import Settings
from core.sessions.memory_log import MemorySessionLog
from tests.unit.test_ui_fakes import FakeEngine
from ui.server import blocked_folders, build_app, launch_options, served_folders

ROOT = Path(__file__).resolve().parents[2]
API_NAMES = {"search", "more_like_this", "refine_with_labels", "dialogue_start", "dialogue_turn", "compare",
             "label_load", "label", "export", "agreement", "history_open", "export_marked"}


def test_launch_options_follow_settings_and_environment(tmp_path):
    s = Settings(data_dir=str(tmp_path), port=7999, max_upload_mb=3)
    local = launch_options(s, environ={})
    assert local["server_name"] == "127.0.0.1" and local["server_port"] == 7999
    assert local["max_file_size"] == 3_000_000 and "auth" not in local
    assert launch_options(s, environ={"SPACE_ID": "me/ecolens"})["server_name"] == "0.0.0.0"
    assert launch_options(Settings(host="10.0.0.2"), environ={"SPACE_ID": "x"})["server_name"] == "10.0.0.2"
    check = launch_options(Settings(password="pw"), environ={})["auth"]
    with ThreadPoolExecutor(1) as pool:  # a thread of its own: a browser test may hold this thread's event loop
        assert pool.submit(asyncio.run, check("ecolens", "pw")).result() and check.guard.failures == deque()
    assert "ecolensLabel.press" in local["head"] and "lightbox-next" in local["head"]  # the keys scripts


def test_only_the_served_copies_are_allowed_and_the_data_directory_is_blocked(tmp_path):
    corpus = tmp_path / "photos"
    corpus.mkdir()
    s = Settings(data_dir=str(tmp_path / "data"), corpus=str(corpus / "obs.csv"))
    assert served_folders(s) == [str((tmp_path / "data" / "served").resolve())]
    assert blocked_folders(s) == []  # no file route reaches a data directory outside Gradio's own folders
    from gradio.utils import get_upload_folder

    inside = Settings(data_dir=str(Path(get_upload_folder()) / "ecolens-test-data"))
    blocked = set(blocked_folders(inside))
    data = Path(inside.path()).resolve()
    assert {str(data / n) for n in ("ecolens.sqlite", "ecolens.sqlite-wal", "ecolens.sqlite-shm", "index")} <= blocked
    assert str(data / "served") not in blocked
    assert launch_options(inside, environ={})["blocked_paths"] == blocked_folders(inside)


def test_build_app_has_stable_api_names_banner_and_elem_ids(tmp_path):
    app = build_app(FakeEngine(tmp_path), MemorySessionLog(), "BANNER")
    names = {fn.api_name for fn in app.fns.values() if fn.api_visibility == "public"}
    assert API_NAMES <= names
    ids = {b.elem_id for b in app.blocks.values() if getattr(b, "elem_id", None)}
    assert {"standin-banner", "search-query", "search-gallery", "label-relevant", "label-export",
            "dialogue-send", "compare-button", "history-open", "memory-log-notice"} <= ids
    interactive = [b for b in app.blocks.values()
                   if type(b).__name__ in ("Button", "Textbox", "Slider", "Radio", "Dropdown", "Checkbox",
                                           "CheckboxGroup", "Image", "Gallery", "File", "Chatbot")]
    assert all(b.elem_id for b in interactive), [type(b).__name__ for b in interactive if not b.elem_id]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_in_process_server_answers_the_scripting_api(tmp_path):
    gradio_client = pytest.importorskip("gradio_client")
    engine, log = FakeEngine(tmp_path), MemorySessionLog()
    app = build_app(engine, log, "BANNER")
    opts = launch_options(engine.settings, environ={})
    opts.update(server_port=_free_port(), allowed_paths=[str(tmp_path)], prevent_thread_lock=True, quiet=True)
    app.queue().launch(**opts)
    try:
        client = gradio_client.Client(f"http://127.0.0.1:{opts['server_port']}/", verbose=False)
        label_id = client.predict("frogs", 3, 1, "script", 0.5, api_name="/label")
        assert log.labels(query="frogs")[0].id == label_id
        gallery, status, *_, result = client.predict("frogs", api_name="/search")  # every other argument defaults
        assert len(gallery) == len(result["results"]) == 12 and "done" in status  # all 12 fake photos
        assert [g["caption"].split(" · ")[0] for g in gallery] == [r["common_name"] for r in result["results"]]
        assert all(Path(g["image"]).is_file() for g in gallery)  # the gallery's pictures came down as files
        *_, like = client.predict(result["results"][0]["id"], api_name="/more_like_this")
        assert like["results"][0]["id"] == result["results"][0]["id"]
        exported = client.predict("csv", "frogs", "script", api_name="/export")
        assert Path(exported).read_text().count("script") == 1
        table, *_ = client.predict(result["session_id"], api_name="/history_open")
        assert "frogs" in table
    finally:
        app.close()


def _imports(folder: str) -> set[tuple[str, str]]:
    found = set()
    for path in (ROOT / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {(str(path), a.name.split(".")[0]) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add((str(path), node.module.split(".")[0]))
    return found


def test_layering_ui_and_core_imports():
    bad_ui = {(p, m) for p, m in _imports("ui")
              if m in {"torch", "faiss", "sqlalchemy", "open_clip", "diffusers", "storage"}}
    bad_core = {(p, m) for p, m in _imports("core") if m in {"gradio", "storage", "ui"}}
    assert not bad_ui and not bad_core


def test_hugging_face_login_only_on_a_space_with_oauth():
    from ui.server import oauth_enabled

    assert not oauth_enabled({}) and not oauth_enabled({"SPACE_ID": "me/x"})
    assert oauth_enabled({"SPACE_ID": "me/x", "OAUTH_CLIENT_ID": "abc"})


def test_a_search_while_preparing_is_a_note_not_an_error_and_a_failed_preparation_is_an_error():
    import threading

    import gradio as gr

    from core.contracts.errors import InputError, NotReady
    from core.search.preparation import Preparation
    from ui.forms import shows_errors
    from ui.server import _gate

    release = threading.Event()
    preparing = Preparation(lambda progress: [release.wait(10)] and []).start()
    ready = _gate(preparing)

    @shows_errors
    def plain():
        ready()
        return "results"

    @shows_errors
    def streaming():
        ready()
        yield "results"

    with pytest.raises(NotReady):
        ready()
    assert plain() == gr.skip() and list(streaming()) == [gr.skip()]  # outputs left as they are, no gr.Error
    release.set()
    preparing.wait(10)
    assert plain() == "results" and list(streaming()) == ["results"]

    failed = Preparation(lambda progress: 1 / 0).start()
    failed.wait(10)
    with pytest.raises(InputError):
        _gate(failed)()

    @shows_errors
    def after_failure():
        _gate(failed)()

    with pytest.raises(gr.Error, match="could not be prepared"):
        after_failure()


@pytest.mark.slow
def test_without_logins_one_browsers_export_is_not_served_to_another(tmp_path):
    """Two API clients are two browsers (each keeps its own `ecolens-owner` cookie): the export one made is
    served to it and not to the other, and a file no response handed out is served to neither; neither
    refusal names a path on the server."""
    import shutil
    import tempfile
    import urllib.error
    import urllib.request

    gradio_client = pytest.importorskip("gradio_client")
    engine, log = FakeEngine(tmp_path), MemorySessionLog()
    app = build_app(engine, log, "BANNER")
    opts = launch_options(engine.settings, environ={})
    opts.update(server_port=_free_port(), allowed_paths=[str(tmp_path)], prevent_thread_lock=True, quiet=True)
    app.queue().launch(**opts)
    url = f"http://127.0.0.1:{opts['server_port']}/"

    def fetch(client, path: str) -> tuple[int, str]:
        cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
        req = urllib.request.Request(url + "gradio_api/file=" + path, headers={"Cookie": cookie})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
    try:
        one, two = (gradio_client.Client(url, verbose=False, download_files=False) for _ in range(2))
        assert one.cookies.get("ecolens-owner") and one.cookies["ecolens-owner"] != two.cookies.get("ecolens-owner")
        one.predict("frogs", 3, 1, "ada", 0.5, api_name="/label")
        exported = one.predict("csv", "frogs", "", api_name="/export")["path"]
        assert fetch(one, exported) == (200, Path(exported).read_bytes().decode())
        status, body = fetch(two, exported)
        assert status == 404 and exported not in body and "labels-" not in body
        foreign = Path(tempfile.mkdtemp(prefix="foreign-", dir=Path(exported).parent.parent)) / "note.txt"
        foreign.write_text("another program's")
        assert [fetch(c, str(foreign))[0] for c in (one, two)] == [404, 404]
        shutil.rmtree(foreign.parent)
    finally:
        app.close()
