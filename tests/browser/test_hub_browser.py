"""A Space's first start, in Chromium: the real server (python app.py) with ECOLENS_MODELS=hub-cpu and the
INQUIRE-Rerank validation split as its corpus, on the fake hub (tests/fake_hub.py: tiny random models under
the profile's ids, a tiny parquet in the INQUIRE schema with a dataset card). While the hub sends slowly, the
page shows the download in megabytes; once ready, the banner names the collection, its licence and the
models, and the example-search menu offers the dataset's benchmark queries: picking one runs that search."""
from __future__ import annotations

import re
import tempfile

import pytest

pytest.importorskip("transformers")
pytest.importorskip("open_clip")
pytest.importorskip("num2words")

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, READY_TIMEOUT_MS, wait_until_ready  # noqa: E402
from tests.fake_hub import child_env  # noqa: E402
from tests.hub_repos import DATASET, QUERIES, profile_hub  # noqa: E402
from tests.live_server import LiveServer  # noqa: E402

CORPUS = f"hf://datasets/{DATASET}:validation"
SLOW = 150_000.0  # bytes a second: the tiny BioCLIP's 13 MB take about 90 s, until the test has seen the progress
LOADED = ("(sel) => { const imgs = [...document.querySelectorAll(sel)];"
          " return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0); }")
DOWNLOADING = re.compile(r"downloading bioclip: (\d+\.\d) of (\d+\.\d) MB")


@pytest.fixture(scope="module")
def hub_site(tmp_path_factory):
    hub = profile_hub(tmp_path_factory.mktemp("hub-build"))
    hub.rate = SLOW
    data = tmp_path_factory.mktemp("browser-hub") / "data"
    # the profile's models and photos; only the picture generator is a stand-in (set explicitly)
    server = LiveServer(data, env=child_env(hub.url, data, models="hub-cpu", corpus=CORPUS, generator="standin"))
    yield server, hub
    server.stop()
    hub.stop()


def test_a_first_start_on_the_hub_shows_downloads_then_searches_the_real_collection(playwright, hub_site, shot):
    server, hub = hub_site
    ctx = playwright.chromium.launch_persistent_context(
        tempfile.mkdtemp(prefix="ecolens-chromium-"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 1600})  # every result in view: none waits to load
    try:
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        page.goto(server.url)
        page.wait_for_selector("#search-query textarea")
        # the download's progress, in megabytes, while the hub sends slowly
        page.wait_for_function("(re) => { const m = new RegExp(re).exec(document.querySelector('#prepare-status')"
                               ".innerText); return m && parseFloat(m[1]) > 0; }",  # under way, not at 0.0
                               arg=DOWNLOADING.pattern, timeout=120_000)
        text = page.locator("#prepare-status").inner_text()
        done, total = (float(x) for x in DOWNLOADING.search(text).groups())
        assert text.startswith("Preparing the photo collection, downloading bioclip: ") and done < total, text
        shot(page, "hub-first-start-downloading", full_page=False)
        hub.rate = None
        wait_until_ready(page)
        # what is searched, under which licence, and with which models
        page.wait_for_function("() => document.querySelector('#standin-banner').innerText.includes('12 photos')",
                               timeout=READY_TIMEOUT_MS)
        line = page.locator("#standin-banner summary").inner_text()  # one line; the whole text one click away
        assert line.startswith("12 photos from INQUIRE-Rerank (validation split); searched with bioclip"), line
        page.click("#standin-banner summary")
        banner = page.locator("#standin-banner details p").inner_text()
        assert banner.startswith("12 photos from INQUIRE-Rerank (validation split), under CC BY-NC 4.0 (the dataset "
                                 "card's licence; each photo shows its own licence and rights holder)"), banner
        assert "searched with bioclip, checked by SmolVLM-256M-Instruct" in banner
        assert "your photos" not in banner  # they are INQUIRE's
        # the dataset's benchmark queries, offered as example searches; picking one runs it
        page.locator("#search-examples").wait_for(state="visible")
        page.click("#search-examples input")
        offered = page.get_by_role("option").all_inner_texts()
        assert [o.strip() for o in offered] == list(QUERIES)
        page.get_by_role("option", name=QUERIES[1], exact=True).click()
        page.wait_for_function("() => document.querySelectorAll('#search-gallery .thumbnail-item').length > 0",
                               timeout=120_000)
        assert page.input_value("#search-query textarea") == QUERIES[1]
        assert page.locator("#search-gallery .thumbnail-item").count() == 12
        page.wait_for_function(LOADED, arg="#search-gallery .thumbnail-item img")
        # one pick, one search: nothing says that a search was stopped for another
        assert "stopped" not in page.locator("#search-notices").inner_text()
        assert page.locator("#search-status").inner_text().startswith("Search 1 · 12 photos")
        shot(page, "hub-example-search")
    finally:
        ctx.close()
    assert "Traceback" not in server.log()
