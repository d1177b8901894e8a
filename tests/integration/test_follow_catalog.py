"""The running web app follows the catalog: photos that `python app.py ingest` (another process) adds while the
server runs appear in the next web search, with a notice, and without a restart."""
from __future__ import annotations

import pytest

from tests.live_server import LiveServer, cli
from tests.photos import colour_image

gradio_client = pytest.importorskip("gradio_client")


def _folder(root, start: int, n: int):
    root.mkdir(parents=True)
    for i in range(start, start + n):
        colour_image(i, 80).save(root / f"p{i}.jpg", quality=90)
    return root


def _search(client, k: int = 20):
    gallery, status, notices, *_ = client.predict("a heron", "Fast", k, 1, 10, "full", False, "", "", "", [], "",
                                                  "", None, api_name="/search")
    return gallery, status, notices


def test_a_cli_ingest_during_a_running_server_appears_in_the_next_web_search(tmp_path):
    data = tmp_path / "data"
    assert cli(data, "ingest", str(_folder(tmp_path / "first", 0, 3))).returncode == 0
    server = LiveServer(data)
    try:
        client = gradio_client.Client(server.url, verbose=False)
        gallery, _, notices = _search(client)
        assert len(gallery) == 3 and "joined the catalog" not in notices
        done = cli(data, "ingest", str(_folder(tmp_path / "second", 10, 4)))  # another process, same data dir
        assert done.returncode == 0, done.stderr
        gallery, status, notices = _search(client)
        assert len(gallery) == 7 and "done" in status
        assert "4 new photos joined the catalog" in notices
        gallery, _, notices = _search(client)  # said once, not on every search
        assert len(gallery) == 7 and "joined the catalog" not in notices
    finally:
        server.stop()
