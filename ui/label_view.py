"""Label view layout and wiring: one query, photos one at a time (or as a grid), hotkeys, annotator, progress,
exports and agreement. The hotkeys script (HOTKEYS_JS) clicks the buttons by their elem_id."""
from __future__ import annotations

import gradio as gr

from ui import strings as S
from ui.label_handlers import EXPORT_SUFFIX, LabelHandlers, new_label_state

# why: keys go to the page, not to a component; typing in a text box must not label anything
HOTKEYS_JS = """
<script>
document.addEventListener('keydown', (ev) => {
  const t = ev.target; const tag = (t && t.tagName || '').toLowerCase();
  if (tag === 'input' || tag === 'textarea' || (t && t.isContentEditable)) return;
  const tab = document.querySelector('#label-view');
  if (!tab || tab.offsetParent === null) return;
  const map = {'1': 'label-relevant', '0': 'label-not-relevant', 's': 'label-skip',
               'ArrowRight': 'label-next', 'ArrowLeft': 'label-prev'};
  const id = map[ev.key]; if (!id) return;
  const btn = document.getElementById(id); if (!btn) return;
  ev.preventDefault(); btn.click();
});
</script>
"""


def build(h: LabelHandlers, search_state: gr.State) -> gr.Textbox:
    """Lay out the label tab; returns the annotator box (filled from the Hugging Face login on a Space)."""
    st = gr.State(new_label_state())
    with gr.Column(elem_id="label-view"):
        with gr.Row():
            annotator = gr.Textbox(label=S.ANNOTATOR, elem_id="label-annotator", scale=2)
            query = gr.Textbox(label=S.LABEL_QUERY, elem_id="label-query", scale=4)
            k = gr.Slider(5, 200, value=h.engine.settings.k, step=1, label=S.K, elem_id="label-k", scale=2)
        with gr.Row():
            load = gr.Button(S.LABEL_LOAD, variant="primary", elem_id="label-load")
            from_search = gr.Button(S.LABEL_FROM_SEARCH, elem_id="label-from-search")
        progress = gr.Markdown(S.LABEL_NOTHING, elem_id="label-progress")
        gr.Markdown(S.HOTKEYS, elem_id="label-hotkeys-help")
        with gr.Row():
            with gr.Column(scale=3):
                photo = gr.Image(label=None, show_label=False, elem_id="label-photo", height=460, interactive=False)
                with gr.Row():
                    prev = gr.Button(S.PREV, elem_id="label-prev", size="sm")
                    rel = gr.Button(S.RELEVANT, variant="primary", elem_id="label-relevant")
                    non = gr.Button(S.NOT_RELEVANT, variant="stop", elem_id="label-not-relevant")
                    skip = gr.Button(S.SKIP, elem_id="label-skip")
                    nxt = gr.Button(S.NEXT, elem_id="label-next", size="sm")
                message = gr.Markdown("", elem_id="label-message")
            with gr.Column(scale=2):
                info = gr.HTML("", elem_id="label-info")
        with gr.Accordion(S.GRID, open=False, elem_id="label-grid-panel"):
            grid = gr.Gallery(elem_id="label-grid", columns=8, height=360, allow_preview=False, show_label=False)
        with gr.Row():
            fmt = gr.Dropdown(list(EXPORT_SUFFIX), value="csv", label=S.EXPORT_FORMAT, elem_id="label-export-format",
                              scale=2)
            export = gr.Button(S.EXPORT, elem_id="label-export", scale=1)
            kappa_btn = gr.Button(S.AGREEMENT, elem_id="label-agreement", scale=1)
        export_file = gr.File(label=S.EXPORT_FILE, elem_id="label-export-file", interactive=False)
        kappa = gr.Markdown("", elem_id="label-kappa")

    outputs = [photo, info, progress, grid, message, st]
    load.click(h.load, [query, annotator, k], outputs, api_name="label_load")
    from_search.click(h.from_search, [search_state, annotator], outputs, api_visibility="private")
    # why: fast typists press keys faster than a round trip; every press must count ("multiple"), in order
    # (one label event at a time; each takes milliseconds and SQLite has one writer anyway)
    in_order = dict(api_visibility="private", trigger_mode="multiple", concurrency_id="label", concurrency_limit=1)
    for button, value in ((rel, 1), (non, 0), (skip, -1)):
        button.click(_labeller(h, value), [annotator, st], outputs, **in_order)
    prev.click(lambda s: h.move(-1, s), [st], outputs, **in_order)
    nxt.click(lambda s: h.move(1, s), [st], outputs, **in_order)

    def jump(s, evt: gr.SelectData):
        return h.jump(s, evt.index)

    grid.select(jump, [st], outputs, api_visibility="private")
    export.click(h.export, [fmt, st], export_file, api_name="export")
    kappa_btn.click(h.kappa, [st], kappa, api_name="agreement")
    gr.api(h.label_photo, api_name="label", concurrency_limit=None)
    return annotator


def _labeller(h: LabelHandlers, value: int):
    def label_current(annotator, st):
        return h.label(value, annotator, st)
    return label_current
