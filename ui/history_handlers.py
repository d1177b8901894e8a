"""Handlers of the history view: list past sessions from the log and reopen one with its results and labels."""
from __future__ import annotations

from typing import Any

import gradio as gr

from core.sessionlog import SessionLog
from ui import present
from ui import strings as S
from ui.forms import shows_errors, warn
from ui.photos import PhotoFiles


class HistoryHandlers:
    def __init__(self, engine: Any, log: SessionLog):
        self.engine, self.log = engine, log
        self.photos = PhotoFiles(engine)

    def choices(self) -> list[tuple[str, int]]:
        return [(f"#{s.id} {s.created_at:%Y-%m-%d %H:%M} · {s.kind} · {s.title} "
                 f"({s.requests} searches, {s.labels} labels)", s.id) for s in self.log.sessions(200)]

    @shows_errors
    def refresh(self):
        choices = self.choices()
        return gr.update(choices=choices, value=choices[0][1] if choices else None)

    @shows_errors
    def open(self, session_id: int | None):
        """(requests table, gallery of the last ranking, labels table)."""
        if session_id is None:
            return S.HISTORY_EMPTY, [], ""
        detail = self.log.session(int(session_id))
        req_rows = ["| # | query | method | stages | results |", "|---|---|---|---|---|"]
        for r in detail.requests:
            final = r.stages[0].ranking if r.stages else []
            req_rows.append(f"| {r.id} | {present.md_cell(r.query)} | {present.md_cell(r.method)} | "
                            f"{present.md_cell(', '.join(s.name for s in r.stages))} | {len(final)} |")
        for t in detail.turns:
            req_rows.append(f"| turn {t.index} | {present.md_cell(t.question)} | "
                            f"{present.md_cell(t.answer)} | | |")
        gallery: list = []
        missing: list[str] = []
        if detail.requests and detail.requests[-1].stages:
            ranked = detail.requests[-1].stages[0].ranking
            gallery, missing = self.photos.gallery([h.to_json() for h in self.engine.corpus.hits(ranked)])
        elif detail.labels:  # a labelling session: the photos judged, with their last label
            last = {lb.photo_id: lb.label for lb in detail.labels}
            paths, missing = self.photos.files(list(last))
            gallery = [(path, f"{pid} · {S.LABEL_NAMES.get(label, '')}")
                       for path, (pid, label) in zip(paths, last.items())]
        warn(missing)
        lab_rows = ["| photo | label | annotator | seconds | when |", "|---|---|---|---|---|"]
        lab_rows += [f"| {lb.photo_id} | {S.LABEL_NAMES.get(lb.label, lb.label)} | {present.md_cell(lb.annotator)} | "
                     f"{lb.seconds:.1f} | {lb.created_at:%Y-%m-%d %H:%M:%S} |" for lb in detail.labels]
        return "\n".join(req_rows), gallery, "\n".join(lab_rows) if detail.labels else ""
