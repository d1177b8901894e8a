"""History view layout and wiring: pick a past session from the log and reopen its searches and labels."""
from __future__ import annotations

import gradio as gr

from ui import strings as S
from ui.history_handlers import HistoryHandlers


def build(h: HistoryHandlers) -> gr.Button:
    """Returns the refresh button (the app refreshes the list when the tab opens)."""
    with gr.Row():
        sessions = gr.Dropdown([], label=S.HISTORY_SESSIONS, elem_id="history-sessions", scale=5)
        refresh = gr.Button(S.HISTORY_REFRESH, elem_id="history-refresh", scale=1)
        reopen = gr.Button(S.HISTORY_OPEN, variant="primary", elem_id="history-open", scale=1)
    requests = gr.Markdown(S.HISTORY_EMPTY, label=S.HISTORY_REQUESTS, elem_id="history-requests")
    gallery = gr.Gallery(label=S.RESULTS, elem_id="history-gallery", columns=8, height=300, allow_preview=False)
    labels = gr.Markdown("", label=S.HISTORY_LABELS, elem_id="history-labels")
    refresh.click(h.refresh, None, sessions, api_visibility="private")
    reopen.click(h.open, [sessions], [requests, gallery, labels], api_name="history_open")
    return refresh, sessions
