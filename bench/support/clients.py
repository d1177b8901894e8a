"""How the load bench's gradio_client sessions talk to the server, so that they measure the server and not
themselves: one TLS context for every call (gradio_client makes a new httpx client per call, and each built
its own context, loading the CA bundle: 82% of the bench's CPU by py-spy), and how often a session looks for
a call's next message (gradio_client's own 50 ms rounds every measured call up)."""
from __future__ import annotations

import functools
import ssl
import time


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """The one TLS context every client call of this bench shares (certificates checked as httpx's default)."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class _PollClock:
    """gradio_client.utils's `time` with its sleeps cut to `poll` seconds: gradio_client looks for a call's next
    message every 50 ms, so a measured call is rounded up by up to 50 ms per message (a Fast search alone took
    0.055 or 0.105 s by that count, 0.03-0.06 s on the server); a browser's EventSource has no such poll."""

    def __init__(self, poll: float):
        self.poll = poll

    def sleep(self, seconds: float) -> None:
        time.sleep(min(seconds, self.poll))

    def __getattr__(self, name: str):
        return getattr(time, name)


def set_client_poll(poll: float) -> None:
    """--client-poll: how often gradio_client looks for a call's next message (its own: 0.05 s)."""
    from gradio_client import utils as client_utils

    client_utils.time = _PollClock(poll) if poll < 0.05 else time
