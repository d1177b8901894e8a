"""What the Ray ingest says when Ray fails, without starting Ray: an EcoLens error inside Ray's exception is
told with its own fix, any other error by its last 'SomeError: message' line (never the traceback), and actors
that send nothing are reported within the bound instead of being waited on."""
from __future__ import annotations

import threading
import time

import pytest

from core.contracts.errors import BackendError, ConfigError
from core.ingest.ray_session import bounded, ray_failure


class FakeRayTaskError(Exception):
    """Like ray.exceptions.RayTaskError: the traceback in its text, the original exception as `cause`."""

    def __init__(self, text: str, cause: BaseException | None = None):
        super().__init__(text)
        self.cause = cause


TRACEBACK = ("ray::MapBatches(EmbedActor)() (pid=123, ip=127.0.0.1)\n"
             "  File \"/work/core/ingest/ray_engine.py\", line 176, in __init__\n"
             "    self.embedder = create_embedder(self.settings)\n"
             "core.contracts.errors.ConfigError: Unknown embedder backend 'x' (set embedder to one of: hash)")


def test_an_ecolens_error_inside_ray_keeps_its_message_and_fix():
    inner = ConfigError("Unknown embedder backend 'x'", "set embedder to one of: hash")
    err = ray_failure(FakeRayTaskError(TRACEBACK, cause=inner))
    assert isinstance(err, BackendError)
    assert err.message == "the Ray ingest failed in a worker: Unknown embedder backend 'x'"
    assert err.hint == "set embedder to one of: hash"


def test_any_other_failure_is_its_last_error_line_without_the_traceback():
    err = ray_failure(FakeRayTaskError(TRACEBACK))
    assert err.message == ("the Ray ingest failed: ConfigError: Unknown embedder backend 'x' (set embedder to one "
                           "of: hash)")
    assert "File \"" not in err.message and "--engine local" in err.hint


def test_actors_that_send_nothing_are_reported_within_the_bound():
    release = threading.Event()

    def never():
        release.wait()
        yield "late"

    t0 = time.monotonic()
    with pytest.raises(BackendError) as err:
        list(bounded(never(), 0.5))
    release.set()
    assert time.monotonic() - t0 < 3.0
    assert "sent nothing within 0.5 s (ray_start_timeout_s)" in err.value.message


def test_batches_pass_through_and_a_failure_is_translated():
    assert list(bounded(iter([1, 2, 3]), 5.0)) == [1, 2, 3]

    def failing():
        yield 1
        raise FakeRayTaskError(TRACEBACK)

    got = []
    with pytest.raises(BackendError, match="ConfigError: Unknown embedder backend"):
        for item in bounded(failing(), 5.0):
            got.append(item)
    assert got == [1]
