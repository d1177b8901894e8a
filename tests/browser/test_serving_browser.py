"""Photos from a folder outside every default path (not the working directory, /tmp, the data directory or
a configured corpus) show in Chromium: the gallery's pictures load (naturalWidth > 0) from served copies,
and so does the label view's photo; the original files are never what the page asks for."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.live_server import LiveServer, cli
from tests.photos import colour_image

OUTSIDE = Path.home() / ".cache" / "ecolens-test-photos"
LOADED = "(sel) => { const imgs = [...document.querySelectorAll(sel)];" \
         " return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0); }"


@pytest.fixture(scope="module")
def outside_site(tmp_path_factory):
    OUTSIDE.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="browser-", dir=OUTSIDE))
    for i in range(5):
        colour_image(300 + i, 120).save(folder / f"owl-{i}.jpg", quality=90)
    data = tmp_path_factory.mktemp("browser-serving") / "data"
    done = cli(data, "ingest", str(folder))
    assert done.returncode == 0, done.stderr
    server = LiveServer(data)
    yield server, folder
    server.stop()
    shutil.rmtree(folder, ignore_errors=True)


def test_photos_from_an_outside_folder_show_in_the_browser(playwright, outside_site):
    server, folder = outside_site
    ctx = playwright.chromium.launch_persistent_context(
        tempfile.mkdtemp(prefix="ecolens-chromium-"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 1000})
    asked: list[str] = []
    try:
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        page.on("request", lambda req: asked.append(req.url))
        page.goto(server.url)
        page.fill("#search-query textarea", "an owl")
        page.click("#search-button")
        page.wait_for_function(LOADED, arg="#search-gallery .thumbnail-item img")
        assert page.locator("#search-gallery .thumbnail-item").count() == 5
        page.get_by_role("tab", name="Label").click()
        page.fill("#label-annotator textarea, #label-annotator input", "ada")
        page.fill("#label-query textarea, #label-query input", "an owl")
        page.click("#label-load")
        page.wait_for_function(LOADED, arg="#label-photo img")
    finally:
        ctx.close()
    assert not any(str(folder) in url for url in asked)  # the page never names an original file
    pictures = [u for u in asked if "/gradio_api/file=" in u and u.endswith(".jpg")]
    assert pictures and all(u.endswith(("-320.jpg", "-1280.jpg")) for u in pictures)  # served copies only
