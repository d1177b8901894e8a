"""Handlers of the label view: load a query's photos, label them one at a time (saved as made, with the
seconds taken), move, export, and annotator agreement."""
from __future__ import annotations

import shutil
import tempfile
import threading
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gradio as gr

from core import bounds
from core.errors import EcoLensError, InputError, NotFoundError
from core.labels import agreement, export_labels
from core.presets import request_for
from core.request import clean_query
from core.sessionlog import ExportRecord, Label, SessionLog
from ui import present
from ui import strings as S
from ui.forms import shows_errors
from ui.photos import PhotoFiles

EXPORT_SUFFIX = {"csv": "csv", "jsonl": "jsonl", "inquire-rerank": "inquire-rerank.csv"}


def new_label_state() -> dict[str, Any]:
    return {"session_id": None, "query": "", "items": [], "pos": 0, "shown_at": 0.0, "done": {}}


class LabelHandlers:
    def __init__(self, engine: Any, log: SessionLog, clock=time.monotonic, ready=lambda: None):
        self.engine, self.log, self.clock, self.ready = engine, log, clock, ready
        self._api_sessions: dict[str, int] = {}
        self._api_lock = threading.Lock()
        self.photos = PhotoFiles(engine)

    def outputs(self, st: dict[str, Any], message: str = ""):
        """(photo, photo info, progress, grid, message, state)."""
        items = st["items"]
        if not items:
            return None, "", S.LABEL_NOTHING, [], message, st
        st["pos"] = max(0, min(st["pos"], len(items) - 1))
        st["shown_at"] = self.clock()
        hit = items[st["pos"]]
        done = st["done"]
        mark = done.get(str(hit["id"]))
        info = present.explanation_html(hit, {}, badges=False)
        if mark is not None:
            info = f"<p class='label-current'>{S.LABEL_NAMES[mark]}</p>" + info
        progress = S.LABEL_PROGRESS.format(done=len(done), total=len(items),
                                           relevant=sum(1 for v in done.values() if v == 1),
                                           query=present.md_cell(st["query"]))
        files = self._files(st)
        grid = [(thumb, f"{i + 1}" + (f" · {S.LABEL_NAMES[done[str(h['id'])]]}" if str(h["id"]) in done else ""))
                for i, (h, thumb) in enumerate(zip(items, files["thumbs"]))]
        view, gone = files["views"].get(str(hit["id"])) or self.photos.photo_file(hit["id"], "view")
        files["views"][str(hit["id"])] = (view, gone)
        if gone:
            message = " ".join([message, *gone]).strip()
        return view, info, progress, grid, message, st

    def _files(self, st: dict[str, Any]) -> dict[str, Any]:
        """The served files of this query's photos, made once per load (each key press stays quick: presses
        that arrive while one is handled queue behind it)."""
        ids = [h["id"] for h in st["items"]]
        files = st.get("files")
        if not files or files.get("ids") != ids:
            thumbs, _ = self.photos.files(ids, "thumb")
            files = st["files"] = {"ids": ids, "thumbs": thumbs, "views": {}}
        return files

    def _start(self, query: str, hits: list[dict[str, Any]], annotator: str) -> dict[str, Any]:
        st = new_label_state()
        st.update(query=query, items=hits,
                  session_id=self.log.start_session("label", f"{query[:60]} ({annotator or '?'})"))
        mine = {}
        for lb in self.log.labels(query=query):  # resume: what this annotator already said about this query
            if lb.annotator == " ".join((annotator or "").split()):
                mine[str(lb.photo_id)] = lb.label
        st["done"] = {k: v for k, v in mine.items() if any(str(h["id"]) == k for h in hits)}
        return st

    @shows_errors
    def load(self, query: str, annotator: str, k: float):
        self.ready()
        query = clean_query(query)
        result = self.engine.search(request_for("Fast", query, k=k or self.engine.settings.k))
        return self.outputs(self._start(query, [h.to_json() for h in result.hits], annotator))

    @shows_errors
    def from_search(self, search_state: dict[str, Any], annotator: str):
        if not search_state or not search_state.get("hits"):
            raise InputError(S.NO_RESULTS, "run a search in the Search tab first")
        return self.outputs(self._start(search_state["query"], list(search_state["hits"]), annotator))

    @shows_errors
    def label(self, value: float, annotator: str, st: dict[str, Any]):
        """Save one label for the photo on screen and move to the next one."""
        st = dict(st or new_label_state())
        if not st["items"]:
            raise InputError(S.LABEL_NOTHING, "type a query and press Load photos")
        hit = st["items"][st["pos"]]
        seconds = max(0.0, self.clock() - float(st.get("shown_at") or self.clock()))
        value = int(value)
        self.log.add_label(Label(session_id=st["session_id"], query=st["query"], photo_id=int(hit["id"]),
                                 label=value, annotator=annotator, seconds=seconds))
        st["done"] = {**st["done"], str(hit["id"]): value}
        st["pos"] = min(st["pos"] + 1, len(st["items"]) - 1)
        return self.outputs(st, S.LABEL_SAVED.format(photo=hit["id"], label=S.LABEL_NAMES[value], seconds=seconds))

    @shows_errors
    def label_photo(self, query: str, photo_id: int, label: int, annotator: str, seconds: float = 0.0) -> int:
        """Scriptable labelling: record that `photo_id` is relevant (1), not (0) or skipped (-1) for `query`
        by `annotator`; returns the label's id. Each call's labels go to one 'api' session per query."""
        query = clean_query(query)
        label_ = Label(session_id=0, query=query, photo_id=self._known_photo(photo_id),
                       label=bounds.whole_number("label", label, -1, 1, "use 1 relevant, 0 not relevant, -1 skip"),
                       annotator=annotator, seconds=bounds.seconds(seconds)).checked()
        with self._api_lock:  # calls at once for a new query share one session
            if query not in self._api_sessions:
                self._api_sessions[query] = self.log.start_session("label", f"{query[:60]} (api: {label_.annotator})")
            sid = self._api_sessions[query]
        return self.log.add_label(replace(label_, session_id=sid))

    def _known_photo(self, photo_id: Any) -> int:
        """A photo id of the catalog; InputError / NotFoundError for anything else."""
        pid = bounds.whole_number("photo id", photo_id, 1, bounds.MAX_ID, "use a photo id shown in the results")
        if not self.engine.corpus.photos([pid]):
            raise NotFoundError(f"No photo {pid} in the catalog", "use a photo id shown in the results")
        return pid

    def move(self, delta: int, st: dict[str, Any]):
        st = dict(st or new_label_state())
        st["pos"] = st["pos"] + int(delta)
        return self.outputs(st)

    def jump(self, st: dict[str, Any], index: int):
        st = dict(st or new_label_state())
        st["pos"] = int(index)
        return self.outputs(st)

    @shows_errors
    def export(self, fmt: str, st: dict[str, Any]) -> str:
        """Write every label of the current query to a file under data/exports; returns the path of a copy
        to download."""
        st = st or new_label_state()
        if not st.get("query"):
            raise InputError(S.LABEL_NOTHING, "load a query's photos first")
        labels = self.log.labels(query=st["query"])
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        path = self.engine.settings.path("exports", f"labels-{st['session_id']}-{stamp}.{EXPORT_SUFFIX[fmt]}")
        photos = {p.id: p for p in self.engine.corpus.photos(sorted({lb.photo_id for lb in labels}))}
        scores = {h["id"]: h["score"] for h in st["items"]}
        rows = export_labels(labels, fmt, path, photos=photos, scores=scores)
        try:
            self.log.log_export(ExportRecord(session_id=st["session_id"], format=fmt, path=str(path), rows=rows))
        except EcoLensError as exc:  # the file is written and offered; only its record is missing
            gr.Warning(S.NOT_RECORDED.format(reason=exc.message))
        # the download is a copy in a fresh temporary folder: the data directory itself is never served
        download = Path(tempfile.mkdtemp(prefix="ecolens-export-")) / path.name
        shutil.copyfile(path, download)
        return str(download)

    @shows_errors
    def kappa(self, st: dict[str, Any]) -> str:
        st = st or new_label_state()
        if not st.get("query"):
            return S.LABEL_NOTHING
        return present.kappa_md(agreement(self.log.labels(query=st["query"])))
