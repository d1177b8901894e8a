"""Handlers of the dialogue view (PlugIR): start from a description, then one question per turn; the user
answers in words, picks a suggestion, says not sure, or marks photos; every turn is logged."""
from __future__ import annotations

import itertools
import logging
from collections import OrderedDict
from typing import Any

import gradio as gr

from core.config import masked
from core.contracts import bounds
from core.contracts.errors import EcoLensError, InputError
from core.contracts.sessionlog import RequestRecord, SessionLog, StageRecord, TurnRecord
from ui import strings as S
from ui.forms import not_recorded, note, shows_errors, warn, web_notices
from ui.photos import PhotoFiles
from ui.search_record import stored_stage

log = logging.getLogger(__name__)
MAX_LIVE = 64  # dialogue sessions kept in memory; the oldest are forgotten (their log stays)


def new_dialogue_state() -> dict[str, Any]:
    return {"id": None, "hits": [], "marked": [], "chat": [], "notices_shown": 0, "stages": None}


def dialogue_stages(model: str | None) -> dict[str, Any] | None:
    """What the candidates' gallery and photo view read their scores by (ui.present): None for a ranking by
    similarity itself; with an offline stand-in embedder (`model`: SearchEngine.standin_similarity), the stage
    that has them called stand-in scores that mean nothing about the photo, as a search's are."""
    return {"standin_similarity": model} if model else None


class DialogueHandlers:
    def __init__(self, engine: Any, log: SessionLog, ready=lambda: None):
        self.engine, self.log, self.ready = engine, log, ready
        self._live: OrderedDict[int, Any] = OrderedDict()
        self._unlogged = itertools.count(1)  # keys of conversations the log could not open yet (negative)
        self.photos = PhotoFiles(engine)

    def _session(self, st: dict[str, Any]):
        session = self._live.get(st.get("id")) if st.get("id") is not None else None
        if session is None:
            raise InputError("This conversation is no longer open", "press Start to begin a new one")
        return session

    def _ask(self, st: dict[str, Any], session: Any, question: Any) -> tuple:
        """Show the next question: (chat, suggestions, gallery, description, marked, answer box, state)."""
        fresh = session.notices[st.get("notices_shown", 0):]
        warn(fresh)  # what failed since the last turn, once
        st = {**st, "notices_shown": len(session.notices)}
        if question.fallback:  # how the dialogue went about it, not a failure: a note in the page's words
            note(S.DIALOGUE_OWN_QUESTION)
        # a candidate's score is its similarity itself (the page shows it on the 0-1 similarity scale)
        hits = [{**h, "similarity": h.get("similarity", h["score"])} for h in (x.to_json() for x in session.hits())]
        # the notices are in the chat too, so an API caller (and the page, after the toast) has the reason
        said = [{"role": "assistant", "content": text, "metadata": {"title": S.NOTICE_TITLE}}
                for text in web_notices(fresh)]
        st = {**st, "hits": hits, "marked": [],
              "chat": st["chat"] + said + [{"role": "assistant", "content": question.text}]}
        gallery = self._gallery(st, session)
        return (st["chat"], gr.update(choices=S.DIALOGUE_SUGGESTIONS, value=None), gallery, session.caption,
                marked_note(st, session), "", st)

    def _gallery(self, st: dict[str, Any], session: Any | None) -> list[tuple[str, str]]:
        """The candidates, each photo marked as looking right (this turn or an earlier one) starred in its
        caption, which keeps the rank number shown on screen."""
        gallery, missing = self.photos.gallery(st["hits"], st.get("stages"))
        warn(missing)
        starred = set(st["marked"]) | set(fed_back(session))
        return [(path, f"{S.LOOKS_RIGHT} {caption}" if h["id"] in starred else caption)
                for (path, caption), h in zip(gallery, st["hits"])]

    def _record(self, st: dict[str, Any], session: Any, question: str, answer: str) -> None:
        """Log the turn; when the log cannot be written the dialogue goes on, with a warning."""
        try:
            self._write_record(st, session, question, answer)
        except EcoLensError as exc:
            log.error("dialogue turn was not logged: %s", exc)
            warn([not_recorded(exc)])

    def _write_record(self, st: dict[str, Any], session: Any, question: str, answer: str) -> None:
        """The turn's request: its candidates as the final stage, with the stages their scores are read by
        (dialogue_stages: the stand-in's name), stored as a search's are, so History's replay says stand-in."""
        if st["id"] < 0:  # the log could not open this conversation at its start: try again now
            sid = self.log.start_session("dialogue", session.description[:80])
            self._live[sid] = self._live.pop(st["id"], session)
            st["id"] = sid
        ranked = [(h.photo_id, h.score) for h in session.hits()]
        rid = self.log.log_request(RequestRecord(
            session_id=st["id"], query=session.caption, method="plugir", settings=masked(self.engine.settings),
            models=self.engine.backends.describe(),
            stages=[StageRecord("final", ranked, {"turn": len(session.turns), "marked": st["marked"]})]
            + [StageRecord(name, [], stored_stage(art)) for name, art in (st.get("stages") or {}).items()]))
        self.log.log_turn(TurnRecord(session_id=st["id"], index=len(session.turns), question=question,
                                     answer=answer, description=session.caption, request_id=rid))

    @shows_errors
    def start(self, description: str, st: dict[str, Any] | None):
        self.ready()
        session = self.engine.dialogue(description)
        try:
            sid = self.log.start_session("dialogue", session.description[:80])
        except EcoLensError as exc:  # the conversation goes on; its turns are logged once the log answers
            log.error("dialogue session was not logged: %s", exc)
            sid = -next(self._unlogged)
        self._live[sid] = session
        while len(self._live) > MAX_LIVE:
            self._live.popitem(last=False)
        st = {**new_dialogue_state(), "id": sid, "chat": [{"role": "user", "content": session.description}],
              "stages": dialogue_stages(self.engine.standin_similarity())}
        self._record(st, session, "", session.description)
        with session.turn_deadline():  # the model late: the rules' question, with a notice saying so
            question = session.next_question()
        return self._ask(st, session, question)

    @shows_errors
    def turn(self, answer: str, st: dict[str, Any] | None):
        """One dialogue turn: the answer (words, a suggestion, 'not sure') plus any marked photos."""
        text = " ".join(bounds.text("answer", answer or "").split())
        st = dict(st or new_dialogue_state())
        session = self._session(st)
        question = session.pending.text if session.pending else ""
        if not text and not st["marked"]:
            raise InputError("The answer is empty", "type an answer, pick a suggestion, press Not sure or mark photos")
        marks = marked_ranks(st, st["marked"])  # the rank numbers on screen when the photos were marked
        with session.turn_deadline():  # one limit for the whole turn: the answer read, the next question
            session.answer(text, marked=st["marked"])
            said = " · ".join(x for x in (text, S.MARKED_SAID.format(ranks=marks) if marks else "") if x)
            st["chat"] = st["chat"] + [{"role": "user", "content": said}]
            self._record(st, session, question, said)
            asked = session.next_question()
        return self._ask(st, session, asked)

    def not_sure(self, st: dict[str, Any] | None):
        return self.turn("not sure", st)

    def mark(self, st: dict[str, Any], evt: gr.SelectData):
        """Toggle the selected candidate as 'looks right' (every marked photo stays starred in the gallery; they
        go to the dialogue as photos with the next answer). Returns (gallery, marked note, state)."""
        st = dict(st or new_dialogue_state())
        session = self._live.get(st.get("id")) if st.get("id") is not None else None
        index = evt.index if isinstance(evt.index, int) else None
        if index is not None and index < len(st["hits"]):
            pid = st["hits"][index]["id"]
            if pid not in fed_back(session):  # one already sent stays marked
                st["marked"] = ([m for m in st["marked"] if m != pid] if pid in st["marked"]
                                else st["marked"] + [pid])
        return self._gallery(st, session), marked_note(st, session), st


def fed_back(session: Any | None) -> list[int]:
    """Photos already given to the dialogue as looking right."""
    return list(getattr(session, "relevant", []) or [])


def marked_ranks(st: dict[str, Any], ids: list[int]) -> str:
    """'#2, #5': the rank numbers the gallery shows for `ids` (those on screen), in rank order."""
    rank_of = {h["id"]: h["rank"] for h in st["hits"]}
    return ", ".join(f"#{r}" for r in sorted(rank_of[i] for i in ids if i in rank_of))


def marked_note(st: dict[str, Any], session: Any | None) -> str:
    """What the marks mean now, naming photos by the rank numbers on screen."""
    lines = []
    pending = marked_ranks(st, st["marked"])
    if pending:
        lines.append(S.MARKED_PENDING.format(ranks=pending))
    earlier = [i for i in fed_back(session) if i not in st["marked"]]
    shown = marked_ranks(st, earlier)
    gone = sum(i not in {h["id"] for h in st["hits"]} for i in earlier)
    if shown:
        lines.append(S.MARKED_SENT.format(ranks=shown))
    if gone:
        lines.append(S.MARKED_GONE.format(n=gone, s="" if gone == 1 else "s", verb="is" if gone == 1 else "are"))
    return "\n\n".join(lines)
