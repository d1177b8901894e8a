"""The user's own photos beside the demo world, added by the command line while the page is open: the
command's output carries the stand-in note, the open page's banner says at its next search what is searched
(demo and own photos, with counts), a new page says it at once, and an own photo without a species is
captioned by its file name. Screenshot: docs/screenshots/own-photos.png.

It adds a photo to the shared test server's catalog, so its file name makes it run after the other browser
tests (pytest runs test files in alphabetical order)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from PIL import Image

from tests.browser.conftest import ROOT, _backend_env
from tests.browser.pages import captions, search

OWN_NAME = "pond-frog-by-the-boathouse.png"
# words the demo catalog records for no photo: the ranking is the pictures' alone. With a word it holds ("frog"),
# hybrid retrieval (issue 35) ranks some 60 photos named by it above every photo only the vectors found, and an
# own photo without a species is one of those
WORDS = "calling at night"
BANNER = "#standin-banner [data-testid=markdown]"  # its text (Gradio keeps a hidden progress timer beside it)


def _ingest(server, folder):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_") and k != "SPACE_ID"}
    env.update(ECOLENS_DATA_DIR=str(server.data_dir), **_backend_env())
    return subprocess.run([sys.executable, "app.py", "ingest", str(folder), "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_own_photos_are_named_and_counted_in_the_banner(server, open_browser, shot, tmp_path):
    page = open_browser()
    search(page, WORDS, preset="Fast")
    demo = server.rows("SELECT count(*) FROM photos")[0][0]
    assert page.locator(BANNER).inner_text().startswith("SYNTHETIC DEMO")
    assert not any("catalog:" in c for c in captions(page)), captions(page)  # no photo brought by its words
    # a photo of our own: the best match with one pixel changed (a new file, so it is not a duplicate), no species
    ranking = server.rows("SELECT s.ranking FROM stages s JOIN requests r ON r.id = s.request_id WHERE s.name = "
                          "'final' ORDER BY s.id DESC LIMIT 1")[0][0]
    best = json.loads(ranking)[0][0]
    path = server.rows("SELECT path FROM photo_details WHERE id = ?", best)[0][0]
    mine = tmp_path / "mine"
    mine.mkdir()
    with Image.open(path) as im:
        own = im.convert("RGB")
    own.putpixel((0, 0), tuple(255 - c for c in own.getpixel((0, 0))))
    own.save(mine / OWN_NAME)
    done = _ingest(server, mine)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # stdout stays one JSON object; the note is among its notices
    said = f"Searching {demo} demo photos and 1 of your photos"
    assert report["notices"][0].startswith(said), report["notices"]
    # the open page: its next search says what is searched now
    search(page, WORDS, preset="Fast")
    page.wait_for_function("(s) => document.querySelector('#standin-banner [data-testid=markdown]')"
                           ".innerText.startsWith(s)",
                           arg=said)
    assert any(c.startswith(OWN_NAME + " · #") for c in captions(page)), captions(page)
    assert not any(c.startswith("photo ") for c in captions(page)), captions(page)
    assert "1 new photo joined the catalog since the last search (added by an ingest) and is searched now" in \
        page.locator("#search-notices").inner_text()
    shot(page, "own-photos")
    # a page opened now says it at once
    fresh = open_browser()
    assert fresh.locator(BANNER).inner_text().startswith(said)
