"""Search view layout and event wiring: query, presets, advanced knobs, filters, results gallery, generated
pictures strip, explanation panel, more like this, refine with labels, answer with evidence."""
from __future__ import annotations

import gradio as gr

from ui import strings as S
from core.presets import PRESET_NAMES
from ui.forms import example_photo_input
from ui.search_handlers import SearchHandlers, new_state


def build(h: SearchHandlers) -> gr.State:
    """Lay out the search tab inside the current Blocks; returns the search state (shared with Label)."""
    s = h.settings
    state = gr.State(new_state())
    with gr.Row():
        query = gr.Textbox(label=S.QUERY, placeholder=S.QUERY_PLACEHOLDER, elem_id="search-query", scale=5,
                           max_lines=3)
        preset = gr.Radio(list(PRESET_NAMES), value="Fast", label=S.PRESET_LABEL, elem_id="search-preset",
                          info=" · ".join(S.PRESETS.values()), scale=4)
        with gr.Column(scale=1, min_width=120):
            go = gr.Button(S.SEARCH, variant="primary", elem_id="search-button")
            stop = gr.Button(S.STOP, variant="stop", elem_id="search-stop", size="sm")
    with gr.Accordion(S.ADVANCED, open=False, elem_id="search-advanced"):
        with gr.Row():
            k = gr.Slider(1, 200, value=s.k, step=1, label=S.K, elem_id="search-k")
            m = gr.Slider(1, 8, value=s.visret_m, step=1, label=S.VISRET_M, elem_id="search-m")
            rerank_k = gr.Slider(5, 200, value=s.rerank_k, step=5, label=S.RERANK_K, elem_id="search-rerank-k")
            rerank_mode = gr.Dropdown(S.RERANK_MODES, value="full", label=S.RERANK_MODE, elem_id="search-rerank-mode")
            answer = gr.Checkbox(False, label=S.WANT_ANSWER, elem_id="search-answer")
        # the upload reaches the handler unopened; core.bounds checks it
        example = example_photo_input(label=S.EXAMPLE_PHOTO, elem_id="search-example", height=160,
                                      sources=["upload", "clipboard"])
    with gr.Accordion(S.FILTERS, open=False, elem_id="search-filters"):
        with gr.Row():
            taxon = gr.Textbox(label=S.TAXON, elem_id="filter-taxon")
            date_from = gr.Textbox(label=S.DATE_FROM, elem_id="filter-date-from")
            date_to = gr.Textbox(label=S.DATE_TO, elem_id="filter-date-to")
        with gr.Row():
            months = gr.CheckboxGroup(S.MONTH_NAMES, label=S.MONTHS, elem_id="filter-months")
            bbox = gr.Textbox(label=S.BBOX, elem_id="filter-bbox")
            license_ = gr.Textbox(label=S.LICENSE, elem_id="filter-license")
    status = gr.Markdown(S.STATUS_IDLE, elem_id="search-status")
    notices = gr.Markdown("", elem_id="search-notices")
    with gr.Row():
        with gr.Column(scale=3):
            gallery = gr.Gallery(label=S.RESULTS, elem_id="search-gallery", columns=5, height=560,
                                 allow_preview=False, object_fit="cover")
            with gr.Row():
                more = gr.Button(S.MORE_LIKE_THIS, elem_id="search-more-like-this", size="sm")
                refine = gr.Button(S.USE_LABELS, elem_id="search-refine", size="sm")
        with gr.Column(scale=2):
            explanation = gr.HTML(S.SELECT_HINT, label=S.EXPLANATION, elem_id="search-explanation")
            evidence = gr.Markdown("", label=S.EVIDENCE, elem_id="search-evidence")
    with gr.Row():
        visualizations = gr.Gallery(label=S.VISUALIZATIONS, elem_id="search-visualizations", columns=6, height=180,
                                    allow_preview=False, scale=5)
        with gr.Column(scale=1, min_width=160):
            regenerate = gr.Button(S.REGENERATE, elem_id="search-regenerate", size="sm")
            drop = gr.Button(S.DROP_VIS, elem_id="search-drop-visualization", size="sm")
    outputs = [gallery, status, notices, visualizations, evidence, explanation, state]
    inputs = [query, preset, k, m, rerank_k, rerank_mode, answer, taxon, date_from, date_to, months, bbox,
              license_, example, state]
    # every search may run while another one from this page is still running: the handler cancels the older
    # one (trigger_mode "multiple"); expensive stages wait for engine slots, so the group limit is generous
    run = dict(concurrency_id="search", concurrency_limit=16, trigger_mode="multiple", show_progress="minimal")
    searches = [go.click(h.search, inputs, outputs, api_name="search", **run),
                query.submit(h.search, inputs, outputs, api_visibility="private", **run),
                regenerate.click(h.regenerate, inputs, outputs, api_visibility="private", **run),
                drop.click(h.drop_visualization, inputs, outputs, api_visibility="private", **run)]
    stop.click(h.stop, None, status, cancels=searches, api_name="stop", concurrency_limit=None)
    visualizations.select(h.select_visualization, [state], [state], api_visibility="private")
    gallery.select(h.select, [state], [explanation, state], api_visibility="private")
    more.click(h.more_like_this, [state], outputs, api_name="more_like_this")
    refine.click(h.refine_with_labels, [state], outputs, api_name="refine_with_labels")
    return state
