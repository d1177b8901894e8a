"""A total wall-clock bound on every HTTP call to a model server: connect, first byte and the whole body,
retries and their waits included.

A per-read timeout never fires on a reply that keeps trickling (one byte a second), so the bound is kept
where the bytes arrive: the transport's network streams take their timeout from the call's `Clock` (a
context variable set around one backend call by `openai_common.calling`), and a read or write that would
start after the deadline raises the client's own timeout error, which closes the connection. Retries are the
transport's, not the openai client's: a 429 or 5xx is retried only when its `Retry-After` (or the back-off)
fits in what is left of the deadline; otherwise the reply goes back at once and the clock remembers why, so
the error can name the rate limit instead of waiting it out.

A search's own time limit (`search_limit`, set by the engine around one search and copied into the threads
it starts) bounds every clock started under it: a call never gets more than what is left of the search, and
a clock cut by the search rather than by its own limit says so (`Clock.search_s`), so the error blames the
time limit and not the server.

The same transport works for the `httpx` and the `httpx2` client stacks (the openai package uses one of
them); `transport_for(http_module, core_module, ...)` builds it for the given pair."""
from __future__ import annotations

import contextvars
import email.utils
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

log = logging.getLogger(__name__)
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)


@dataclass
class Clock:
    """One backend call's deadline and what happened under it (read by the error messages)."""

    total_s: float
    retries: int = 0
    end: float = field(default=0.0)
    received: int = 0  # bytes of reply received in the current attempt
    attempts: int = 0
    cut: bool = False  # the deadline cut a read or write short
    rate_limit: tuple[int, float | None, float] | None = None  # (status, asked wait or None, seconds left then)
    status: int | None = None  # the last HTTP status seen
    search_s: float | None = None  # the search's time limit, when it ends this call before total_s does

    start: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if not self.end:
            self.end = self.start + self.total_s

    def left(self) -> float:
        return self.end - time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start


_CLOCK: contextvars.ContextVar[Clock | None] = contextvars.ContextVar("ecolens_backend_clock", default=None)
# the running search's (end on the monotonic clock, its whole limit in seconds)
_SEARCH: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar("ecolens_search_limit",
                                                                                      default=None)


def current() -> Clock | None:
    return _CLOCK.get()


@contextmanager
def search_limit(end: float, total_s: float) -> Iterator[None]:
    """Inside the block (and in threads started with a copy of its context) every backend clock ends at the
    latest at `end` (time.monotonic()), the end of a search whose whole limit is `total_s` seconds."""
    token = _SEARCH.set((float(end), float(total_s)))
    try:
        yield
    finally:
        _SEARCH.reset(token)


def search_left() -> tuple[float, float] | None:
    """(seconds left, the search's whole limit) of the running search; None outside a search with a limit."""
    found = _SEARCH.get()
    return None if found is None else (found[0] - time.monotonic(), found[1])


@contextmanager
def clock(total_s: float, retries: int = 0) -> Iterator[Clock]:
    """Run the block under a fresh deadline of `total_s` seconds (a clock already running keeps its own end
    when it is the earlier one: an outer bound is never extended; nor is the running search's limit)."""
    outer = _CLOCK.get()
    c = Clock(float(total_s), int(retries))
    if outer is not None and outer.end < c.end:
        c.end, c.total_s, c.search_s = outer.end, outer.total_s, outer.search_s
    search = _SEARCH.get()
    if search is not None and search[0] < c.end:
        c.end, c.search_s = search[0], search[1]
    token = _CLOCK.set(c)
    try:
        yield c
    finally:
        _CLOCK.reset(token)


@contextmanager
def no_retries() -> Iterator[None]:
    """Inside the block the running clock's call is not retried (e.g. a request that probes an option)."""
    c = _CLOCK.get()
    if c is None:
        yield
        return
    before, c.retries = c.retries, 0
    try:
        yield
    finally:
        c.retries = before


def retry_after_s(headers: Any) -> float | None:
    """The wait a reply asks for: Retry-After in seconds or as an HTTP date, or retry-after-ms; None if absent."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _bounded(timeout: float | None, exc_type: type[Exception]) -> float | None:
    """A network operation's timeout cut to the running clock's remaining time; past the deadline, raise."""
    c = _CLOCK.get()
    if c is None:
        return timeout
    left = c.left()
    if left <= 0:
        c.cut = True
        raise exc_type(f"the call's total limit of {c.total_s:g} s has passed")
    return left if timeout is None else min(timeout, left)


def transport_for(hx: Any, hc: Any, total_s: float, retries: int) -> Any:
    """An `hx.HTTPTransport` (hx: httpx or httpx2, hc: the matching httpcore) bounded as described above.
    `total_s` and `retries` apply to requests made outside any clock (a clock from `clock()` wins)."""

    class BoundedStream(hc.NetworkStream):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            data = self.inner.read(max_bytes, _bounded(timeout, hc.ReadTimeout))
            c = _CLOCK.get()
            if c is not None:
                c.received += len(data)
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self.inner.write(buffer, _bounded(timeout, hc.WriteTimeout))

        def close(self) -> None:
            self.inner.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None):
            return BoundedStream(self.inner.start_tls(ssl_context, server_hostname,
                                                      _bounded(timeout, hc.ConnectTimeout)))

        def get_extra_info(self, info: str) -> Any:
            return self.inner.get_extra_info(info)

    class BoundedBackend(hc.NetworkBackend):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                        socket_options: Any = None):
            return BoundedStream(self.inner.connect_tcp(host, port, _bounded(timeout, hc.ConnectTimeout),
                                                        local_address, socket_options))

        def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None):
            return BoundedStream(self.inner.connect_unix_socket(path, _bounded(timeout, hc.ConnectTimeout),
                                                                socket_options))

        def sleep(self, seconds: float) -> None:
            self.inner.sleep(seconds)

    class BoundedBody(hx.SyncByteStream):
        """The reply body, read under the call's clock even when read after the transport returned."""

        def __init__(self, inner: Any, c: Clock, check_between_chunks: bool) -> None:
            self.inner, self.clock, self.check = inner, c, check_between_chunks

        def __iter__(self):
            chunks = iter(self.inner)
            while True:
                token = _CLOCK.set(self.clock)
                try:
                    chunk = next(chunks)
                except StopIteration:
                    return
                finally:
                    _CLOCK.reset(token)
                yield chunk
                if self.check and self.clock.left() <= 0:  # the network streams could not be wrapped
                    self.clock.cut = True
                    raise hx.ReadTimeout(f"the reply was still arriving after {self.clock.total_s:g} s")

        def close(self) -> None:
            self.inner.close()

    class BoundedTransport(hx.HTTPTransport):
        def __init__(self) -> None:
            super().__init__()
            self.total_s, self.retries = float(total_s), int(retries)
            pool = getattr(self, "_pool", None)
            if pool is not None and hasattr(pool, "_network_backend"):
                pool._network_backend = BoundedBackend(pool._network_backend)
                self.streams_bounded = True
            else:  # another client version: the body is still cut between chunks
                log.warning("the HTTP client's network streams could not be bounded; a reply's headers may "
                            "outlast backend_timeout_s")
                self.streams_bounded = False

        def handle_request(self, request: Any) -> Any:
            c = _CLOCK.get()
            token = None
            if c is None:
                c = Clock(self.total_s, self.retries)
                token = _CLOCK.set(c)
            try:
                return self._attempts(request, c)
            finally:
                if token is not None:
                    _CLOCK.reset(token)

        def _attempts(self, request: Any, c: Clock) -> Any:
            request.read()  # the body in memory, so a retry can send it again
            attempt = 0
            while True:
                left = c.left()
                if left <= 0:
                    c.cut = True
                    raise hx.ConnectTimeout(f"the call's total limit of {c.total_s:g} s has passed",
                                            request=request)
                timeouts = dict(request.extensions.get("timeout") or {})
                request.extensions["timeout"] = {k: left if timeouts.get(k) is None else min(timeouts[k], left)
                                                 for k in ("connect", "read", "write", "pool")}
                c.attempts += 1
                c.received = 0
                try:
                    response = super().handle_request(request)
                except hx.TimeoutException:
                    raise
                except hx.TransportError:  # could not connect, connection dropped: retried while time is left
                    wait = BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)]
                    if attempt >= c.retries or wait >= c.left():
                        raise
                    attempt += 1
                    time.sleep(wait)
                    continue
                c.status = response.status_code
                if response.status_code not in RETRY_STATUSES:
                    response.stream = BoundedBody(response.stream, c, not self.streams_bounded)
                    return response
                asked = retry_after_s(response.headers)
                wait = asked if asked is not None else BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)]
                if response.status_code == 429:
                    c.rate_limit = (429, asked, max(0.0, c.left()))
                if attempt >= c.retries or wait >= c.left():
                    log.warning("%s %s answered HTTP %s%s; not retried (%s)", request.method, request.url.host,
                                response.status_code, f" asking to wait {asked:g} s" if asked is not None else "",
                                "no retries left" if attempt >= c.retries else
                                f"only {max(0.0, c.left()):.1f} s of {c.total_s:g} s left")
                    response.stream = BoundedBody(response.stream, c, not self.streams_bounded)
                    return response
                response.close()
                attempt += 1
                time.sleep(wait)

    return BoundedTransport()

