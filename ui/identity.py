"""Who is asking: the logged-in person of the request Gradio is handling (its LocalContext holds the request
for every event function, in the worker thread too), and what they may do.

Three ways to log in give a person: a `users_file` (Gradio's login form checks the name and password against
it: ui.login), and a Hugging Face login on a Space with OAuth (the Space's author is its owner, and so is
anyone the users file lists as owner). Then the annotator is that person, sessions and files are owned by
them, and only an owner sees everyone's labels and the agreement between annotators. Without a login, or with
the one shared `password`, there is no person: annotator names are typed, and everything is everyone's, as on
one person's own machine."""
from __future__ import annotations

import logging
import os
from typing import Any

from core.people.users import OWNER, Person, Users

log = logging.getLogger(__name__)


def current_request() -> Any:
    from gradio.context import LocalContext

    return LocalContext.request.get(None)


def _oauth_name(request: Any) -> str:
    """The Hugging Face user name of a request's login (a Space's OAuth session), or ''."""
    raw = getattr(request, "request", None)
    try:
        session = raw.session if raw is not None else getattr(request, "session", None)
    except (AssertionError, AttributeError):  # no session middleware: no OAuth login
        return ""
    info = (session or {}).get("oauth_info") if isinstance(session, dict) or hasattr(session, "get") else None
    user = (info or {}).get("userinfo") or {}
    return str(user.get("preferred_username") or "")


class Identity:
    """`users`: the users file (None without one); `oauth`: a Space with Hugging Face login."""

    def __init__(self, users: Users | None = None, oauth: bool = False, space_owner: str | None = None):
        self.users, self.oauth = users, oauth
        self.space_owner = space_owner if space_owner is not None else os.environ.get("SPACE_AUTHOR_NAME", "")

    @property
    def personal(self) -> bool:
        """Whether people log in as themselves (then names cannot be typed)."""
        return self.users is not None or self.oauth

    def person_of(self, request: Any) -> Person | None:
        if request is None or not self.personal:
            return None
        name = str(getattr(request, "username", None) or "") if self.users is not None else ""
        if name:  # logged in through the users file (one taken out of it meanwhile stays an annotator)
            listed = self.users.person(name) if self.users is not None else None
            return listed if listed is not None else Person(name, "annotator")
        name = _oauth_name(request) if self.oauth else ""
        if not name:
            return None
        listed = self.users.person(name) if self.users is not None else None
        owner = (listed is not None and listed.is_owner) or (self.space_owner and name == self.space_owner)
        return Person(name, OWNER if owner else "annotator")

    def person(self) -> Person | None:
        """The person the current event is for; None when nobody logs in as themselves."""
        return self.person_of(current_request())

    def owner_key(self) -> str:
        """What the current person's sessions and files are owned by ('' for nobody)."""
        who = self.person()
        return who.key if who is not None else ""

    def visible_owner(self) -> str | None:
        """Whose sessions and labels the current asker sees: None everyone's (an owner, or no logins at all),
        else one owner key (a person's own; '' for a visitor of a Space who has not logged in)."""
        if not self.personal:
            return None
        who = self.person()
        if who is None:
            return ""
        return None if who.is_owner else who.key
