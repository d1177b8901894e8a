"""Label view layout and wiring: annotator, query (Enter loads), instructions for the query, the labelling
grid (ui.label_board: click a tile to move there, its ✓ / ✗ to judge it, or use the keys) beside the current
photo large, undo, next unjudged, progress, exports, agreement and the disagreements to adjudicate.

Buttons and keys never call the server directly: they put their action in the board's queue in the page,
which sends one press at a time with the photo it is for (see ui.label_board)."""
from __future__ import annotations

import gradio as gr

from core.contracts import limits
from ui import label_board
from ui import strings as S
from ui.label_handlers import EXPORT_SUFFIX, LabelHandlers, new_label_state

HOTKEYS_JS = label_board.HOTKEYS_JS


def build(h: LabelHandlers, search_state: gr.State) -> tuple[gr.Textbox, gr.Button]:
    """Lay out the label tab; returns the annotator box and the agreement button (with personal logins the
    page load fills the box with the person's name, read-only, and offers the agreement to an owner only)."""
    st = gr.State(new_label_state())
    with gr.Column(elem_id="label-view"):
        with gr.Row():
            annotator = gr.Textbox(label=S.ANNOTATOR, elem_id="label-annotator", scale=2)
            query = gr.Textbox(label=S.LABEL_QUERY, elem_id="label-query", scale=4)
            k = gr.Slider(1, limits.MAX_K, value=h.engine.settings.k, step=1, label=S.K, elem_id="label-k", scale=2)
        with gr.Row():
            load = gr.Button(S.LABEL_LOAD, variant="primary", elem_id="label-load")
            from_search = gr.Button(S.LABEL_FROM_SEARCH, elem_id="label-from-search")
        instructions = gr.Textbox(label=S.INSTRUCTIONS, placeholder=S.INSTRUCTIONS_PLACEHOLDER, lines=2,
                                  elem_id="label-instructions")
        progress = gr.Markdown(S.LABEL_NOTHING, elem_id="label-progress")
        gr.Markdown(S.HOTKEYS, elem_id="label-hotkeys-help")
        with gr.Row():
            prev = gr.Button(S.PREV, elem_id="label-prev", size="sm", min_width=90)
            rel = gr.Button(S.RELEVANT, variant="primary", elem_id="label-relevant", min_width=110)
            non = gr.Button(S.NOT_RELEVANT, variant="stop", elem_id="label-not-relevant", min_width=110)
            skip = gr.Button(S.SKIP, elem_id="label-skip", min_width=90)
            undo = gr.Button(S.UNDO, elem_id="label-undo", size="sm", min_width=90)
            unjudged = gr.Button(S.NEXT_UNLABELLED, elem_id="label-next-unjudged", size="sm", min_width=110)
            nxt = gr.Button(S.NEXT, elem_id="label-next", size="sm", min_width=90)
        message = gr.Markdown("", elem_id="label-message")
        with gr.Row(equal_height=False):
            with gr.Column(scale=3, min_width=300):
                board = gr.HTML(label_board.render([], [], {}, None, 0), elem_id="label-board",
                                js_on_load=label_board.BOARD_JS, padding=False)
            with gr.Column(scale=2, min_width=280):
                photo = gr.Image(label=None, show_label=False, elem_id="label-photo", height=380, interactive=False,
                                 buttons=["fullscreen"])
                info = gr.HTML("", elem_id="label-info")
        with gr.Row():
            fmt = gr.Dropdown([(S.LABEL_EXPORT_NAMES[f], f) for f in EXPORT_SUFFIX], value="csv",
                              label=S.EXPORT_FORMAT, elem_id="label-export-format",
                              scale=2)
            who = gr.Textbox(label=S.EXPORT_WHO, elem_id="label-export-annotator", scale=2)
            export = gr.Button(S.EXPORT, elem_id="label-export", scale=1)
            kappa_btn = gr.Button(S.AGREEMENT, elem_id="label-agreement", scale=1)
        export_file = gr.File(label=S.EXPORT_FILE, elem_id="label-export-file", interactive=False, height=90)
        kappa = gr.Markdown("", elem_id="label-kappa")
        disagree_note = gr.Markdown("", elem_id="label-disagreements-note")
        with gr.Column(elem_id="label-adjudication"):  # hidden by the page's CSS while nothing is in dispute
            disagreements = gr.Gallery(show_label=False, elem_id="label-disagreements", columns=6, height="auto",
                                       allow_preview=False, object_fit="contain", buttons=[])
            with gr.Row():
                final_rel = gr.Button(S.ADJUDICATE_REL, elem_id="label-adjudicate-relevant", size="sm")
                final_non = gr.Button(S.ADJUDICATE_NON, elem_id="label-adjudicate-not-relevant", size="sm")

    outputs = [photo, info, progress, board, message, st]
    load_opts = dict(concurrency_id="label", concurrency_limit=4)
    load.click(h.load, [query, annotator, k, st], outputs + [instructions], api_name="label_load", **load_opts)
    query.submit(h.load, [query, annotator, k, st], outputs + [instructions], api_visibility="private", **load_opts)
    from_search.click(h.from_search, [search_state, annotator, st], outputs + [instructions, query],
                      api_visibility="private")
    # the board's queue sends one press at a time, each naming its photo; the handler never raises
    board.select(h.act, [annotator, st], outputs, api_visibility="private", trigger_mode="multiple",
                 show_progress="hidden", concurrency_id="label-press", concurrency_limit=8)
    for button, action in ((rel, "1"), (non, "0"), (skip, "s"), (prev, "prev"), (nxt, "next"), (undo, "undo"),
                           (unjudged, "unjudged")):
        button.click(None, None, None, js=label_board.press_js(action), api_visibility="private")
    instructions.blur(h.save_instructions, [instructions, st], message, api_visibility="private")
    export.click(h.export, [fmt, query, who, st], export_file, api_name="export")
    kappa_btn.click(h.kappa, [st], [kappa, disagreements, disagree_note, st], api_name="agreement")
    disagreements.select(h.pick, [st], st, api_visibility="private")
    final_rel.click(lambda a, s: h.adjudicate(1, a, s), [annotator, st], [kappa, disagreements, disagree_note, st],
                    api_visibility="private")
    final_non.click(lambda a, s: h.adjudicate(0, a, s), [annotator, st], [kappa, disagreements, disagree_note, st],
                    api_visibility="private")
    gr.api(h.label_photo, api_name="label", concurrency_id="label-api", concurrency_limit=1)
    return annotator, kappa_btn
