"""Compare view layout and wiring: one query, two to four methods side by side, overlap of their top-k."""
from __future__ import annotations

import gradio as gr

from ui import strings as S
from ui.compare_handlers import MAX_COLUMNS, CompareHandlers
from core.presets import PRESET_NAMES


def build(h: CompareHandlers) -> None:
    with gr.Row():
        query = gr.Textbox(label=S.QUERY, placeholder=S.QUERY_PLACEHOLDER, elem_id="compare-query", scale=4)
        methods = gr.CheckboxGroup(list(PRESET_NAMES), value=["Fast", "Visualize"], label=S.COMPARE_METHODS,
                                   elem_id="compare-methods", scale=3)
        k = gr.Slider(5, 50, value=10, step=1, label=S.K, elem_id="compare-k", scale=2)
        go = gr.Button(S.COMPARE, variant="primary", elem_id="compare-button", scale=1)
    outputs = []
    with gr.Row():
        for i in range(MAX_COLUMNS):
            with gr.Column(min_width=200):
                title = gr.Markdown("", elem_id=f"compare-title-{i}")
                gallery = gr.Gallery(show_label=False, elem_id=f"compare-gallery-{i}", columns=2, height=520,
                                     allow_preview=False)
                outputs += [gallery, title]
    overlap = gr.Markdown("", label=S.OVERLAP, elem_id="compare-overlap")
    go.click(h.compare, [query, methods, k], outputs + [overlap], api_name="compare")
