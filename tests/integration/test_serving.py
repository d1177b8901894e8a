"""Serving photos, not folders: the real web app (python app.py) on a free port over a real data directory.
The database, its WAL and shared-memory files, the index, the log and the original photos answer 403/404 on
every Gradio file route, with or without a password; photos ingested from a folder outside the working
directory, /tmp and the data directory show through served copies; a photo whose file is gone shows a
placeholder with a notice."""
from __future__ import annotations

import json
import shutil
import tempfile
import urllib.parse
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.live_server import LiveServer, app_env, cli
from tests.photos import colour_image

gradio_client = pytest.importorskip("gradio_client")
OUTSIDE = Path.home() / ".cache" / "ecolens-test-photos"  # not under the working directory, /tmp or the data dir
SQLITE_MAGIC = b"SQLite format 3"
N = 6


def _outside_folder() -> Path:
    OUTSIDE.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="photos-", dir=OUTSIDE))
    for i in range(N):
        colour_image(100 + i, 96).save(folder / f"bird-{i}.jpg", quality=92)
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = _outside_folder()
    data = tmp_path_factory.mktemp("serving") / "data"
    done = cli(data, "ingest", str(folder))
    assert done.returncode == 0, done.stderr
    server = LiveServer(data)
    yield server, folder, data
    server.stop()
    shutil.rmtree(folder, ignore_errors=True)


def _private_files(data: Path, folder: Path) -> list[Path]:
    files = [data / "ecolens.sqlite", data / "ecolens.sqlite-wal", data / "ecolens.sqlite-shm",
             *sorted((data / "index").glob("*.faiss")), data / "logs" / "ecolens.log", folder / "bird-0.jpg"]
    assert all(f.exists() for f in files), [str(f) for f in files if not f.exists()]  # the test means something
    return files


def _attempts(server: LiveServer, path: Path) -> list[tuple[str, str]]:
    """(method, url path) of every way a Gradio 6 route could be asked for `path`."""
    p = str(path)
    served = server.data_dir.resolve() / "served"
    quoted = urllib.parse.quote(p)
    sneaky = f"{served}/../{path.relative_to(server.data_dir)}" if path.is_relative_to(server.data_dir) else p
    return [("GET", f"/gradio_api/file={p}"), ("HEAD", f"/gradio_api/file={p}"), ("GET", f"/gradio_api/file={quoted}"),
            ("GET", f"/gradio_api/file/{p}"), ("GET", f"/file={p}"), ("GET", f"/file/{p}"),
            ("GET", f"/gradio_api/file={sneaky}"), ("GET", f"/gradio_api/file={sneaky.replace('..', '%2e%2e')}"),
            ("GET", f"/gradio_api/file=file://{p}"),
            ("GET", f"/gradio_api/file=http://127.0.0.1:{server.port}/gradio_api/file={p}"),
            ("GET", f"/gradio_api/proxy=http://127.0.0.1:{server.port}/gradio_api/file={p}"),
            ("GET", f"/static/../../../../../../..{p}"), ("GET", f"/assets/..%2f..%2f..%2f..%2f..{p}"),
            ("GET", f"/gradio_api/stream/x/y/z/playlist-file?path={quoted}"),
            ("GET", f"/gradio_api/run-history/records/a/b/assets/{quoted}"),
            ("GET", f"/gradio_api/custom_component/x/server/{quoted}/f")]


def _refused(server: LiveServer, files: list[Path], headers: dict[str, str] | None = None) -> None:
    for f in files:
        for method, url in _attempts(server, f):
            status, body = server.get(url, method=method, headers=headers)
            assert status in (400, 401, 403, 404, 405, 422), (method, url, status)
            assert SQLITE_MAGIC not in body and b"IxM" not in body[:8] and b"\xff\xd8" not in body[:2], url


def test_database_wal_index_log_and_originals_answer_403_or_404_on_every_file_route(site):
    server, folder, data = site
    _refused(server, _private_files(data, folder))
    # a file upload is stored in the app's upload folder (data_dir/uploads) and cannot name a path of ours
    boundary = "x-ecolens-test"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"../../ecolens.sqlite\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\nnot a database\r\n--{boundary}--\r\n").encode()
    status, reply = server.get("/gradio_api/upload", method="POST", data=body,
                               headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 200 and Path(json.loads(reply)[0]).resolve().is_relative_to((data / "uploads").resolve())
    assert (data / "ecolens.sqlite").read_bytes()[:15] == SQLITE_MAGIC  # untouched


def test_a_data_path_sent_as_an_input_file_is_refused(site):
    server, _, data = site
    payload = {"data": ["frog", "Fast", 4, 1, 10, "full", False, "", "", "", [], "", "",
                        {"path": str(data / "ecolens.sqlite"), "meta": {"_type": "gradio.FileData"}}, None]}
    status, reply = server.get("/gradio_api/call/search", method="POST", data=json.dumps(payload).encode(),
                               headers={"Content-Type": "application/json"})
    assert status == 200
    event = json.loads(reply)["event_id"]
    status, stream = server.get(f"/gradio_api/call/search/{event}")
    assert b"event: error" in stream and SQLITE_MAGIC not in stream


def _mean(path: str) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.float64).mean(axis=(0, 1))


def test_photos_from_a_folder_outside_every_default_path_show_as_served_copies(site):
    server, folder, data = site
    client = gradio_client.Client(server.url, verbose=False)
    gallery, status, notices, *_ = client.predict("a bird", "Fast", N, 1, 10, "full", False, "", "", "", [], "",
                                                  "", None, api_name="/search")
    assert len(gallery) == N and "done" in status and "missing" not in notices
    originals = {i: _mean(str(folder / f"bird-{i}.jpg")) for i in range(N)}
    for item in gallery:  # each shown picture is one of the photos (a downscaled copy, colours kept)
        shown = _mean(item["image"])
        assert min(np.abs(shown - o).max() for o in originals.values()) < 6
    copies = list((data / "served").glob("*.jpg"))
    assert len(copies) >= N
    status, body = server.get(f"/gradio_api/file={copies[0]}")
    assert status == 200 and body[:2] == b"\xff\xd8"  # a served copy is reachable, nothing else is


def test_with_a_password_nothing_private_is_reachable_logged_in_or_not(site, tmp_path):
    _, folder, data = site
    private = tmp_path / "data"
    shutil.copytree(data, private, ignore=shutil.ignore_patterns("*.lock", "served"))
    server = LiveServer(private, env=app_env(private, ECOLENS_PASSWORD="correct horse"))
    try:
        files = [private / "ecolens.sqlite", *sorted((private / "index").glob("*.faiss"))]
        _refused(server, files)
        status, cookie = server.login("correct horse")
        assert status == 200 and cookie
        assert server.get("/config", headers={"Cookie": cookie})[0] == 200  # the cookie logs in
        _refused(server, files, headers={"Cookie": cookie})
    finally:
        server.stop()


def test_a_data_directory_inside_gradios_own_upload_folder_keeps_its_private_files_blocked(site, tmp_path):
    """Gradio serves its upload folder by itself; a data directory placed there is blocked by name."""
    _, _, data = site
    uploads = tmp_path / "gradio-uploads"
    inside = uploads / "data"
    shutil.copytree(data, inside, ignore=shutil.ignore_patterns("*.lock", "served"))
    server = LiveServer(inside, env=app_env(inside, GRADIO_TEMP_DIR=str(uploads)))
    try:
        _refused(server, [inside / "ecolens.sqlite", *sorted((inside / "index").glob("*.faiss"))])
    finally:
        server.stop()


def test_a_photo_whose_file_is_gone_shows_a_placeholder_and_a_notice(site):
    server, folder, _ = site
    (folder / "bird-3.jpg").unlink()
    client = gradio_client.Client(server.url, verbose=False)
    gallery, status, notices, *_ = client.predict("a bird", "Fast", N, 1, 10, "full", False, "", "", "", [], "",
                                                  "", None, api_name="/search")
    assert len(gallery) == N and "done" in status
    assert "missing" in notices and "bird-3.jpg" in notices
