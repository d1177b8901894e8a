"""The session log as the current asker may use it (ui.identity): sessions opened are owned by the logged-in
person, the list and a session's token show only their own (an owner's: everyone's), a label is saved under
their name only and the labels they read are their own. Without personal logins it is the log itself.
Everything the handlers ask of the log goes through here, so no handler can forget whose data it touches."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.contracts import bounds
from core.contracts.errors import InputError
from core.contracts.sessionlog import Label, SessionInfo, SessionLog
from core.labels import ADJUDICATED
from ui.identity import Identity

NOT_YOUR_NAME = ("You are logged in as {me!r}: you label, load and export labels under your own name only, "
                 "not {other!r}")
NOT_YOUR_NAME_HINT = "leave the annotator empty (or give your own name); to work as someone else, log in as them"
OWNER_ONLY = "Only the project's owner sees the agreement between annotators"
OWNER_ONLY_HINT = "ask the owner (role owner in the users file); your own labels are in your export"


class OwnedLog:
    def __init__(self, log: SessionLog, identity: Identity):
        self.log, self.identity = log, identity

    def __getattr__(self, name: str) -> Any:  # requests, stages, turns, instructions, exports: as the log has them
        return getattr(self.log, name)

    # ---- sessions ------------------------------------------------------------------------------------
    def start_session(self, kind: str, title: str = "", owner: str = "") -> int:
        return self.log.start_session(kind, title, self.identity.owner_key())

    def sessions(self, limit: int = 50, owner: str | None = None) -> list[SessionInfo]:
        return self.log.sessions(limit, self.identity.visible_owner())

    def find(self, token: Any, owner: str | None = None) -> int:
        return self.log.find(token, self.identity.visible_owner())

    # ---- labels --------------------------------------------------------------------------------------
    def annotator(self, typed: str | None) -> str:
        """The name a label is saved under: the logged-in person's (another typed name refused), else as typed."""
        who = self.identity.person()
        if who is None:
            return bounds.name(typed or "")
        if bounds.name_key(typed or "") not in ("", who.key):
            raise InputError(NOT_YOUR_NAME.format(me=who.name, other=bounds.name(typed)[:60]), NOT_YOUR_NAME_HINT)
        return who.name

    def add_label(self, label: Label) -> int:
        who = self.identity.person()
        if who is not None and not (who.is_owner and label.annotator == ADJUDICATED):
            label = replace(label, annotator=self.annotator(label.annotator))
        return self.log.add_label(label)

    def labels(self, session_id: int | None = None, query: str | None = None) -> list[Label]:
        found = self.log.labels(session_id, query)
        mine = self.identity.visible_owner()
        if mine is None:
            return found
        return [lb for lb in found if bounds.name_key(lb.annotator) == mine]

    def may_compare(self) -> None:
        """InputError unless the asker may see the agreement between annotators (an owner, or no logins)."""
        if self.identity.visible_owner() is not None:
            raise InputError(OWNER_ONLY, OWNER_ONLY_HINT)

    def is_personal(self) -> bool:
        return self.identity.personal
