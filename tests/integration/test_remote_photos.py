"""Photos from a CSV of image URLs are stored locally at ingest (data_dir/media/remote, by content hash): once
the web server that had them is gone, the judge still reads their pixels, the served copies still show, and
the same picture at two URLs is stored once."""
from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from app import build_services
from core.config import load_settings
from core.search.presets import request_for
from tests.photos import colour_image, write_observations
from ui.photos import served_files


def test_remote_photos_are_kept_locally_and_every_stage_reads_them_offline(tmp_path):
    remote = tmp_path / "remote"
    remote.mkdir()
    for i in range(4):
        colour_image(40 + i).save(remote / f"{i}.png")
    (remote / "copy.png").write_bytes((remote / "0.png").read_bytes())
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(remote))
    handler.log_message = lambda *a: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    rows = [{"image_url": f"{base}/{n}", "taxon_name": "Rana aurora", "license": "CC0"}
            for n in ("0.png", "1.png", "2.png", "3.png", "copy.png")]
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", judge="clip",
                             checkpoint_s=0.0, allow_private_urls=True)  # the photo server is on this machine
    try:
        report = build_services(settings).ingestor().run(write_observations(tmp_path, rows))
    finally:
        server.shutdown()
        server.server_close()
    assert report.added == 4 and report.duplicates == 1
    services = build_services(settings)  # a new process, with the photos' server gone
    photos = services.catalog.all_photos()
    media = (tmp_path / "data" / "media" / "remote").resolve()
    for p in photos:
        local = Path(p.path)
        assert local.is_relative_to(media) and local.name.startswith(p.sha256)
        number = p.extra["image_url"].rsplit("/", 1)[1].split(".")[0]
        assert local.read_bytes() == (remote / f"{number}.png").read_bytes()
    assert len(list(media.rglob("*.png"))) == 4
    result = services.engine.search(request_for("Verify", "a frog", k=4, rerank_k=4, m=1))
    assert result.stages["rerank"]["judged"] == 4 and result.stages["rerank"]["failed"] == 0
    assert not any("judge failed" in n for n in result.notices)
    shown = served_files(settings).photo(photos[0])
    assert not shown.missing
