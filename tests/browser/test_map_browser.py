"""The Filters map in Chromium against the real server: Leaflet (committed from the npm registry, inlined: no
CDN) shows where the collection's photos are on a plain grid (no tile server is set, nothing is fetched
from elsewhere); drawing a box on it fills the place box field, and the next search keeps only photos inside
that box; a box typed in the field is drawn on the map."""
from __future__ import annotations

import json

from tests.browser.pages import search
from ui.place_map import leaflet_installed


def test_a_box_drawn_on_the_map_filters_the_search(server, open_browser, shot):
    assert leaflet_installed(), ("Leaflet is missing: restore assets/vendor/leaflet (committed; "
                                 "scripts/fetch_leaflet.py checks it)")
    page = open_browser()
    outside = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:",
                                                                                 "blob:")) else None)
    page.click("#search-filters button, #search-filters .label-wrap")
    canvas = page.locator("#filter-map .ecolens-map-canvas.leaflet-container")
    canvas.wait_for()
    page.wait_for_function("() => document.querySelectorAll('#filter-map .leaflet-overlay-pane path').length > 100")
    note = page.locator("#filter-map .ecolens-map-note").inner_text()
    everywhere = server.rows("SELECT count(*) FROM photos WHERE latitude IS NOT NULL")[0][0]
    assert everywhere == 480 + 47  # the world's photos and its camera-trap card's frames
    assert f"Dots: where {everywhere} of the collection's photos were taken" in note and "plain grid" in note
    page.click("#filter-map .ecolens-map-draw")
    canvas.scroll_into_view_if_needed()  # the mouse acts in the viewport only
    # a box around the left third of the dots (the demo world's places lie in a few clusters)
    dots = page.evaluate("() => [...document.querySelectorAll('#filter-map .leaflet-overlay-pane path')]"
                         ".filter((p) => p.getAttribute('stroke') === '#0b6e4f').map((p) => { "
                         "const r = p.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })")
    xs, ys = [x for x, _ in dots], [y for _, y in dots]
    x0, y0 = min(xs) - 8, min(ys) - 8
    x1, y1 = min(xs) + (max(xs) - min(xs)) * 0.3, max(ys) + 8
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=5)
    page.mouse.move(x1, y1, steps=5)
    page.mouse.up()
    page.wait_for_function("() => document.querySelector('#filter-bbox textarea').value.split(',').length === 4")
    west, south, east, north = (float(v) for v in page.input_value("#filter-bbox textarea").split(","))
    assert west < east and south < north
    shot(page, "map-box")
    search(page, "a frog calling at night", preset="Fast")
    ranked = server.rows("SELECT s.ranking FROM stages s JOIN requests r ON r.id = s.request_id WHERE s.name = "
                         "'final' ORDER BY s.id DESC LIMIT 1")[0][0]
    ids = [i for i, _ in json.loads(ranked)]
    assert ids, "the box holds photos: the search should find some"
    places = server.rows(f"SELECT latitude, longitude FROM photos WHERE id IN ({','.join(map(str, ids))})")
    assert all(south <= lat <= north and west <= lon <= east for lat, lon in places)
    total = server.rows("SELECT count(*) FROM photos WHERE latitude BETWEEN ? AND ? AND longitude BETWEEN ? AND ?",
                        south, north, west, east)[0][0]
    assert len(ids) == min(20, total) and total < everywhere  # the box narrowed the pool
    # typed in the field, a box is drawn on the map
    page.fill("#filter-bbox textarea", "-140, -60, -120, -30")
    page.wait_for_function("() => [...document.querySelectorAll('#filter-map .leaflet-overlay-pane path')]"
                           ".some((p) => p.getAttribute('stroke') === '#b03a2e')")
    assert not outside, f"the map asked for something off this server: {outside[:3]}"
