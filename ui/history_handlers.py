"""Handlers of the history view: list past sessions from the log (empty ones left out) and reopen one fully:
each search's ranking as a gallery (a click opens the photo view with its yes/no badges), the pictures it was
searched with, the dialogue turns, and the labels."""
from __future__ import annotations

from typing import Any

import gradio as gr

from core.contracts.sessionlog import RequestRecord, SessionDetail, SessionLog
from ui import present, tables
from ui import strings as S
from ui.forms import shows_errors, warn
from ui.photos import PhotoFiles
from ui.search_record import read_stage


def new_history_state() -> dict[str, Any]:
    return {"session_id": None, "query": "", "preset": "", "method": "", "hits": [], "stages": {}}


def session_token(value: Any) -> str | None:
    """A session's token from the list or sent by a script (a search's `session_id`); None for nothing. A
    number, a list or anything else is not looked up: the log answers it as a session that does not exist."""
    if value in (None, ""):
        return None
    return value.strip() if isinstance(value, str) else value


class HistoryHandlers:
    def __init__(self, engine: Any, log: SessionLog):
        self.engine, self.log = engine, log
        self.photos = PhotoFiles(engine)

    def choices(self) -> list[tuple[str, str]]:
        """Sessions that hold something (searches or labels), most recent first; each chosen by its token."""
        return [(f"{s.created_at:%Y-%m-%d %H:%M} · {S.KINDS.get(s.kind, s.kind)} · {s.named()} "
                 f"({S.counted(s.requests, 'search', 'searches')}, {S.counted(s.labels, 'label', 'labels')})", s.token)
                for s in self.log.sessions(200) if s.requests or s.labels]

    @shows_errors
    def refresh(self):
        choices = self.choices()
        return gr.update(choices=choices, value=choices[0][1] if choices else None)

    # ---- one request of a session ------------------------------------------------------------------
    def _request_state(self, detail: SessionDetail, request: RequestRecord) -> dict[str, Any]:
        final = next((s for s in request.stages if s.name == "final"), None)
        stages = {s.name: read_stage(s.artefacts) for s in request.stages if s.name != "final"}
        similarity = (final.artefacts.get("similarity") if final else None) or {}
        hits = [h.to_json() for h in self.engine.corpus.hits(final.ranking if final else [])]
        cover = {int(p["id"]): p.get("satisfies", []) for p in (stages.get("coverage") or {}).get("photos") or []}
        subs = (stages.get("coverage") or {}).get("subqueries") or []
        for h in hits:
            if str(h["id"]) in similarity:
                h["similarity"] = similarity[str(h["id"])]
            elif request.method.split("+")[0] == "plugir":
                h["similarity"] = h["score"]  # a dialogue's candidates are ranked by similarity itself
            if h["id"] in cover:
                h["covers"] = [present.subquery_text(subs, i) for i in cover[h["id"]]]
        scale = present.scale_of(stages)
        if scale == "similarity" and "visret" in request.method and not stages.get("visret"):
            scale = "pictures"  # a comparison logs no stages: its Visualize / Verify columns were by the drawings
        return {"session_id": detail.session.id, "request_id": request.id, "query": request.query, "scale": scale,
                "method": request.method, "preset": str(request.settings.get("preset") or
                                                         S.method_name(request.method)),
                "hits": hits, "stages": stages}

    def _show(self, detail: SessionDetail, hstate: dict[str, Any]):
        """(gallery, visualizations, state) of the request in `hstate`; labels of this session on captions."""
        last = {lb.photo_id: lb for lb in detail.labels if lb.query == hstate.get("query")}
        items, missing = self.photos.gallery(hstate["hits"], hstate["stages"], hstate.get("scale"))
        items = [(path, caption + (f" · {S.LABEL_NAMES.get(last[h['id']].label, '')} ({last[h['id']].annotator})"
                                   if h["id"] in last else ""))
                 for (path, caption), h in zip(items, hstate["hits"])]
        if not hstate["hits"] and detail.labels:  # a labelling session: the photos judged, with their last label
            latest = {lb.photo_id: lb for lb in detail.labels}
            paths, missing = self.photos.files(list(latest))
            items = [(path, f"{pid} · {S.LABEL_NAMES.get(lb.label, '')} ({lb.annotator})")
                     for path, (pid, lb) in zip(paths, latest.items())]
        warn(missing)
        return items, self.photos.pictures(present.visualization_items(hstate["stages"])), hstate

    @staticmethod
    def _chat(detail: SessionDetail) -> list[dict[str, str]]:
        chat: list[dict[str, str]] = []
        for t in detail.turns:
            if t.question:
                chat.append({"role": "assistant", "content": t.question})
            if t.answer:
                chat.append({"role": "user", "content": t.answer})
        return chat

    # ---- reopening -----------------------------------------------------------------------------------
    @shows_errors
    def open(self, session_id: Any):
        """Outputs: (searches table, gallery, pictures, dialogue turns, labels table, state), plain values for
        scripts. `session_id`: a token from the list, or the `session_id` a search returned to a script."""
        token = session_token(session_id)
        if token is None:
            return S.HISTORY_PICK, [], [], [], "", new_history_state()
        detail = self.log.session(self.log.find(token))
        info = detail.session
        head = S.HISTORY_SESSION.format(kind=S.KINDS.get(info.kind, info.kind),
                                        when=f"{info.created_at:%Y-%m-%d %H:%M}", title=tables.md_cell(info.named()))
        rows = [f"**{head}**", "", "| # | query | how | photos |", "|---|---|---|---|"]
        for i, r in enumerate(detail.requests, start=1):
            final = next((s for s in r.stages if s.name == "final"), None)
            rows.append(f"| {i} | {tables.md_cell(r.query)} | {tables.md_cell(S.method_name(r.method))} | "
                        f"{len(final.ranking) if final else 0} |")
        table = "\n".join(rows) if detail.requests else f"**{head}**"
        hstate = (self._request_state(detail, detail.requests[-1]) if detail.requests
                  else {**new_history_state(), "session_id": info.id})
        gallery, pictures, hstate = self._show(detail, hstate)
        if hstate["hits"]:
            table += "\n\n" + present.scale_line(hstate.get("scale") or present.scale_of(hstate["stages"]),
                                                   hstate["stages"])
        lab_rows = ["| photo | label | annotator | seconds | when |", "|---|---|---|---|---|"]
        lab_rows += [f"| {lb.photo_id} | {S.LABEL_NAMES.get(lb.label, lb.label)} | {tables.md_cell(lb.annotator)} | "
                     f"{lb.seconds:.1f} | {lb.created_at:%Y-%m-%d %H:%M:%S} |" for lb in detail.labels]
        return (table, gallery, pictures, self._chat(detail), "\n".join(lab_rows) if detail.labels else "",
                hstate)

    def requests_picker(self, hstate: dict[str, Any] | None):
        """The choice of which search of the reopened session to show (shown when it has several)."""
        hstate = hstate or new_history_state()
        if hstate.get("session_id") is None:
            return gr.update(choices=[], value=None, visible=False)
        picks = []
        for i, r in enumerate(self.log.session(int(hstate["session_id"])).requests, start=1):
            final = next((s for s in r.stages if s.name == "final"), None)
            picks.append((f"{i}. {S.method_name(r.method)} · “{r.query[:60]}” · {len(final.ranking) if final else 0} "
                          "photos", int(r.id)))
        return gr.update(choices=picks, value=hstate.get("request_id"), visible=len(picks) > 1)

    @shows_errors
    def show_request(self, request_id: Any, hstate: dict[str, Any] | None):
        """Another search of the reopened session: (gallery, pictures, state)."""
        hstate = hstate or new_history_state()
        if request_id in (None, "") or hstate.get("session_id") is None:
            return [], [], hstate
        detail = self.log.session(int(hstate["session_id"]))
        request = next((r for r in detail.requests if r.id == int(request_id)), None)
        if request is None:
            return [], [], hstate
        return self._show(detail, self._request_state(detail, request))
