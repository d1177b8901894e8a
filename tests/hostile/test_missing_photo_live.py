"""Photos moved away after ingest, against the real web app (issue 36, item 3: file paths on the server never
in a message to the browser). Each search (table: one per preset, with and without the written answer)
still ends; every notice (the page's and the API's) says the photo's file is missing by its id and file
name, never by the folder it lay in on the server; the catalog is untouched."""
from __future__ import annotations

import pytest

from tests.live_server import LiveServer, cli, counts, integrity_ok
from tests.photos import colour_image

gradio_client = pytest.importorskip("gradio_client")
FORM = dict(query="a heron", preset="Fast", k=4, m=1, rerank_k=10, rerank_mode="full", answer=False, taxon="",
            date_from="", date_to="", months=[], bbox="", license="", example=None)
CASES = [  # (preset, written answer, a notice says)
    ("Verify", False, "is missing; it was moved or deleted after ingest"),
    ("Verify", True, "is missing; it was moved or deleted after ingest"),
    ("Fast", True, "it was moved or deleted after ingest"),
    ("Cover", False, "it was moved or deleted after ingest"),
    ("Visualize", False, "it was moved or deleted after ingest"),
]


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    root = tmp_path_factory.mktemp("moved")
    photos = root / "secret-folder"
    photos.mkdir()
    for i in range(6):
        colour_image(800 + i, 96).save(photos / f"egret-{i}.jpg", quality=90)
    data = root / "data"
    assert cli(data, "ingest", str(photos)).returncode == 0
    server = LiveServer(data)
    photos.rename(root / "elsewhere")  # moved away after ingest, while the app runs
    try:
        yield root, data, server, counts(data)
    finally:
        server.stop()


@pytest.mark.parametrize("preset,answer,says", CASES, ids=[f"{c[0]}{'+answer' if c[1] else ''}" for c in CASES])
def test_a_photo_moved_away_is_named_without_its_folder(moved, preset, answer, says):
    root, data, server, before = moved
    client = gradio_client.Client(server.url, verbose=False, download_files=False)
    form = {**FORM, "preset": preset, "answer": answer, "query": f"a heron {preset} {answer}"}
    out = client.predict(*form.values(), api_name="/search")
    status, page, result = out[1], out[2], out[-1]
    assert "done" in status, status
    said = [page, *result["notices"]]
    assert any(says in n for n in said), said
    leaks = [n for n in said if str(root) in n or "secret-folder" in n]
    assert not leaks, leaks
    assert server.proc.poll() is None and integrity_ok(data) and counts(data)["photos"] == before["photos"]
