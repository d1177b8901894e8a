"""The photo view (a lightbox over the page): one photo of a gallery at full size with its yes/no badges,
score, metadata, licence and attribution; previous / next through the same gallery's results (buttons or
the arrow keys), Mark, More like this and Close (Esc). Every gallery opens it the same way, with its own
results: LightboxHandlers.open(items, index, stages, query, preset, marks).

Each button press sends the id of the photo on screen, so a press always acts on the photo the user saw,
however fast the keys come (KEYS_JS only clicks the buttons)."""
from __future__ import annotations

from html import escape
from typing import Any, Sequence

import gradio as gr

from ui import present
from ui import strings as S
from ui.forms import photo_id as read_photo_id
from ui.forms import warn
from ui.photos import PhotoFiles

# why: keys go to the page; typing in a text box must not move the photo view
KEYS_JS = """
<script>
document.addEventListener('keydown', (ev) => {
  const t = ev.target; const tag = (t && t.tagName || '').toLowerCase();
  if (tag === 'input' || tag === 'textarea' || (t && t.isContentEditable)) return;
  const box = document.querySelector('#lightbox');
  if (!box || !box.getClientRects().length) return;  // fixed: no offsetParent
  const map = {'ArrowRight': 'lightbox-next', 'ArrowLeft': 'lightbox-prev', 'm': 'lightbox-mark',
               'Escape': 'lightbox-close'};
  const id = map[ev.key]; if (!id) return;
  const btn = document.getElementById(id); if (!btn) return;
  ev.preventDefault(); ev.stopImmediatePropagation(); btn.click();
}, true);
</script>
"""


def new_view() -> dict[str, Any]:
    return {"items": [], "index": 0, "stages": {}, "query": "", "preset": "", "scale": None}


def is_marked(marks: Sequence[dict[str, Any]] | None, pid: int) -> bool:
    return any(int(m["id"]) == int(pid) for m in marks or [])


class LightboxHandlers:
    def __init__(self, engine: Any):
        self.photos = PhotoFiles(engine)

    def outputs(self, view: dict[str, Any], marks: Sequence[dict[str, Any]] | None):
        """(box, title, photo, info, mark button, photo id, view)."""
        items = view.get("items") or []
        if not items:
            return gr.update(visible=False), "", None, "", gr.update(value=S.MARK), None, view
        view["index"] = index = max(0, min(int(view.get("index") or 0), len(items) - 1))
        hit = items[index]
        path, gone = self.photos.photo_file(hit["id"], "view", hit.get("matched_detection"))
        warn(gone)
        stages = view.get("stages") or {}
        title = (f"<h2 class='lightbox-name'>{escape(present.name_of(hit))}"
                 + (f" <i>({escape(hit['taxon'])})</i>" if hit.get("taxon") and hit.get("common_name") else "")
                 + f"</h2><p class='lightbox-where'>{escape(S.LIGHTBOX_TITLE.format(pos=index + 1, n=len(items)))}"
                 f" · {escape(S.LIGHTBOX_KEYS)}</p>")
        mark = S.MARKED_ON if is_marked(marks, hit["id"]) else S.MARK
        info = present.explanation_html(hit, stages, scale=view.get("scale"), picture_url=self.photos.picture_url)
        return gr.update(visible=True), title, path, info, gr.update(value=mark), int(hit["id"]), view

    def open(self, items: Sequence[dict[str, Any]], index: int, stages: dict[str, Any] | None, query: str,
             preset: str, marks: Sequence[dict[str, Any]] | None, scale: str | None = None):
        """Show photo `index` of `items` (result hit dicts) with the badges found in `stages`; scores on
        `scale` (default: the one the stages call for, as in the gallery it was opened from)."""
        view = {"items": list(items), "index": int(index), "stages": dict(stages or {}), "query": query or "",
                "preset": preset or "", "scale": scale}
        return self.outputs(view, marks)

    @staticmethod
    def _index(evt: Any) -> int | None:
        index = getattr(evt, "index", None)
        if isinstance(index, (list, tuple)):
            index = index[0] if index else None
        return index if isinstance(index, int) else None

    def from_results(self, state: dict[str, Any] | None, marks, evt: gr.SelectData):
        """A click in a gallery whose state holds hits, stages, query and preset (Search, History)."""
        state = state or {}
        index = self._index(evt)
        if index is None or index >= len(state.get("hits") or []):
            return self.outputs(new_view(), marks)
        return self.open(state["hits"], index, state.get("stages"), state.get("query", ""),
                         state.get("preset") or S.method_name(state.get("method", "")), marks, state.get("scale"))

    def move(self, delta: int, shown: Any, view: dict[str, Any] | None, marks):
        """The previous (-1) or next (+1) photo of the gallery, counted from the photo on screen (`shown`)."""
        view = dict(view or new_view())
        items = view.get("items") or []
        pid = read_photo_id(shown)
        at = next((i for i, h in enumerate(items) if int(h["id"]) == pid), view.get("index", 0))
        view["index"] = max(0, min(at + int(delta), len(items) - 1)) if items else 0
        return self.outputs(view, marks)

    @staticmethod
    def close():
        return gr.update(visible=False)


class LightboxView:
    """The lightbox's components (built once per page, outside the tabs) and how a gallery opens it."""

    def __init__(self, h: LightboxHandlers, marks: gr.State):
        self.h, self.marks = h, marks
        self.view = gr.State(new_view())
        with gr.Column(visible=False, elem_id="lightbox", elem_classes=["ecolens-lightbox"]) as self.box:
            with gr.Row(equal_height=False):
                self.title = gr.HTML("", elem_id="lightbox-title")
                self.close_btn = gr.Button(S.LIGHTBOX_CLOSE, elem_id="lightbox-close", size="sm", scale=0,
                                           min_width=90)
            with gr.Row(equal_height=False):
                with gr.Column(scale=3, min_width=280):
                    self.photo = gr.Image(show_label=False, elem_id="lightbox-photo", interactive=False,
                                          height=560, buttons=["fullscreen", "download"])
                    with gr.Row():
                        self.prev = gr.Button(S.LIGHTBOX_PREV, elem_id="lightbox-prev", size="sm", min_width=80)
                        self.mark = gr.Button(S.MARK, elem_id="lightbox-mark", variant="primary", size="sm",
                                              min_width=80)
                        self.more = gr.Button(S.MORE_LIKE_THIS, elem_id="lightbox-more", size="sm", min_width=80)
                        self.next = gr.Button(S.LIGHTBOX_NEXT, elem_id="lightbox-next", size="sm", min_width=80)
                with gr.Column(scale=2, min_width=260):
                    self.info = gr.HTML("", elem_id="lightbox-info")
            self.photo_id = gr.Number(None, visible=False, elem_id="lightbox-photo-id", precision=0)
        self.outputs = [self.box, self.title, self.photo, self.info, self.mark, self.photo_id, self.view]
        quick = dict(api_visibility="private", show_progress="hidden", trigger_mode="multiple")
        self.prev.click(lambda s, v, m: h.move(-1, s, v, m), [self.photo_id, self.view, marks], self.outputs, **quick)
        self.next.click(lambda s, v, m: h.move(1, s, v, m), [self.photo_id, self.view, marks], self.outputs, **quick)
        self.close_btn.click(h.close, None, self.box, **quick)

    def opens_from(self, gallery: gr.Gallery, state: gr.State) -> None:
        """A click in `gallery` (whose `state` has hits, stages, query, preset) opens this photo view."""
        gallery.select(self.h.from_results, [state, self.marks], self.outputs, api_visibility="private",
                       show_progress="hidden")
