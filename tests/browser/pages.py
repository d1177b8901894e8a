"""What the browser tests do on a page, in one place: switch tabs, search and wait for the end, open the photo
view, load a query in Label, read colour contrast (WCAG) of the text on screen, and wait for the page (or a
condition outside it) instead of sleeping a fixed time."""
from __future__ import annotations

import time

QUERY = "a frog calling at night"

# every visible text node whose colour contrast with its (blended) background is under WCAG AA (4.5:1; 3:1 for
# large text); text over photos is in captions with their own background, so it is checked too
CONTRAST_JS = """
(rootSel) => {
  const root = document.querySelector(rootSel) || document.body;
  const parse = (c) => { const m = (c || '').match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(parseFloat);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = (c) => { const f = (v) => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const background = (el) => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; } }
    let out = {r: 255, g: 255, b: 255};
    for (let i = layers.length - 1; i >= 0; i--) { const c = layers[i];
      out = {r: c.r * c.a + out.r * (1 - c.a), g: c.g * c.a + out.g * (1 - c.a), b: c.b * c.a + out.b * (1 - c.a)}; }
    return out; };
  const bad = []; const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) { const t = walker.currentNode; const text = t.textContent.trim(); if (!text) continue;
    const el = t.parentElement; if (!el || !el.getClientRects().length) continue;
    const st = getComputedStyle(el); if (st.visibility === 'hidden' || parseFloat(st.opacity) === 0) continue;
    if (el.closest('[aria-hidden=true], footer')) continue;
    const b = background(el); const fg = parse(st.color); if (!fg) continue;
    const f = {r: fg.r * fg.a + b.r * (1 - fg.a), g: fg.g * fg.a + b.g * (1 - fg.a), b: fg.b * fg.a + b.b * (1 - fg.a)};
    const l1 = lum(f), l2 = lum(b); const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(st.fontSize); const bold = parseInt(st.fontWeight) >= 700;
    if (ratio < ((size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5))
      bad.push(text.slice(0, 60) + ' (' + ratio.toFixed(2) + ':1, ' + st.color + ')');
  }
  return bad;
}
"""


def tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()


# one element of each tab that is on screen once the tab is shown
TAB_LANDMARKS = {"Search": "#search-query", "Dialogue": "#dialogue-start-text", "Compare": "#compare-query",
                 "Label": "#label-query", "History": "#history-sessions"}

# true when the boxes of the given elements are where they were at the previous poll and no finite animation
# or transition is running: the layout has come to rest
SETTLED_JS = """
(sels) => {
  const key = sels.map((s) => { const e = document.querySelector(s); if (!e) return 'absent';
    const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].join(','); }).join('|');
  const moving = document.getAnimations().some((a) => a.playState === 'running'
    && Number.isFinite(a.effect && a.effect.getComputedTiming().endTime));
  const still = !moving && window.__settledKey === key;
  window.__settledKey = key;
  return still;
}
"""


def wait_settled(page, *selectors: str) -> None:
    """Wait until the elements of `selectors` stop moving and no transition runs (polled every 100 ms)."""
    page.evaluate("() => { window.__settledKey = null; }")
    page.wait_for_function(SETTLED_JS, arg=list(selectors), polling=100)


def show_tab(page, name: str) -> None:
    """Switch to tab `name` and wait until its content is on screen and at rest."""
    tab(page, name)
    landmark = TAB_LANDMARKS[name]
    page.locator(landmark).wait_for(state="visible")
    wait_settled(page, landmark)


def wait_until(condition, what: str, timeout_s: float = 30.0, poll_s: float = 0.1):
    """Poll `condition()` (e.g. a database query) until it returns something true, and return that; fail
    with `what` after `timeout_s`. For conditions outside the page; on the page use Playwright's waits."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


def wait_searched(page, n: int) -> None:
    page.wait_for_function("(n) => { const t = document.querySelector('#search-status').innerText;"
                           " return t.includes('Search ' + n)"
                           " && / done in (?:under )?[0-9.]+ s$/.test(t.trim()); }", arg=n)


def search(page, query: str = QUERY, preset: str = "Fast") -> float:
    """Search from the Search tab and wait for the final results; returns the seconds to the first update."""
    page.fill("#search-query textarea", query)
    page.click(f"#search-preset label:has-text('{preset}')")
    searches = page.evaluate("window.__searches = (window.__searches || 0) + 1")
    t0 = time.perf_counter()
    page.click("#search-button")
    page.wait_for_function("(n) => document.querySelector('#search-status').innerText.includes('Search ' + n)",
                           arg=searches)
    first = time.perf_counter() - t0
    page.wait_for_selector("#search-gallery .thumbnail-item img")
    wait_searched(page, searches)
    return first


def captions(page, gallery: str = "#search-gallery") -> list[str]:
    return page.eval_on_selector_all(f"{gallery} .thumbnail-item .caption-label", "els => els.map(e => e.innerText)")


def open_photo(page, gallery: str, index: int) -> None:
    """Click photo `index` of a gallery and wait for the photo view to show it at full size."""
    page.locator(f"{gallery} .thumbnail-item").nth(index).click()
    page.wait_for_function("(n) => { const t = document.querySelector('#lightbox-title');"
                           " return t && t.getClientRects().length && t.innerText.includes('Photo ' + n + ' of'); }",
                           arg=index + 1)
    page.wait_for_function("() => { const i = document.querySelector('#lightbox-photo img');"
                           " return i && i.complete && i.naturalWidth > 0; }")


def lightbox_key(page, key: str, expect: str) -> None:
    """Press a key with the photo view open (focus on the page, not a text box) and wait for `expect`."""
    page.locator("#lightbox-title").click()
    page.keyboard.press(key)
    page.wait_for_function("(s) => document.querySelector('#lightbox').innerText.includes(s)", arg=expect)


def close_photo(page) -> None:
    page.locator("#lightbox-title").click()
    page.keyboard.press("Escape")
    page.wait_for_function("() => { const b = document.querySelector('#lightbox');"
                           " return !b || !b.getClientRects().length; }")


def load_labels(page, annotator: str, query: str = QUERY, k: int = 8, enter: bool = False) -> None:
    """Load a query's photos in the Label tab (with the button, or Enter in the query box)."""
    tab(page, "Label")
    page.fill("#label-annotator textarea, #label-annotator input", annotator)
    page.fill("#label-k input[type=number]", str(k))
    page.fill("#label-query textarea, #label-query input", query)
    if enter:
        page.press("#label-query textarea, #label-query input", "Enter")
    else:
        page.click("#label-load")
    page.wait_for_function("(k) => document.querySelectorAll('#label-board .lb-tile').length === k", arg=k)
    page.wait_for_function("document.querySelector('#label-progress').innerText.includes(' judged')")


def progress_starts(page, text: str) -> None:
    page.wait_for_function("(s) => document.querySelector('#label-progress').innerText.startsWith(s)", arg=text)


def press(page, key: str, expect_done: int | None = None) -> None:
    page.locator("#label-hotkeys-help").click()  # focus the page, not a text box
    page.keyboard.press(key)
    if expect_done is not None:
        progress_starts(page, f"{expect_done} of")
