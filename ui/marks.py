"""Marked photos: a page's own list of photos marked from any gallery's photo view (Search, Compare,
Dialogue, History), shown in one panel and exported as CSV or JSONL with species, place, date, licence,
rights holder and the query and preset each photo was found with (core.exports), or as a Darwin Core Archive
(core.darwincore)."""
from __future__ import annotations

import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import gradio as gr

from core import darwincore
from core.contracts.errors import InputError
from core.contracts.sessionlog import ExportRecord, SessionLog
from core.exporting import ExportSources, dwc_options, few
from core.exports import MARK_FORMATS, collection_roots, export_marks
from ui import present
from ui import strings as S
from ui.forms import photo_id as read_photo_id
from ui.forms import shows_errors, warn
from ui.lightbox import is_marked
from ui.photos import PhotoFiles

# format -> file suffix (dwc: a Darwin Core Archive, a zip)
FORMATS = {**{f: f for f in MARK_FORMATS}, "dwc": "dwc.zip"}


class MarkHandlers:
    def __init__(self, engine: Any, log: SessionLog):
        self.engine, self.log = engine, log
        self.photos = PhotoFiles(engine)

    def panel(self, marks: Sequence[dict[str, Any]] | None):
        """(panel with its count, gallery of the marked photos, note)."""
        marks = list(marks or [])
        paths, _ = self.photos.files([m["id"] for m in marks])
        items = [(p, S.MARK_CAPTION.format(name=m.get("name") or m["id"], query=m.get("query", "")))
                 for p, m in zip(paths, marks)]
        return gr.update(label=S.MARKS_PANEL.format(n=len(marks))), items, "" if marks else S.MARKS_EMPTY

    def toggle(self, shown: Any, view: dict[str, Any] | None, marks: Sequence[dict[str, Any]] | None):
        """Mark the photo on screen in the photo view, or unmark it. Outputs: (marks, mark button, panel,
        gallery, note)."""
        marks = list(marks or [])
        pid = read_photo_id(shown)
        if pid is None:
            return (marks, gr.update(), *self.panel(marks))
        if is_marked(marks, pid):
            marks = [m for m in marks if int(m["id"]) != pid]
        else:
            view = view or {}
            hit = next((h for h in view.get("items") or [] if int(h["id"]) == pid), {"id": pid})
            marks.append({"id": pid, "name": present.name_of(hit), "query": view.get("query", ""),
                          "preset": view.get("preset", "")})
        button = S.MARKED_ON if is_marked(marks, pid) else S.MARK
        return (marks, gr.update(value=button), *self.panel(marks))

    def clear(self):
        return ([], gr.update(value=S.MARK), *self.panel([]))

    @shows_errors
    def export(self, fmt: str, marks: Sequence[dict[str, Any]] | None) -> str:
        """Write the marked photos to data/exports and return a copy to download (never the data folder)."""
        fmt = (fmt or "csv").strip().lower()
        marks = list(marks or [])
        if fmt not in FORMATS:
            raise InputError(f"Unknown export format {fmt!r}", "choose one of: " + ", ".join(FORMATS))
        if not marks:  # said before any format's writer runs: the same message for csv, jsonl and dwc
            raise InputError("No photo is marked", "mark photos first (open a photo and press Mark)")
        settings = self.engine.settings
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        path = settings.path("exports", f"marked-{stamp}.{FORMATS.get(fmt, 'txt')}")
        photos = {p.id: p for p in self.engine.corpus.photos([int(m["id"]) for m in marks])}
        if fmt == "dwc":
            camtrap = getattr(self.engine.corpus, "camtrap", None)  # camera-trap frames: MachineObservation
            sources = ExportSources(settings, None, self.engine.corpus.photos, camtrap)
            notices: list[str] = []  # licences GBIF cannot take, a missing contact: said, not refused
            rows = darwincore.write_archive(path, darwincore.marked_occurrences(marks, photos),
                                            collection_roots(settings), **dwc_options(sources, list(photos)),
                                            notices=notices)
            warn(few(notices))
        else:
            rows = export_marks(marks, photos, fmt, path, collection_roots(settings))
        self.log.log_export(ExportRecord(session_id=None, format=f"marked-{fmt}", path=str(path), rows=rows))
        download = Path(tempfile.mkdtemp(prefix="ecolens-export-")) / path.name
        shutil.copyfile(path, download)
        return str(download)


def build(h: MarkHandlers, marks: gr.State, lightbox: Any) -> None:
    """The marked-photos panel (a closed accordion with the count in its title) and the photo view's Mark."""
    with gr.Accordion(S.MARKS_PANEL.format(n=0), open=False, elem_id="marks-panel") as panel:
        note = gr.Markdown(S.MARKS_EMPTY, elem_id="marks-note")
        gallery = gr.Gallery(show_label=False, elem_id="marks-gallery", columns=8, height=230,
                             allow_preview=False, object_fit="contain", buttons=["download"])
        with gr.Row():
            fmt = gr.Dropdown([(S.MARK_EXPORT_NAMES[f], f) for f in FORMATS], value="csv", label=S.MARKS_FORMAT,
                              elem_id="marks-format", scale=1)
            export = gr.Button(S.MARKS_EXPORT, variant="primary", elem_id="marks-export", scale=1)
            clear = gr.Button(S.MARKS_CLEAR, elem_id="marks-clear", scale=1)
        file = gr.File(label=S.MARKS_FILE, elem_id="marks-file", interactive=False, height=90)
    shown = [panel, gallery, note]
    lightbox.mark.click(h.toggle, [lightbox.photo_id, lightbox.view, marks], [marks, lightbox.mark, *shown],
                        api_visibility="private", show_progress="hidden", trigger_mode="multiple")
    clear.click(h.clear, None, [marks, lightbox.mark, *shown], api_visibility="private")
    export.click(h.export, [fmt, marks], file, api_name="export_marked")
