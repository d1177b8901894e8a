"""A Space started twice keeps what it built (issue 37): the real server (python app.py) with SPACE_ID set and no data
directory given, on the fake hub (tests/fake_hub.py: tiny random models under the hub-cpu profile's ids, a tiny
INQUIRE-Rerank parquet), its persistent storage (space_storage) a folder of the test's. The first start downloads
the profile's models and the photos into that folder and embeds them; the second start, on the same folder,
downloads nothing (the fake hub's log shows no second GET of a file), and an ingest of the same corpus then embeds
nothing; `export vectors` writes the collection's vectors keyed by INQUIRE's ids. Both starts serve the Filters map:
Leaflet (committed) is inlined into the page and the map's element is in the page's layout. The test waits on the
preparation's log line, never a fixed sleep."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytest.importorskip("transformers")
pytest.importorskip("open_clip")
pytest.importorskip("num2words")

from core.search.preparation import PREPARED
from tests.fake_hub import child_env
from tests.hub_repos import DATASET, image_ids, profile_hub
from tests.live_server import LiveServer, cli, db_rows

pytestmark = pytest.mark.slow
CORPUS = f"hf://datasets/{DATASET}:validation"
PREPARE_S = 900.0  # models and photos downloaded, 12 photos embedded on a loaded 2-core machine


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    server = profile_hub(tmp_path_factory.mktemp("hub-build"))
    yield server
    server.stop()


def _space_env(hub_url: str, storage: Path) -> dict[str, str]:
    """A Space's environment: SPACE_ID, no data directory set, the persistent storage at `storage`."""
    env = child_env(hub_url, storage, generator="standin")  # the picture generator alone is a stand-in
    del env["ECOLENS_DATA_DIR"]  # the Space's own default must find the storage
    env.update({"SPACE_ID": "me/ecolens", "ECOLENS_SPACE_STORAGE": str(storage)})
    return env


def _wait_prepared(server: LiveServer, storage: Path, times: int) -> None:
    """Until the log in the storage holds `times` preparation lines (each start writes one at its end)."""
    log = storage / "logs" / "ecolens.log"
    deadline = time.monotonic() + PREPARE_S
    while True:
        text = log.read_text(errors="replace") if log.is_file() else ""
        if text.count(PREPARED) >= times:
            assert "preparing the photo collection failed" not in text, text[-3000:]
            return
        assert server.proc.poll() is None, server.log()[-3000:]
        assert time.monotonic() < deadline, "the preparation did not end: " + server.log()[-3000:]
        time.sleep(0.5)


def _downloads(hub) -> list[str]:
    """The files the fake hub sent (GET of a file, not a listing or a HEAD)."""
    return [path for method, path, _ in hub.log if method == "GET" and "/resolve/" in path]


def _shows_the_map(server: LiveServer) -> None:
    status, page = server.get("/")
    assert status == 200
    html = page.decode("utf-8", "replace")
    assert "Leaflet 1.9.4" in html and "L.map(" in html  # leaflet.js inlined, and the map's own script
    status, config = server.get("/config")
    assert status == 200 and b"filter-map" in config and b"ecolens-map-canvas" in config, config[:300]
    assert b"ecolens-map-missing" not in config


def test_a_space_started_twice_neither_downloads_nor_embeds_again(hub, tmp_path):
    storage = tmp_path / "persistent"
    storage.mkdir()
    env = _space_env(hub.url, storage)
    hub.log[:] = []
    first = LiveServer(storage, env=env, start_timeout=300)
    try:
        _wait_prepared(first, storage, 1)
        _shows_the_map(first)
    finally:
        first.stop()
    fetched = _downloads(hub)
    assert any("SmolVLM-256M-Instruct" in p for p in fetched) and any(DATASET in p for p in fetched)
    assert (storage / "ecolens.sqlite").is_file() and (storage / "models").is_dir()  # all in the storage
    assert db_rows(storage, "SELECT count(*) FROM photos")[0][0] == 12
    hub.log[:] = []
    second = LiveServer(storage, env=env, start_timeout=300)
    try:
        _wait_prepared(second, storage, 2)
        _shows_the_map(second)
    finally:
        second.stop()
    assert _downloads(hub) == []  # the restart found its models and photos
    again = cli(storage, "ingest", CORPUS, "--json", env=env, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    report = json.loads(again.stdout)
    assert (report["added"], report["reembedded"]) == (0, 0), report  # nothing embedded again
    assert report["seen"] == 12
    assert _downloads(hub) == []
    assert db_rows(storage, "SELECT count(*) FROM photos")[0][0] == 12
    # the collection's vectors, for the deployer's own dataset repository (vectors_repo)
    out = tmp_path / "validation.parquet"
    written = cli(storage, "export", "vectors", "--out", str(out), env=env, timeout=600)
    assert written.returncode == 0 and written.stdout.strip() == str(out), written.stderr[-3000:]
    assert "wrote 12 vectors of open_clip:hf-hub:imageomics/bioclip" in written.stderr
    table = pq.read_table(out)
    assert table.schema.metadata[b"model_id"].decode().startswith("open_clip:hf-hub:imageomics/bioclip")
    assert sorted(table.column("inat24_image_id").to_pylist()) == image_ids()
