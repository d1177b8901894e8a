"""Handlers of the label view: load a query's photos, judge them in the grid or one at a time (saved as made,
with the seconds taken), undo, next unjudged, per-query instructions, export, annotator agreement and the
disagreements to adjudicate.

Every press from the page names the photo it is for (ui.label_board queues them), so the labels land where
the annotator looked. After a judgement the cursor moves to the next photo not yet judged (wrapping around);
when none is left the view is done and keys judge nothing until a photo is picked again, so a key pressed at
the last photo never overwrites a judgement silently. A label session is opened by the first label, never by
loading photos."""
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

from core import exporting
from core.contracts import bounds
from core.contracts.errors import EcoLensError, InputError, NotFoundError
from core.contracts.search_request import clean_query
from core.contracts.sessionlog import ExportRecord, Label, SessionLog
from core.exporting import ExportSources
from core.labels import ADJUDICATED, agreement, disagreements, same_annotator
from core.search.presets import request_for
from ui import label_board, present, tables
from ui import strings as S
from ui import strings_camtrap as SC
from ui.forms import not_recorded, shows_errors, user_message, warn
from ui.identity import Identity
from ui.owned_log import OwnedLog
from ui.photos import PhotoFiles

# the label formats of core.exporting (the camera-trap ones are the command line's: `python app.py export`)
EXPORT_SUFFIX = {fmt: exporting.SUFFIX[fmt] for fmt in exporting.LABEL_FORMATS}
KEY_VALUES = {"1": 1, "0": 0, "s": -1}


def new_label_state() -> dict[str, Any]:
    return {"session_id": None, "query": "", "items": [], "pos": 0, "shown_at": 0.0, "done": {}, "undo": [],
            "seq": 0, "pick": None}


def judged(done: dict[str, int]) -> int:
    return sum(1 for v in done.values() if v in (0, 1))


class LabelHandlers:
    def __init__(self, engine: Any, log: SessionLog, clock=time.monotonic, ready=lambda: None, camtrap: Any = None):
        """`camtrap`: core.camtrap.desk.CamtrapDesk (a label given to an event card applies to its frames)."""
        # whose labels: the log as the asker may use it (ui.owned_log; without logins, the log itself)
        self.log = log if isinstance(log, OwnedLog) else OwnedLog(log, Identity())
        self.engine, self.clock, self.ready = engine, clock, ready
        self.camtrap = camtrap
        self._api_sessions: dict[tuple[str, str, str], int] = {}
        self._api_lock = threading.Lock()
        self.photos = PhotoFiles(engine)

    # ---- what the view shows ----------------------------------------------------------------------
    def progress(self, st: dict[str, Any]) -> str:
        items, done = st["items"], st["done"]
        if not items:
            return S.LABEL_NOTHING
        counts = dict(total=len(items), query=tables.md_cell(st["query"]),
                      relevant=sum(1 for v in done.values() if v == 1),
                      not_relevant=sum(1 for v in done.values() if v == 0))
        if judged(done) >= len(items):
            return f"**{S.LABEL_DONE.format(**counts)}** {S.LABEL_DONE_HINT}"
        skipped = sum(1 for v in done.values() if v == -1)
        return S.LABEL_PROGRESS.format(judged=judged(done), skipped=S.LABEL_SKIPPED.format(n=skipped) if skipped
                                       else "", **counts)

    def outputs(self, st: dict[str, Any], message: str = ""):
        """(photo, photo info, progress, board, message, state)."""
        items, pos = st["items"], st["pos"]
        board_seq = int(st.get("seq") or 0)
        if not items:
            return None, "", S.LABEL_NOTHING, label_board.render([], [], {}, None, board_seq), message, st
        st["shown_at"] = self.clock()
        thumbs, missing = self.photos.files([h["id"] for h in items], "thumb")
        board = label_board.render(items, thumbs, st["done"], pos, board_seq)
        if pos is None:
            return None, f"<p class='label-done'>{S.LABEL_DONE_INFO}</p>", self.progress(st), board, message, st
        hit = items[pos]
        mark = st["done"].get(str(hit["id"]))
        info = present.explanation_html(hit, {}, badges=False)
        state_line = S.LABEL_NAMES[mark] if mark is not None else S.UNJUDGED
        info = f"<p class='label-current'>{pos + 1} / {len(items)}: {state_line}</p>" + info
        view, gone = self.photos.photo_file(hit["id"], "view")
        message = " ".join([message, *missing, *gone]).strip()
        return view, info, self.progress(st), board, message, st

    # ---- loading ----------------------------------------------------------------------------------
    def _start(self, query: str, hits: list[dict[str, Any]], annotator: str, before: dict[str, Any] | None):
        st = new_label_state()
        st.update(query=query, items=hits, seq=int((before or {}).get("seq") or 0))
        name = self.log.annotator(annotator)
        mine = {str(lb.photo_id): lb.label for lb in self.log.labels(query=query) if same_annotator(lb.annotator, name)}
        ids = {str(h["id"]) for h in hits}
        st["done"] = {k: v for k, v in mine.items() if k in ids}  # resume what this annotator already said
        st["pos"] = self._next_unjudged(st, -1)
        return st

    @staticmethod
    def _next_unjudged(st: dict[str, Any], after: int) -> int | None:
        """The index of the first photo after `after` (wrapping around) not yet judged 1 or 0; None if none."""
        items, done = st["items"], st["done"]
        for step in range(1, len(items) + 1):
            i = (after + step) % len(items)
            if done.get(str(items[i]["id"])) not in (0, 1):
                return i
        return None

    @shows_errors
    def load(self, query: str, annotator: str | None = None, k: float | None = None,
             st: dict[str, Any] | None = None):
        """The query's photos to judge (its plain-similarity ranking) and its instructions; no session is
        opened until the first label."""
        self.ready()
        query = clean_query(query)
        result = self.engine.search(request_for("Fast", query, k=k or self.engine.settings.k))
        st = self._start(query, [h.to_json() for h in result.hits], annotator, st)
        return (*self.outputs(st), self.log.instructions(query))

    @shows_errors
    def from_search(self, search_state: dict[str, Any], annotator: str, st: dict[str, Any] | None = None):
        if not search_state or not search_state.get("hits"):
            raise InputError(S.NO_RESULTS, "run a search in the Search tab first")
        st = self._start(search_state["query"], list(search_state["hits"]), annotator, st)
        return (*self.outputs(st), self.log.instructions(st["query"]), st["query"])

    # ---- presses from the page -----------------------------------------------------------------------
    def act(self, annotator: str, st: dict[str, Any] | None, evt: gr.SelectData):
        """One press from the board's queue: evt.index is the photo it is for (0: none), evt.value
        {action: 1 | 0 | s | next | prev | goto | unjudged | undo, seq}. Never raises: a problem is said in the
        message, so the page's queue goes on."""
        st = dict(st or new_label_state())
        data = evt.value if isinstance(evt.value, dict) else {}
        st["seq"] = max(int(st.get("seq") or 0), int(data.get("seq") or 0))
        action, pid = str(data.get("action", "")), int(evt.index or 0)
        try:
            if not st["items"]:
                raise InputError(S.LABEL_NOTHING.rstrip("."), "")
            at = next((i for i, h in enumerate(st["items"]) if int(h["id"]) == pid), None)
            if action in KEY_VALUES:
                return self._judge(st, annotator, at, KEY_VALUES[action])
            if action == "undo":
                return self._undo(st, annotator)
            last = len(st["items"]) - 1
            if action in ("next", "prev"):
                step = 1 if action == "next" else -1
                base = at if at is not None else (-1 if step == 1 else last + 1)
                st["pos"] = max(0, min(base + step, last))
            elif action == "goto" and at is not None:
                st["pos"] = at
            elif action == "unjudged":
                st["pos"] = self._next_unjudged(st, at if at is not None else -1)
                return self.outputs(st, S.LABEL_NONE_LEFT if st["pos"] is None else "")
            return self.outputs(st)
        except EcoLensError as exc:
            warn([user_message(exc)])
            return self.outputs(st, user_message(exc))

    def _judge(self, st: dict[str, Any], annotator: str, at: int | None, value: int):
        if at is None:  # every photo judged and none picked: a key must not overwrite anything
            return self.outputs(st, S.LABEL_ALL_DONE)
        name = self.log.annotator(annotator)
        if not bounds.name_key(name):
            raise InputError("The annotator name is empty", "type your name before judging")
        hit = st["items"][at]
        seconds = max(0.0, self.clock() - float(st.get("shown_at") or self.clock()))
        if st["session_id"] is None:
            st["session_id"] = self.log.start_session("label", f"{st['query'][:60]} ({name})")
        label = Label(session_id=st["session_id"], query=st["query"], photo_id=int(hit["id"]), label=value,
                      annotator=name, seconds=seconds)
        frames = self._event_frames(hit, label)
        lid = self.log.add_label(label)
        more = [self.log.add_label(lb) for lb in frames]
        st["undo"] = [*st.get("undo", []), {"label_id": lid, "photo": int(hit["id"]), "more": more}]
        st["done"] = {**st["done"], str(hit["id"]): value}
        st["pos"] = self._next_unjudged(st, at)
        said = S.LABEL_SAVED.format(pos=at + 1, label=S.LABEL_NAMES[value], seconds=seconds)
        return self.outputs(st, f"{said} {SC.CT_EVENT_LABEL.format(n=len(more) + 1)}" if more else said)

    def _event_frames(self, hit: dict[str, Any], label: Label) -> list[Label]:
        """The same label for the other frames of an event card's event (a hit of a search with one result per
        event); [] for any other photo."""
        if self.camtrap is None or len(hit.get("event_frame_ids") or []) < 2:
            return []
        return self.camtrap.event_labels(label)[1:]

    def _undo(self, st: dict[str, Any], annotator: str):
        if not st.get("undo"):
            return self.outputs(st, S.LABEL_NOTHING_TO_UNDO)
        last = st["undo"][-1]
        st["undo"] = st["undo"][:-1]
        for more in last.get("more") or []:  # the same label on the other frames of an event
            self.log.remove_label(int(more))
        removed = self.log.remove_label(int(last["label_id"]))
        before = [lb for lb in self.log.labels(query=st["query"])
                  if same_annotator(lb.annotator, removed.annotator) and lb.photo_id == removed.photo_id]
        done = dict(st["done"])
        if before:
            done[str(removed.photo_id)] = before[-1].label
        else:
            done.pop(str(removed.photo_id), None)
        st["done"] = done
        at = next((i for i, h in enumerate(st["items"]) if int(h["id"]) == removed.photo_id), 0)
        st["pos"] = at
        if before:
            return self.outputs(st, S.LABEL_UNDONE.format(pos=at + 1, label=S.LABEL_NAMES[before[-1].label]))
        return self.outputs(st, S.LABEL_UNDONE_NONE.format(pos=at + 1))

    @shows_errors
    def label_photo(self, query: str, photo_id: int, label: int, annotator: str, seconds: float = 0.0,
                    whole_event: bool = False) -> int:
        """Scriptable labelling: record that `photo_id` is relevant (1), not (0) or skipped (-1) for `query`
        by `annotator`; returns the label's id. Each call's labels go to one 'api' session per query. With
        `whole_event`, a camera-trap frame's label is given to every frame of its event too."""
        query = clean_query(query)
        label_ = Label(session_id=0, query=query, photo_id=self._known_photo(photo_id),
                       label=bounds.whole_number("label", label, -1, 1, "use 1 relevant, 0 not relevant, -1 skip"),
                       annotator=self.log.annotator(annotator), seconds=bounds.seconds(seconds)).checked()
        self.engine.give_way()  # a label write waits a moment for running plain searches (bounded): they come first
        mine = (self.log.identity.owner_key(), bounds.name_key(label_.annotator), query)  # one session per person
        with self._api_lock:  # calls at once for a new query share one session
            if mine not in self._api_sessions:
                self._api_sessions[mine] = self.log.start_session("label", f"{query[:60]} (api: {label_.annotator})")
            sid = self._api_sessions[mine]
        first = replace(label_, session_id=sid)
        frames = self.camtrap.event_labels(first)[1:] if whole_event and self.camtrap is not None else []
        lid = self.log.add_label(first)
        for lb in frames:
            self.log.add_label(lb)
        return lid

    def _known_photo(self, photo_id: Any) -> int:
        """A photo id of the catalog; InputError / NotFoundError for anything else."""
        pid = bounds.whole_number("photo id", photo_id, 1, bounds.MAX_ID, "use a photo id shown in the results")
        if not self.engine.corpus.photos([pid]):
            raise NotFoundError(f"No photo {pid} in the catalog", "use a photo id shown in the results")
        return pid

    # ---- instructions, export, agreement ---------------------------------------------------------
    @shows_errors
    def save_instructions(self, text: str, st: dict[str, Any] | None) -> str:
        st = st or new_label_state()
        if not st.get("query"):
            return ""
        if (text or "").strip() == self.log.instructions(st["query"]):
            return ""
        self.log.set_instructions(st["query"], text or "")
        return S.INSTRUCTIONS_SAVED.format(query=tables.md_cell(st["query"]))

    @shows_errors
    def export(self, fmt: str = "csv", query: str | None = None, annotator: str | None = None,
               st: dict[str, Any] | None = None) -> str:
        """Write the labels of `query` (default: the loaded one), everyone's or one annotator's, to a file
        under data/exports; returns the path of a copy to download."""
        st = st or new_label_state()
        query = clean_query(query) if (query or "").strip() else st.get("query", "")
        if not query:
            raise InputError("No query to export", "type the query whose labels you want, or load its photos")
        fmt = (fmt or "csv").strip().lower()
        if fmt not in EXPORT_SUFFIX:
            raise InputError(f"Unknown export format {fmt!r}", "choose one of: " + ", ".join(EXPORT_SUFFIX))
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        path = self.engine.settings.path("exports", f"labels-{stamp}.{EXPORT_SUFFIX[fmt]}")
        if (annotator or "").strip() and self.log.identity.visible_owner() is not None:
            annotator = self.log.annotator(annotator)  # an annotator exports their own labels only
        scores = {h["id"]: h["score"] for h in st.get("items") or []} if st.get("query") == query else {}
        sources = ExportSources(self.engine.settings, self.log, self.engine.corpus.photos,
                                getattr(self.engine.corpus, "camtrap", None))
        done = exporting.export(sources, fmt, path, query, annotator or "", scores)
        rows = done.rows
        warn(exporting.few(done.notices))  # a Darwin Core export's licences GBIF cannot take, a missing contact
        try:
            self.log.log_export(ExportRecord(session_id=st.get("session_id"), format=fmt, path=str(path), rows=rows))
        except EcoLensError as exc:  # the file is written and offered; only its record is missing
            warn([not_recorded(exc)])
        # the download is a copy in a fresh temporary folder: the data directory itself is never served
        download = Path(tempfile.mkdtemp(prefix="ecolens-export-")) / path.name
        shutil.copyfile(path, download)
        return str(download)

    @shows_errors
    def kappa(self, st: dict[str, Any] | None):
        """(agreement table, disagreements gallery, note, state): kappa per pair of annotators, then the photos
        they disagree on, each with every annotator's label and the final word if given."""
        st = dict(st or new_label_state())
        self.log.may_compare()
        if not st.get("query"):
            return S.LABEL_NOTHING, [], "", st
        labels = self.log.labels(query=st["query"])
        found = disagreements(labels)
        st["disagreements"] = [d.photo_id for d in found]
        paths, _ = self.photos.files(st["disagreements"])
        items = []
        for path, d in zip(paths, found):
            who = ", ".join(f"{a}: {S.LABEL_NAMES[v]}" for a, v in d.labels.items())
            final = S.LABEL_NAMES[d.adjudicated] if d.adjudicated is not None else S.NOT_DECIDED
            items.append((path, S.DISAGREEMENT_CAPTION.format(photo=d.photo_id, who=who, final=final)))
        note = S.DISAGREEMENTS if found else (S.DISAGREEMENTS_NONE if agreement(labels) else "")
        return tables.kappa_md(agreement(labels)), items, note, st

    def pick(self, st: dict[str, Any] | None, evt: gr.SelectData) -> dict[str, Any]:
        st = dict(st or new_label_state())
        found = st.get("disagreements") or []
        st["pick"] = found[evt.index] if isinstance(evt.index, int) and evt.index < len(found) else None
        return st

    @shows_errors
    def adjudicate(self, value: int, annotator: str, st: dict[str, Any] | None):
        """The final word on the picked disagreement, saved as a label by 'adjudicated' (core.labels)."""
        st = dict(st or new_label_state())
        self.log.may_compare()
        if not st.get("pick"):
            raise InputError(S.ADJUDICATE_PICK.rstrip("."), "")
        if st["session_id"] is None:
            who = self.log.annotator(annotator) or "?"
            st["session_id"] = self.log.start_session("label", f"{st['query'][:60]} ({who})")
        self.log.add_label(Label(session_id=st["session_id"], query=st["query"], photo_id=int(st["pick"]),
                                 label=int(value), annotator=ADJUDICATED))
        table, items, _, st = self.kappa(st)
        return table, items, S.ADJUDICATED.format(photo=st["pick"], label=S.LABEL_NAMES[int(value)]), st
