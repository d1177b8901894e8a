"""Session tokens: what the page and the API call a session by. A token is random (128 bits, URL-safe
base64), stored with the session in the log; the session's number stays inside the process. Any value that is
not the token of a session its asker may open (a number, another person's token, SQL text, nothing) gets the
one answer `no_such_session`, so an asker cannot tell another person's session from one that does not exist."""
from __future__ import annotations

import re
import secrets
from typing import Any

from core.contracts.errors import NotFoundError

TOKEN_BYTES = 16
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,40}$")
FIX = "pick a session from the History list, or use the session_id a search returned"


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def looks_like_token(value: Any) -> bool:
    """Whether `value` has a token's shape (a string of 16-40 URL-safe characters): nothing else is looked up."""
    return isinstance(value, str) and bool(_TOKEN.match(value.strip()))


def no_such_session(value: Any) -> NotFoundError:
    """The one answer for a session the asker may not open, whatever the reason."""
    shown = str(value).strip() if value is not None else ""
    shown = shown if len(shown) <= 40 else shown[:40] + "…"
    return NotFoundError(f"There is no session {shown!r}", FIX)
