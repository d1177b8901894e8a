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

from ui import camtrap_present, present
from ui import strings as S
from ui import strings_camtrap as SC
from ui.camtrap_form import CamtrapPage
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
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const map = {'ArrowRight': 'lightbox-next', 'ArrowLeft': 'lightbox-prev', 'm': 'lightbox-mark',
               'Escape': 'lightbox-close', 'i': 'identify-frame', 'e': 'identify-event', 'c': 'identify-confirm'};
  const id = map[ev.key]; if (!id) return;
  const btn = document.getElementById(id); if (!btn || !btn.getClientRects().length) return;
  ev.preventDefault(); ev.stopImmediatePropagation(); btn.click();
}, true);
</script>
"""


def new_view() -> dict[str, Any]:
    # frame: a frame of the shown event's strip, shown instead of the result (None: the result itself)
    return {"items": [], "index": 0, "stages": {}, "query": "", "preset": "", "scale": None, "frame": None,
            "logged_in": False}


def is_marked(marks: Sequence[dict[str, Any]] | None, pid: int) -> bool:
    return any(int(m["id"]) == int(pid) for m in marks or [])


class LightboxHandlers:
    def __init__(self, engine: Any, camtrap: Any = None):
        """`camtrap`: core.camtrap.desk.CamtrapDesk (None: no camera-trap lines, strip or identifying)."""
        self.photos = PhotoFiles(engine)
        self.corpus = engine.corpus
        self.camtrap = CamtrapPage(camtrap)

    def _frame_hit(self, hit: dict[str, Any], frame: int | None) -> dict[str, Any]:
        """The hit shown: the result itself, or a frame of its event picked in the strip."""
        if frame is None or int(frame) == int(hit["id"]):
            return hit
        found = self.corpus.photos([int(frame)])
        if not found:
            return hit
        p = found[0]
        return {"id": int(frame), "path": p.path, "taxon": p.scientific_name, "common_name": p.common_name,
                "observed_on": p.observed_on.isoformat() if p.observed_on else None, "latitude": p.latitude,
                "longitude": p.longitude, "license": p.license, "rights_holder": p.rights_holder}

    def _camtrap(self, shown: dict[str, Any], view: dict[str, Any]):
        """(facts, photo edit, strip update, identify box update, confirm button update, event button update,
        count box update) of the photo shown."""
        facts = self.camtrap.facts([int(shown["id"])]).get(int(shown["id"])) if self.camtrap.desk else None
        if not facts or not camtrap_present.is_camtrap(facts):
            hide = gr.update(visible=False)
            return None, None, gr.update(value=[], visible=False), hide, gr.update(), gr.update(), gr.update()
        edit = self.camtrap.view_edit(facts)
        frames = [int(i) for i in facts.get("event_frame_ids") or []]
        strip = gr.update(value=[], visible=False)
        if len(frames) > 1:
            thumbs, _ = self.photos.files(frames, "thumb", logged_in=bool(view.get("logged_in")))
            times = {i: f.get("timestamp") for i, f in self.camtrap.facts(frames).items()}
            strip = gr.update(value=camtrap_present.strip_items(frames, thumbs, times), visible=True,
                              selected_index=frames.index(int(shown["id"])) if int(shown["id"]) in frames else None)
        species = camtrap_present.species_shown(facts)
        confirm = gr.update(value=SC.CT_ID_CONFIRM.format(name=species or "…"), interactive=bool(species))
        event = gr.update(interactive=bool(facts.get("event_id")))
        count = gr.update(value=camtrap_present.count_shown(facts))  # what Confirm saves: the count known, else 1
        return facts, edit, strip, gr.update(visible=True), confirm, event, count

    def outputs(self, view: dict[str, Any], marks: Sequence[dict[str, Any]] | None):
        """(box, title, photo, info, mark button, photo id, view, event strip, identify box, confirm button,
        event button, count box)."""
        items = view.get("items") or []
        if not items:
            hide = gr.update(visible=False)
            return (hide, "", None, "", gr.update(value=S.MARK), None, view, gr.update(value=[], visible=False),
                    hide, gr.update(), gr.update(), gr.update())
        view["index"] = index = max(0, min(int(view.get("index") or 0), len(items) - 1))
        hit = self._frame_hit(items[index], view.get("frame"))
        facts, edit, strip, identify, confirm, event, count = self._camtrap(hit, view)
        path, gone = self.photos.photo_file(hit["id"], "view", hit.get("matched_detection"), edit,
                                            bool(view.get("logged_in")))
        warn(gone)
        stages = view.get("stages") or {}
        title = (f"<h2 class='lightbox-name'>{escape(present.name_of(hit))}"
                 + (f" <i>({escape(hit['taxon'])})</i>" if hit.get("taxon") and hit.get("common_name") else "")
                 + f"</h2><p class='lightbox-where'>{escape(S.LIGHTBOX_TITLE.format(pos=index + 1, n=len(items)))}"
                 f" · {escape(S.LIGHTBOX_KEYS)}</p>")
        mark = S.MARKED_ON if is_marked(marks, hit["id"]) else S.MARK
        strip_frame = hit is not items[index]  # a frame of the result's event, picked in the strip: no score
        info = present.explanation_html(hit, stages, badges=not strip_frame, scale=view.get("scale"),
                                        picture_url=self.photos.picture_url)
        if strip_frame:
            info = f"<p class='ecolens-ct-frame'>{escape(SC.CT_STRIP_FRAME)}</p>" + info
        if facts:
            people = not view.get("logged_in") and self.photos.people([int(hit["id"])])
            info = (camtrap_present.facts_html(facts)
                    + (f"<p class='ecolens-ct-people'>{escape(SC.CT_PEOPLE_HIDDEN)}</p>" if people else "") + info)
        return (gr.update(visible=True), title, path, info, gr.update(value=mark), int(hit["id"]), view, strip,
                identify, confirm, event, count)

    def open(self, items: Sequence[dict[str, Any]], index: int, stages: dict[str, Any] | None, query: str,
             preset: str, marks: Sequence[dict[str, Any]] | None, scale: str | None = None,
             logged_in: bool = False):
        """Show photo `index` of `items` (result hit dicts) with the badges found in `stages`; scores on
        `scale` (default: the one the stages call for, as in the gallery it was opened from)."""
        view = {**new_view(), "items": list(items), "index": int(index), "stages": dict(stages or {}),
                "query": query or "", "preset": preset or "", "scale": scale, "logged_in": logged_in}
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
                         state.get("preset") or S.method_name(state.get("method", "")), marks, state.get("scale"),
                         bool(state.get("logged_in")))

    def move(self, delta: int, shown: Any, view: dict[str, Any] | None, marks):
        """The previous (-1) or next (+1) photo of the gallery, counted from the photo on screen (`shown`)."""
        view = dict(view or new_view())
        items = view.get("items") or []
        pid = read_photo_id(shown)
        at = next((i for i, h in enumerate(items) if int(h["id"]) == pid), view.get("index", 0))
        view["index"] = max(0, min(at + int(delta), len(items) - 1)) if items else 0
        view["frame"] = None
        return self.outputs(view, marks)

    def show_frame(self, view: dict[str, Any] | None, marks, evt: gr.SelectData):
        """A click in the event's strip: that frame in the photo view (previous / next still move through
        the results)."""
        view = dict(view or new_view())
        items = view.get("items") or []
        if not items:
            return self.outputs(view, marks)
        frames = self.camtrap.facts([int(items[view.get("index", 0)]["id"])])
        ids = next(iter(frames.values()), {}).get("event_frame_ids") or []
        index = self._index(evt)
        view["frame"] = int(ids[index]) if index is not None and index < len(ids) else None
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
                    # a camera-trap event's frames (shown for events of two or more frames)
                    self.strip = gr.Gallery(label=SC.CT_STRIP, visible=False, elem_id="lightbox-strip", columns=8,
                                            height=210, allow_preview=False, object_fit="contain", buttons=[])
                    # a person's identification of the frame or its event (ui.identify_handlers)
                    with gr.Group(visible=False, elem_id="lightbox-identify") as self.identify:
                        with gr.Row():
                            self.species = gr.Textbox(label=SC.CT_ID_SPECIES, elem_id="identify-species", scale=3)
                            # 1 for an animal (0 is refused but for 'blank'; emptied: no count said)
                            self.count = gr.Number(1, label=SC.CT_ID_COUNT, precision=0, minimum=0,
                                                   elem_id="identify-count", scale=1, min_width=90)
                            self.who = gr.Textbox(label=SC.CT_ID_WHO, elem_id="identify-annotator", scale=2)
                        with gr.Row():
                            self.id_frame = gr.Button(SC.CT_ID_PHOTO, elem_id="identify-frame", size="sm")
                            self.id_event = gr.Button(SC.CT_ID_EVENT, elem_id="identify-event", size="sm")
                            self.id_confirm = gr.Button(SC.CT_ID_CONFIRM.format(name="…"), elem_id="identify-confirm",
                                                        size="sm", variant="primary")
                        gr.Markdown(SC.CT_ID_KEYS, elem_id="identify-keys")
                with gr.Column(scale=2, min_width=260):
                    self.info = gr.HTML("", elem_id="lightbox-info")
            self.photo_id = gr.Number(None, visible=False, elem_id="lightbox-photo-id", precision=0)
        self.outputs = [self.box, self.title, self.photo, self.info, self.mark, self.photo_id, self.view, self.strip,
                        self.identify, self.id_confirm, self.id_event, self.count]
        quick = dict(api_visibility="private", show_progress="hidden", trigger_mode="multiple")
        self.prev.click(lambda s, v, m: h.move(-1, s, v, m), [self.photo_id, self.view, marks], self.outputs, **quick)
        self.next.click(lambda s, v, m: h.move(1, s, v, m), [self.photo_id, self.view, marks], self.outputs, **quick)
        self.close_btn.click(h.close, None, self.box, **quick)
        self.strip.select(h.show_frame, [self.view, marks], self.outputs, api_visibility="private",
                          show_progress="hidden")

    def opens_from(self, gallery: gr.Gallery, state: gr.State) -> None:
        """A click in `gallery` (whose `state` has hits, stages, query, preset) opens this photo view."""
        gallery.select(self.h.from_results, [state, self.marks], self.outputs, api_visibility="private",
                       show_progress="hidden")
