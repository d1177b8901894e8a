"""Issue 21, item 8 (second half): the index file is damaged on disk under the running web app. The next
search through the API checks the file against its checksum record, says so in its notices (and in the log,
one line each, no traceback), sets the damaged file aside and writes the sound copy the server has loaded
back; the results stay the same, the server stays up and the catalog is untouched."""
from __future__ import annotations

import numpy as np
import pytest

from core.vectors.integrity import read_checked
from tests.hostile.test_api_inputs import search
from tests.live_server import LiveServer, cli, counts, integrity_ok
from tests.photos import colour_image

gradio_client = pytest.importorskip("gradio_client")


def test_an_index_damaged_under_the_running_app_is_noticed_by_the_next_search(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    for i in range(6):
        colour_image(700 + i, 96).save(photos / f"heron-{i}.jpg", quality=90)
    data = tmp_path / "data"
    assert cli(data, "ingest", str(photos)).returncode == 0
    before = counts(data)
    index_file = data / "index" / "vectors-1.faiss"
    server = LiveServer(data)
    try:
        client = gradio_client.Client(server.url, verbose=False)
        first, _, notices, *_ = client.predict(*search(k=4)(tmp_path), api_name="/search")
        assert "damaged" not in notices
        size = index_file.stat().st_size
        index_file.write_bytes(np.random.default_rng(5).integers(0, 256, size, dtype=np.uint8).tobytes())
        again, status, notices, *_ = client.predict(*search(k=4)(tmp_path), api_name="/search")
        assert "vectors-1.faiss was damaged" in notices and "written again from the copy" in notices, notices
        assert "done" in status and [c for _, c in again] == [c for _, c in first]  # the same photos, in order
        third, _, notices, *_ = client.predict(*search(k=4)(tmp_path), api_name="/search")
        assert "damaged" not in notices  # said once; the file is sound again
        log = (data / "logs" / "ecolens.log").read_text(errors="replace")
        assert "is damaged" in log and "Traceback" not in log + server.log()
        assert server.proc.poll() is None and server.answers()
    finally:
        server.stop()
    import faiss

    index, damage = read_checked(index_file, faiss.read_index(str(index_file)).d)
    assert damage is None and index.ntotal == 6  # sound on disk again
    assert integrity_ok(data) and counts(data)["photos"] == before["photos"]
    assert list(index_file.parent.glob("vectors-1.faiss.damaged-*"))
