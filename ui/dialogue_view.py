"""Dialogue view layout and wiring: the chat, suggested answers, not sure, and the candidates gallery in
which photos can be marked; the reformulated description updates every turn."""
from __future__ import annotations

import gradio as gr

from ui import strings as S
from ui.dialogue_handlers import DialogueHandlers, new_dialogue_state


def build(h: DialogueHandlers, lightbox=None) -> None:
    """`lightbox` (ui.lightbox.LightboxView): the photo view a clicked candidate can be opened in (to see it
    large, or mark it for export)."""
    st = gr.State(new_dialogue_state())
    with gr.Row():
        description = gr.Textbox(label=S.DIALOGUE_START, placeholder=S.QUERY_PLACEHOLDER, elem_id="dialogue-start-text",
                                 scale=5)
        start = gr.Button(S.DIALOGUE_BEGIN, variant="primary", elem_id="dialogue-start", scale=1)
    with gr.Row():
        with gr.Column(scale=2):
            chat = gr.Chatbot(label=S.CHAT, elem_id="dialogue-chat", height=360)
            suggestions = gr.Radio([], label=S.DIALOGUE_SUGGESTED, elem_id="dialogue-suggestions")
            answer = gr.Textbox(label=S.DIALOGUE_ANSWER, elem_id="dialogue-answer")
            with gr.Row():
                send = gr.Button(S.DIALOGUE_SEND, variant="primary", elem_id="dialogue-send")
                unsure = gr.Button(S.DIALOGUE_NOT_SURE, elem_id="dialogue-not-sure")
            caption = gr.Textbox(label=S.DIALOGUE_DESCRIPTION, elem_id="dialogue-description", interactive=False,
                                 lines=2)
        with gr.Column(scale=3):
            gallery = gr.Gallery(label=S.DIALOGUE_CANDIDATES, elem_id="dialogue-gallery", columns=4, height=520,
                                 allow_preview=False)
            marked = gr.Markdown("", elem_id="dialogue-marked")
            view = gr.Button(S.VIEW_PHOTO, elem_id="dialogue-view-photo", size="sm") if lightbox else None
    outputs = [chat, suggestions, gallery, caption, marked, answer, st]
    start.click(h.start, [description, st], outputs, api_name="dialogue_start")
    description.submit(h.start, [description, st], outputs, api_visibility="private")
    send.click(h.turn, [answer, st], outputs, api_name="dialogue_turn")
    answer.submit(h.turn, [answer, st], outputs, api_visibility="private")
    unsure.click(h.not_sure, [st], outputs, api_visibility="private")
    suggestions.select(lambda v: v, [suggestions], answer, api_visibility="private")
    gallery.select(h.mark, [st], [gallery, marked, st], api_visibility="private")
    if lightbox is not None:
        clicked = gr.State(None)
        # one queue for the click and the button, first come first served: in groups of their own, Gradio's
        # queue may start the button's event before the click's (it picks among groups at random), and under
        # load "View photo" right after a click opened nothing
        lane = dict(concurrency_id="dialogue-view-photo", concurrency_limit=1)
        gallery.select(_clicked, None, clicked, api_visibility="private", show_progress="hidden", **lane)
        view.click(_opener(lightbox), [st, clicked, lightbox.marks], lightbox.outputs, api_visibility="private",
                   **lane)


def _clicked(evt: gr.SelectData):
    return evt.index if isinstance(evt.index, int) else None


def _opener(lightbox):
    def open_candidate(st, index, marks):
        """The candidate clicked last, in the photo view (its score is the dialogue's similarity)."""
        hits = [{**h, "similarity": h.get("score")} for h in (st or {}).get("hits") or []]
        if index is None or index >= len(hits):
            return lightbox.h.outputs({}, marks)
        return lightbox.h.open(hits, index, (st or {}).get("stages") or {},
                               (st or {}).get("chat", [{}])[0].get("content", ""),
                               S.TAB_DIALOGUE, marks)
    return open_candidate
