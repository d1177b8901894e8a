"""The hostile suite's site: one data directory with a few ingested photos and the real web app serving it.
Each case is fed to the CLI (a process on the same data directory) or to the API (gradio_client), then the
suite checks what a careful operator would: a clear message and no traceback, the server still answering,
SQLite's integrity check, and row counts unchanged except for requests that were accepted."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.live_server import LiveServer, cli, counts, integrity_ok
from tests.photos import colour_image

N_PHOTOS = 8


@dataclass
class Site:
    root: Path
    data: Path
    server: LiveServer

    def snapshot(self) -> dict[str, int]:
        return counts(self.data)

    def healthy(self) -> None:
        assert self.server.proc.poll() is None and self.server.answers(), self.server.log()[-2000:]
        assert integrity_ok(self.data)


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Site:
    root = tmp_path_factory.mktemp("hostile")
    photos = root / "photos"
    photos.mkdir()
    for i in range(N_PHOTOS):
        colour_image(500 + i, 96).save(photos / f"heron-{i}.jpg", quality=90)
    data = root / "data"
    done = cli(data, "ingest", str(photos))
    assert done.returncode == 0, done.stderr
    server = LiveServer(data)
    yield Site(root, data, server)
    server.stop()
