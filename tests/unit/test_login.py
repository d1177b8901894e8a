"""The login brake: wrong passwords are counted in a sliding window; past the limit every attempt is refused
with 429 and how long to wait, until the window has passed; the right password works again afterwards."""
from __future__ import annotations

import pytest
from fastapi import HTTPException

from ui.login import LoginGuard


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_wrong_passwords_lock_the_login_for_the_window_then_it_opens_again():
    clock = FakeClock()
    guard = LoginGuard("secret", clock=clock, max_failures=3, window_s=60)
    assert guard.check("ecolens", "secret")
    assert not guard.check("ecolens", "guess") and not guard.check("admin", "secret")
    assert not guard.check("ecolens", "")
    clock.now += 10
    with pytest.raises(HTTPException) as err:
        guard.check("ecolens", "secret")  # even the right password waits: guessing must not go on
    assert err.value.status_code == 429 and "Wait 50 seconds" in err.value.detail
    clock.now += 51
    assert guard.check("ecolens", "secret") and guard.wait_s() == 0.0


def test_successful_logins_do_not_count_and_odd_input_is_just_wrong():
    guard = LoginGuard("pässwort", clock=FakeClock(), max_failures=2)
    for _ in range(5):
        assert guard.check("ecolens", "pässwort")
    assert not guard.check("ecolens", "p\udcffsswort") and not guard.check(None, None)  # type: ignore[arg-type]
    with pytest.raises(HTTPException):
        guard.check("ecolens", "pässwort")
