"""Compare view layout and wiring: one query, two to four methods side by side, overlap of their top-k; a
click on a photo opens the photo view with that column's results."""
from __future__ import annotations

import gradio as gr

from core.contracts import limits
from core.search.presets import PRESET_NAMES
from ui import strings as S
from ui.compare_handlers import MAX_COLUMNS, CompareHandlers, new_compare_state


def build(h: CompareHandlers, lightbox) -> None:
    state = gr.State(new_compare_state())
    with gr.Row():
        query = gr.Textbox(label=S.QUERY, placeholder=S.QUERY_PLACEHOLDER, elem_id="compare-query", scale=4)
        methods = gr.CheckboxGroup(list(PRESET_NAMES), value=["Fast", "Visualize"], label=S.COMPARE_METHODS,
                                   elem_id="compare-methods", scale=3)
        k = gr.Slider(1, limits.MAX_K, value=10, step=1, label=S.K, elem_id="compare-k", scale=2)
        go = gr.Button(S.COMPARE, variant="primary", elem_id="compare-button", scale=1)
    outputs, galleries = [], []
    with gr.Row():
        for i in range(MAX_COLUMNS):
            with gr.Column(min_width=200):
                title = gr.Markdown("", elem_id=f"compare-title-{i}")
                gallery = gr.Gallery(show_label=False, elem_id=f"compare-gallery-{i}", columns=2, height=520,
                                     allow_preview=False, buttons=[])
                outputs += [gallery, title]
                galleries.append(gallery)
    overlap = gr.Markdown("", label=S.OVERLAP, elem_id="compare-overlap")
    go.click(h.compare, [query, methods, k], outputs + [overlap, state], api_name="compare")
    query.submit(h.compare, [query, methods, k], outputs + [overlap, state], api_visibility="private")
    for i, gallery in enumerate(galleries):
        gallery.select(_opener(h, lightbox, i), [state, lightbox.marks], lightbox.outputs, api_visibility="private",
                       show_progress="hidden")


def _opener(h: CompareHandlers, lightbox, i: int):
    def open_column(state, marks, evt: gr.SelectData):
        return lightbox.h.from_results(h.column(state, i), marks, evt)
    return open_column
