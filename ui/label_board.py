"""The labelling grid ("board"): every photo of the query as a tile with its judgement, the cursor, and a ✓ / ✗
on each tile, drawn as HTML (render) and driven by a small script (BOARD_JS).

Why a script: keys come faster than the server answers. The page keeps the presses (keys, buttons, tile
clicks) in a queue and sends the next one only when the answer to the previous one has arrived, each with the
id of the photo it is meant for, so a fast typist's labels land on the photos they saw, in order."""
from __future__ import annotations

from html import escape
from typing import Any, Sequence

from ui import camtrap_present, present
from ui import strings as S
from ui.photos import file_url

STATE_CLASS = {1: "is-rel", 0: "is-non", -1: "is-skip"}

# runs once when the board is first shown (gr.HTML js_on_load: element, trigger, props, watch)
BOARD_JS = """
if (element.dataset.ecolensBound) return;
element.dataset.ecolensBound = '1';
const queue = []; let seq = 0; let busy = false; let timer = null;
const board = () => element.querySelector('.lb-board');
function send() {
  if (busy || !queue.length) return;
  const b = board(); const p = queue.shift();
  // the photo the press is meant for: the tile clicked, else the one under the cursor now (0: none left)
  const id = p.id !== null ? p.id : Number((b && b.dataset.cursor) || 0);
  busy = true; seq += 1;
  trigger('select', {index: id, value: {action: p.act, seq: seq}});
  clearTimeout(timer);
  timer = setTimeout(() => { busy = false; send(); }, 8000);  // no answer (an error was shown): go on
}
watch('value', () => {
  const b = board();
  if (b && Number(b.dataset.seq || 0) < seq) return;  // an older answer (a reload): keep waiting
  clearTimeout(timer); busy = false; send();
});
function press(act, id) {
  queue.push({act: act, id: (id === undefined ? null : id)});
  const b = board(); if (b) b.classList.add('is-busy');
  send();
}
element.addEventListener('click', (ev) => {
  const tile = ev.target.closest('.lb-tile'); if (!tile) return;
  const btn = ev.target.closest('[data-act]');
  ev.preventDefault();
  press(btn ? btn.dataset.act : 'goto', Number(tile.dataset.id));
});
window.ecolensLabel = {press: press, pending: () => queue.length + (busy ? 1 : 0)};
"""

# keys of the label tab, in the page head: they go to the board's queue; typing in a text box never labels
HOTKEYS_JS = """
<script>
document.addEventListener('keydown', (ev) => {
  const t = ev.target; const tag = (t && t.tagName || '').toLowerCase();
  if (tag === 'input' || tag === 'textarea' || (t && t.isContentEditable)) return;
  const tab = document.querySelector('#label-view');
  if (!tab || tab.offsetParent === null || !window.ecolensLabel) return;
  const box = document.querySelector('#lightbox'); if (box && box.getClientRects().length) return;
  const map = {'1': '1', '0': '0', 's': 's', 'u': 'undo', 'n': 'unjudged', 'ArrowRight': 'next',
               'ArrowLeft': 'prev'};
  let act = map[ev.key];
  if ((ev.ctrlKey || ev.metaKey) && ev.key === 'z') act = 'undo';
  else if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (!act) return;
  ev.preventDefault(); window.ecolensLabel.press(act);
});
</script>
"""


def press_js(action: str) -> str:
    """What a label button does in the page: put its action in the board's queue."""
    return f"() => {{ if (window.ecolensLabel) window.ecolensLabel.press('{action}'); }}"


def render(items: Sequence[dict[str, Any]], thumbs: Sequence[str], done: dict[str, int], cursor: int | None,
           seq: int) -> str:
    """The board's HTML: one tile per photo (number, species, judgement, ✓ / ✗), the cursor on photo index
    `cursor` (None: every photo judged, no cursor), `seq` the last press answered."""
    if not items:
        return f"<div class='lb-board lb-empty' data-seq='{int(seq)}' data-cursor=''></div>"
    cursor_id = items[cursor]["id"] if cursor is not None and 0 <= cursor < len(items) else ""
    tiles = []
    for i, (hit, thumb) in enumerate(zip(items, thumbs)):
        label = done.get(str(hit["id"]))
        name = present.name_of(hit)
        frames = len(hit.get("event_frame_ids") or [])
        if frames > 1:  # an event card (a search with one result per event): the label goes to every frame
            name = f"{name} · {camtrap_present.frames_text(frames)}"
        state = S.LABEL_NAMES.get(label, S.UNJUDGED) if label is not None else S.UNJUDGED
        classes = " ".join(c for c in ("lb-tile", "is-cur" if i == cursor else "", STATE_CLASS.get(label, "")) if c)
        tiles.append(
            f"<div class='{classes}' data-id='{int(hit['id'])}' data-index='{i}' role='group' "
            f"aria-label='{escape(f'photo {i + 1}: {name}, {state}', quote=True)}'>"
            f"<img src='{escape(file_url(thumb), quote=True)}' alt='{escape(name, quote=True)}' loading='lazy'>"
            f"<span class='lb-num'>{i + 1}</span><span class='lb-state'>{escape(state)}</span>"
            f"<div class='lb-cap'>{escape(name)}</div>"
            f"<div class='lb-acts'><button type='button' class='lb-yes' data-act='1' "
            f"title='{escape(S.RELEVANT, quote=True)}'>✓</button><button type='button' class='lb-no' "
            f"data-act='0' title='{escape(S.NOT_RELEVANT, quote=True)}'>✗</button></div></div>")
    return (f"<div class='lb-board' data-seq='{int(seq)}' data-cursor='{cursor_id}'>" + "".join(tiles)
            + "</div>")
