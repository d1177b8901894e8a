"""The Filters panel's map: where the collection's photos are (a sample of their places as dots), and the place
box drawn on it or typed in the box field, each following the other. Leaflet comes from the npm registry
(scripts/fetch_leaflet.py puts it in assets/vendor/leaflet) and is inlined into the page's head, so nothing is
asked of a CDN; without a tile server (`map_tiles_url`, empty by default) the map is a plain background with
a 30-degree grid, and it works offline. Without Leaflet the panel says the map is not installed and how to
install it; the box field works either way.

Drawing: "Draw a box" then drag on the map; the box's west, south, east, north go into the place box field
(rounded to 4 decimals, clamped to -180..180 and -90..90) as if typed, and the next search is filtered by it.
Typing a box in the field draws it on the map."""
from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any, Sequence

from ui import strings as S

LEAFLET_DIR = Path(__file__).resolve().parents[1] / "assets" / "vendor" / "leaflet"


def leaflet_installed(folder: Path = LEAFLET_DIR) -> bool:
    return (folder / "leaflet.js").is_file() and (folder / "leaflet.css").is_file()


def head(folder: Path = LEAFLET_DIR) -> str:
    """Leaflet's stylesheet and script inlined (none when it is not installed) and the map's own script."""
    if not leaflet_installed(folder):
        return MAP_JS
    css = (folder / "leaflet.css").read_text(encoding="utf-8")
    js = (folder / "leaflet.js").read_text(encoding="utf-8").replace("</script", "<\\/script")
    return f"<style>{css}</style>\n<script>{js}</script>\n{MAP_JS}"


def map_html(points: Sequence[tuple[float, float]], tiles: str = "", attribution: str = "",
             installed: bool | None = None) -> str:
    """The map's container, its points and options as JSON for MAP_JS (HTML set by innerHTML runs no script:
    the page's own script finds the container and draws the map)."""
    if not (leaflet_installed() if installed is None else installed):
        return f"<p class='ecolens-map-missing'>{escape(S.MAP_MISSING)}</p>"
    data = {"points": [[round(float(a), 4), round(float(b), 4)] for a, b in points], "tiles": tiles,
            "attribution": attribution}
    payload = json.dumps(data).replace("<", "\\u003c")
    note = S.MAP_POINTS.format(n=len(points)) if len(points) else S.MAP_NO_POINTS
    note += "" if tiles else " " + S.MAP_PLAIN
    return (f"<div class='ecolens-map'><div class='ecolens-map-bar'><button type='button' "
            f"class='ecolens-map-draw'>{escape(S.MAP_DRAW)}</button><span class='ecolens-map-note'>"
            f"{escape(note)}</span></div><div class='ecolens-map-canvas' role='application' "
            f"aria-label='{escape(S.MAP_LABEL, quote=True)}'></div>"
            f"<script type='application/json' class='ecolens-map-data'>{payload}</script></div>")


def panel(corpus: Any, settings: Any, limit: int = 2000) -> str:
    """map_html for the catalog now (its places are asked on every page load, so new photos show)."""
    return map_html(corpus.places(limit), settings.map_tiles_url, settings.map_tiles_attribution)


# Finds each map container the page shows (also after a page load replaces it), draws the map once Leaflet
# and the container are there, keeps it sized while the Filters panel opens, and keeps box and field in step.
MAP_JS = """
<script>
(() => {
  const FIELD = '#filter-bbox textarea, #filter-bbox input';
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  const init = (el) => {
    if (el.__ecolensMap || !window.L) return;
    const canvas = el.querySelector('.ecolens-map-canvas'); const raw = el.querySelector('.ecolens-map-data');
    if (!canvas || !raw) return;
    const data = JSON.parse(raw.textContent);
    const map = L.map(canvas, {minZoom: 1, maxZoom: 16, worldCopyJump: false, attributionControl: !!data.tiles,
                               boxZoom: false});
    el.__ecolensMap = map;
    if (data.tiles) {
      L.tileLayer(data.tiles, {maxZoom: 16, attribution: data.attribution || ''}).addTo(map);
    } else {
      const grid = {color: '#aab4be', weight: 1, interactive: false};
      for (let lat = -60; lat <= 60; lat += 30) L.polyline([[lat, -180], [lat, 180]], grid).addTo(map);
      for (let lon = -180; lon <= 180; lon += 30) L.polyline([[-85, lon], [85, lon]], grid).addTo(map);
    }
    const dots = L.featureGroup(data.points.map((p) => L.circleMarker(p, {radius: 3, color: '#0b6e4f',
      weight: 1, fillOpacity: 0.6, interactive: false}))).addTo(map);
    const fit = () => {
      if (data.points.length) map.fitBounds(dots.getBounds().pad(0.3)); else map.setView([20, 0], 1); };
    let touched = false;  // once the user moves or zooms the map, a resize keeps their view
    canvas.addEventListener('wheel', () => { touched = true; }, {passive: true});
    canvas.addEventListener('mousedown', () => { touched = true; });
    new ResizeObserver(() => { if (!canvas.offsetWidth) return; map.invalidateSize(); if (!touched) fit(); })
      .observe(canvas);
    let rect = null;
    const show = (w, s, e, n) => { if (rect) rect.remove();
      rect = L.rectangle([[s, w], [n, e]], {color: '#b03a2e', weight: 2, fillOpacity: 0.08, interactive: false});
      rect.addTo(map); };
    const fromField = () => { const f = document.querySelector(FIELD); if (!f) return;
      const p = f.value.replace(/;/g, ',').split(',').map((x) => parseFloat(x));
      if (p.length === 4 && p.every(Number.isFinite)) show(p[0], p[1], p[2], p[3]);
      else if (rect) { rect.remove(); rect = null; } };
    const write = (w, s, e, n) => { const f = document.querySelector(FIELD); if (!f) return;
      f.value = [w, s, e, n].map((v) => v.toFixed(4)).join(', ');
      f.dispatchEvent(new Event('input', {bubbles: true})); f.dispatchEvent(new Event('change', {bubbles: true})); };
    document.addEventListener('input', (ev) => {
      if (ev.target && ev.target.matches && ev.target.matches(FIELD)) fromField(); }, true);
    fromField();
    const btn = el.querySelector('.ecolens-map-draw');
    let drawing = false, start = null;
    const mode = (on) => { drawing = on; start = null; btn.classList.toggle('active', on);
      btn.setAttribute('aria-pressed', on ? 'true' : 'false');
      if (on) map.dragging.disable(); else map.dragging.enable(); };
    btn.addEventListener('click', (ev) => { ev.preventDefault(); mode(!drawing); });
    const corners = (a, b) => [clamp(Math.min(a.lng, b.lng), -180, 180), clamp(Math.min(a.lat, b.lat), -90, 90),
                               clamp(Math.max(a.lng, b.lng), -180, 180), clamp(Math.max(a.lat, b.lat), -90, 90)];
    map.on('mousedown', (ev) => { if (drawing) start = ev.latlng; });
    map.on('mousemove', (ev) => { if (drawing && start) show(...corners(start, ev.latlng)); });
    map.on('mouseup', (ev) => { if (!drawing || !start) return; const box = corners(start, ev.latlng); mode(false);
      if (box[2] - box[0] > 0 && box[3] - box[1] > 0) { show(...box); write(...box); } });
  };
  const scan = () => document.querySelectorAll('.ecolens-map').forEach(init);
  new MutationObserver(scan).observe(document.documentElement, {childList: true, subtree: true});
  document.addEventListener('DOMContentLoaded', scan);
})();
</script>
"""
