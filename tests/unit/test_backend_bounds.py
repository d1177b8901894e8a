"""The pieces of bounded backend calls that need no server: the circuit breaker's pause and cool-down, and
reading Retry-After."""
from __future__ import annotations

import email.utils
import time

import pytest

from core.backends.http_bounds import retry_after_s
from core.backends.openai_common import FAILURES_TO_PAUSE, Breaker
from core.contracts.errors import BackendError, BackendUnavailable


def test_the_breaker_pauses_after_failures_in_a_row_and_tries_again_after_the_cool_down():
    now = [100.0]
    breaker = Breaker(60.0, clock=lambda: now[0])
    cause = BackendError("The judge request got no reply: the model server at http://h/v1 did not answer within 5 s")
    for _ in range(FAILURES_TO_PAUSE - 1):
        breaker.failed(cause)
        breaker.check("The judge request")  # not yet paused
    breaker.succeeded()  # a success in between starts the count again
    for _ in range(FAILURES_TO_PAUSE):
        breaker.failed(cause)
    now[0] += 10
    with pytest.raises(BackendUnavailable, match=r"was not sent: .*10 s ago .*did not answer within 5 s.* in 50 s"):
        breaker.check("The judge request")
    now[0] += 51
    breaker.check("The judge request")  # the cool-down is over: one call may try
    breaker.failed(cause)  # and failing again pauses at once
    with pytest.raises(BackendUnavailable):
        breaker.check("The judge request")


@pytest.mark.parametrize("headers, expected", [
    ({"retry-after": "30"}, 30.0), ({"retry-after": "0.5"}, 0.5), ({"retry-after-ms": "1500"}, 1.5),
    ({}, None), ({"retry-after": "soon"}, None), ({"retry-after": "-3"}, 0.0)])
def test_retry_after(headers, expected):
    assert retry_after_s(headers) == expected


def test_retry_after_as_an_http_date():
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    assert 17 <= retry_after_s({"retry-after": when}) <= 21


@pytest.mark.parametrize("stack", [("httpx2", "httpcore2"), ("httpx", "httpcore")])
def test_the_transport_bounds_the_network_streams_of_both_client_stacks(stack):
    """A newer client that hides its connection pool would leave only the between-chunks check: caught here."""
    from core.backends import http_bounds

    hx, hc = (pytest.importorskip(name) for name in stack)
    transport = http_bounds.transport_for(hx, hc, 1.0, 0)
    assert transport.streams_bounded
