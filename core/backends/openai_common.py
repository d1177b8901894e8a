"""What every OpenAI-compatible backend shares: building the client from settings, turning the client's
errors into BackendError, and packing a picture as a data URL.

The server may be api.openai.com or any compatible one (vLLM, Ollama, llama.cpp's server) at
`openai_base_url`. Every call has a TOTAL bound of `backend_timeout_s` (connect, reply, whole body, retries
and their waits: core.backends.http_bounds); `backend_retries` retries happen only while the server's
Retry-After fits in what is left. A server that fails several calls in a row is left alone for
`backend_cooldown_s` (a circuit breaker per backend): calls then fail at once with BackendUnavailable.
Inside a search with a time limit a call never gets more than what is left of it (http_bounds.search_limit);
a call that limit cuts short, or that starts after it, is a DeadlinePassed, which pauses nothing.
Error messages name the cause (no answer, still arriving, rate-limited) and the masked server address;
they never contain the API key or credentials inside the base URL (core.redact)."""
from __future__ import annotations

import base64
import io
import logging
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from PIL import Image

from core.backends import http_bounds
from core.contracts import bounds
from core.contracts.errors import BackendError, BackendUnavailable, DeadlinePassed
from core.redact import mask_url, mask_urls_in

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install openai"
PLACEHOLDER_KEY = "not-needed"  # local servers such as llama.cpp accept any key
VISION_NOTE = "the model named by judge_model must accept image input (a vision-language model)"
FAILURES_TO_PAUSE = 3  # failed calls in a row (no answer, rate limit, server error) that pause a backend
TIMEOUT_HINT = "check that the server is running and not overloaded, or raise backend_timeout_s"
SEARCH_TIME_HINT = ("raise the search's time limit (the deadline_*_s settings), or check that the server is not "
                    "overloaded")


def import_openai(setting: str) -> Any:
    try:
        import openai
    except ImportError:
        raise BackendError(f"The 'openai' package is not installed (needed by {setting}='openai...')",
                           f"{INSTALL_HINT}, or set {setting} to an offline backend") from None
    return openai


def api_key(settings: Any) -> str:
    """The key from settings, else $OPENAI_API_KEY, else a placeholder when a local base URL is set."""
    key = settings.openai_api_key or os.environ.get("OPENAI_API_KEY", "")
    if key:
        return key
    if settings.openai_base_url:
        return PLACEHOLDER_KEY
    raise BackendError("No API key for the OpenAI backend",
                       "set OPENAI_API_KEY (or ECOLENS_OPENAI_API_KEY), or set openai_base_url to a local "
                       "OpenAI-compatible server")


def make_client(settings: Any, setting: str) -> Any:
    """An `openai.OpenAI` client configured from settings (base URL, key), whose every call is bounded in
    total by backend_timeout_s and retried by the bounded transport (the client's own retries are off:
    they would wait out a Retry-After of any length)."""
    openai = import_openai(setting)
    total = float(settings.backend_timeout_s)
    retries = int(settings.backend_retries)
    client = openai.OpenAI(base_url=settings.openai_base_url or None, api_key=api_key(settings),
                           timeout=total, max_retries=0, http_client=_http_client(openai, total, retries))
    cooldown = float(settings.backend_cooldown_s)
    client.ecolens_limits = Limits(total, retries, cooldown)
    client.ecolens_breaker = Breaker(cooldown)
    return client


def _http_client(openai: Any, total: float, retries: int) -> Any:
    """The HTTP client of the stack this openai package uses (httpx2 or httpx), with the bounded transport."""
    if hasattr(openai, "DefaultHttpx2Client"):
        import httpcore2
        import httpx2
        return openai.DefaultHttpx2Client(transport=http_bounds.transport_for(httpx2, httpcore2, total, retries))
    import httpcore
    import httpx
    return openai.DefaultHttpxClient(transport=http_bounds.transport_for(httpx, httpcore, total, retries))


@dataclass(frozen=True)
class Limits:
    """A client's bounds from settings: total seconds per call, retries within them, cool-down after failures."""

    total_s: float
    retries: int
    cooldown_s: float


class Breaker:
    """Failed calls in a row of one backend; after FAILURES_TO_PAUSE of them the backend is not called for
    `cooldown_s` seconds, and every call in that time fails at once naming the cause."""

    def __init__(self, cooldown_s: float, clock=time.monotonic):
        self.cooldown_s, self.clock = float(cooldown_s), clock
        self.failures = 0
        self.opened_at: float | None = None
        self.cause: BackendError | None = None
        self._lock = threading.Lock()

    def failed(self, cause: BackendError) -> None:
        with self._lock:
            self.failures += 1
            if self.failures >= FAILURES_TO_PAUSE and self.opened_at is None:
                self.opened_at, self.cause = self.clock(), cause
                log.warning("backend paused for %.0f s after %d failed calls in a row: %s", self.cooldown_s,
                            self.failures, cause.message)

    def succeeded(self) -> None:
        with self._lock:
            self.failures, self.opened_at, self.cause = 0, None, None

    def check(self, what: str) -> None:
        """BackendUnavailable while paused; after the cool-down one call is let through to try again."""
        with self._lock:
            if self.opened_at is None or self.cause is None:
                return
            ago = self.clock() - self.opened_at
            if ago >= self.cooldown_s:
                self.opened_at = None  # half open: the next failure pauses it again at once
                self.failures = FAILURES_TO_PAUSE - 1
                return
            cause = self.cause
        raise BackendUnavailable(f"{what} was not sent: the last {FAILURES_TO_PAUSE} calls failed, the last "
                                 f"{ago:.0f} s ago ({cause.message}); the server is tried again in "
                                 f"{self.cooldown_s - ago:.0f} s", cause.hint or "check the server")


def server_name(client: Any) -> str:
    """The server's base URL for messages and model ids, credentials masked."""
    return mask_url(str(getattr(client, "base_url", "") or "the OpenAI API").rstrip("/"))


def _scrub(text: str, client: Any) -> str:
    key = getattr(client, "api_key", "") or ""
    if key and key != PLACEHOLDER_KEY:
        text = text.replace(key, "***")
    return mask_urls_in(text)


def translate_error(exc: BaseException, what: str, client: Any, clock: http_bounds.Clock | None = None) -> BackendError:
    """A BackendError that says what failed, where, and what to try; other exceptions get a generic one.
    With the call's clock the message says which limit ended it (no answer, reply still arriving, a
    Retry-After longer than the time left)."""
    where = server_name(client)
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    detail = _scrub(str(getattr(exc, "message", "") or exc), client)[:300]
    if name in ("APITimeoutError", "APIConnectionError") and clock is not None and (clock.cut or clock.left() <= 0.05):
        if clock.search_s is not None:  # the search's time limit ended it, not the call's own
            state = "was still sending its reply" if clock.received > 0 else "had not answered"
            return DeadlinePassed(f"{what} was cut off by the search's time limit of {clock.search_s:g} s: the "
                                  f"model server at {where} {state} after {clock.elapsed():.1f} s",
                                  SEARCH_TIME_HINT)
        if clock.received > 0:
            return BackendError(f"{what} was cut off: the model server at {where} was still sending its reply "
                                f"after {clock.total_s:g} s", TIMEOUT_HINT)
        return BackendError(f"{what} got no reply: the model server at {where} did not answer within "
                            f"{clock.total_s:g} s", TIMEOUT_HINT)
    if name == "APITimeoutError":
        total = f" within {clock.total_s:g} s" if clock is not None else ""
        return BackendError(f"{what} got no reply: the model server at {where} did not answer{total}", TIMEOUT_HINT)
    if name == "APIConnectionError":
        return BackendError(f"{what} could not reach the model server at {where}",
                            "check openai_base_url and that the server is running")
    if name == "AuthenticationError" or status in (401, 403):
        return BackendError(f"{what} was refused by {where}: the API key was not accepted",
                            "set a valid OPENAI_API_KEY / openai_api_key")
    if name == "RateLimitError" or status == 429:
        limited = clock.rate_limit if clock is not None else None
        asked = limited[1] if limited else None
        if asked is not None and clock is not None and asked >= limited[2]:
            limit = (f"the search's {clock.search_s:g} s time limit" if clock.search_s is not None else
                     f"the {clock.total_s:g} s limit")
            return BackendError(f"{what} was rate-limited (429) by the model server at {where}: it asked to wait "
                                f"{asked:g} s, but only {limited[2]:.1f} s of {limit} were left",
                                "wait and try again, lower judge_concurrency, or raise backend_timeout_s")
        return BackendError(f"{what} was rate-limited (429) by the model server at {where}",
                            "wait and try again, or lower judge_concurrency")
    if name == "NotFoundError" or status == 404:
        return BackendError(f"{what} failed at {where}: model or endpoint not found ({detail})",
                            "check the model name setting and openai_base_url")
    if status is not None:
        return BackendError(f"{what} failed at {where} with HTTP {status}: {detail}",
                            "check the request settings and the server's log")
    return BackendError(f"{what} failed at {where}: {name}: {detail}", "check the server and its log")


def is_option_rejected(exc: BaseException, option: str) -> bool:
    """True when the server refused the call because of `option`: HTTP 400/422, or any error status whose
    message names the option (llama-cpp-python's server answers a validation error with HTTP 500)."""
    status = getattr(exc, "status_code", None)
    return status in (400, 422) or (status is not None and option in str(exc))


TRANSIENT = ("got no reply", "was cut off", "rate-limited", "could not reach", "with HTTP 5")


@contextmanager
def calling(what: str, client: Any, note: str = "") -> Iterator[http_bounds.Clock]:
    """Run an openai call under one total deadline (the client's backend_timeout_s, retries included); any
    client error comes out as a BackendError naming the cause (`note` is added to its hint). A backend that
    failed several calls in a row is not called: BackendUnavailable at once."""
    limits = getattr(client, "ecolens_limits", None)
    breaker = getattr(client, "ecolens_breaker", None)
    search = http_bounds.search_left()
    if search is not None and search[0] <= 0.05:
        raise DeadlinePassed(f"{what} was not sent to the model server at {server_name(client)}: the search's "
                             f"time limit of {search[1]:g} s had passed", SEARCH_TIME_HINT)
    if breaker is not None:
        breaker.check(what)
    total = limits.total_s if limits is not None else _timeout_s(client)
    retries = limits.retries if limits is not None else 0
    with http_bounds.clock(total, retries) as clock:
        try:
            yield clock
        except BackendError as err:
            if breaker is not None and not isinstance(err, (BackendUnavailable, DeadlinePassed)) and _transient(err):
                breaker.failed(err)
            raise
        except Exception as exc:  # the client's errors and anything unexpected in its response handling
            module = type(exc).__module__ or ""
            if module.startswith("openai") or module.startswith("httpx"):
                err = translate_error(exc, what, client, clock)
                if note and not _transient(err) and not isinstance(err, DeadlinePassed):
                    err.hint = f"{err.hint}; {note}" if err.hint else note
                if breaker is not None and _transient(err) and not isinstance(err, DeadlinePassed):
                    breaker.failed(err)
                log.warning("%s (after %.1f s, %d attempt(s))", err.message, clock.elapsed(), clock.attempts)
                raise err from None
            raise
        if breaker is not None:
            breaker.succeeded()


def _transient(err: BackendError) -> bool:
    """A failure of the server rather than of this request: no answer, cut off, rate limit, 5xx."""
    return any(word in err.message for word in TRANSIENT)


def _timeout_s(client: Any) -> float:
    timeout = getattr(client, "timeout", None)
    if isinstance(timeout, (int, float)) and timeout > 0:
        return float(timeout)
    read = getattr(timeout, "read", None)
    return float(read) if isinstance(read, (int, float)) and read > 0 else 60.0


def image_data_url(image: Image.Image, max_side: int = 1024) -> str:
    """The picture as a JPEG data URL, scaled down so its longer side is at most `max_side`."""
    img = image.convert("RGB")
    if max(img.size) > max_side:
        img = img.copy()
        img.thumbnail((max_side, max_side))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def message_text(response: Any) -> str:
    """The first choice's text ('' when the server sent none)."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    return bounds.reply_text((getattr(message, "content", None) or "").strip())  # a 100 MB reply is no answer
