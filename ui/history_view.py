"""History view layout and wiring: pick a past session from the log (or paste its token) and reopen it
fully: its searches, each one's ranking (a click opens the photo view with the badges), the pictures it was
searched with, the dialogue turns and the labels."""
from __future__ import annotations

from types import SimpleNamespace

import gradio as gr

from ui import strings as S
from ui.history_handlers import HistoryHandlers, new_history_state


def build(h: HistoryHandlers, lightbox) -> SimpleNamespace:
    """Returns the session list and the refresh button (the app refreshes the list when the tab opens)."""
    hstate = gr.State(new_history_state())
    with gr.Row():
        sessions = gr.Dropdown([], label=S.HISTORY_SESSIONS, elem_id="history-sessions", scale=5,
                               allow_custom_value=True)
        refresh = gr.Button(S.HISTORY_REFRESH, elem_id="history-refresh", scale=1)
        reopen = gr.Button(S.HISTORY_OPEN, variant="primary", elem_id="history-open", scale=1)
    requests = gr.Markdown(S.HISTORY_PICK, label=S.HISTORY_REQUESTS, elem_id="history-requests")
    picker = gr.Dropdown([], label=S.HISTORY_REQUEST, elem_id="history-request", visible=False)
    gallery = gr.Gallery(label=S.RESULTS, elem_id="history-gallery", columns=6, height="auto",
                         allow_preview=False, object_fit="cover", buttons=[])
    pictures = gr.Gallery(label=S.VISUALIZATIONS, elem_id="history-visualizations", columns=6, height=260,
                          allow_preview=False, object_fit="contain", buttons=[])
    chat = gr.Chatbot(label=S.HISTORY_CHAT, elem_id="history-chat", height=320)
    labels = gr.Markdown("", label=S.HISTORY_LABELS, elem_id="history-labels")
    refresh.click(h.refresh, None, sessions, api_visibility="private")
    reopen.click(h.open, [sessions], [requests, gallery, pictures, chat, labels, hstate], api_name="history_open") \
        .then(h.requests_picker, [hstate], picker, api_visibility="private")
    picker.input(h.show_request, [picker, hstate], [gallery, pictures, hstate], api_visibility="private")
    lightbox.opens_from(gallery, hstate)
    return SimpleNamespace(refresh=refresh, sessions=sessions)
