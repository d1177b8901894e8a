"""Yes/no confidence from the first answer token's top log-probabilities (methods.md 3.4)."""
from __future__ import annotations

import math
from typing import Mapping

from core.backends.reach import NOT_CHECKED

_DECOR = " \t\r\n*_`\"'.:,!-"


def _norm(token: str) -> str:
    return token.strip(_DECOR).lower()


def yes_no_mass(top_logprobs: Mapping[str, float]) -> tuple[float, float]:
    """Summed probability of the Yes variants and of the No variants ('Yes', ' yes', 'YES', ...)."""
    yes = no = 0.0
    for token, lp in (top_logprobs or {}).items():
        t = _norm(str(token))
        if t == "yes":
            yes += math.exp(float(lp))
        elif t == "no":
            no += math.exp(float(lp))
    return yes, no


def p_yes(top_logprobs: Mapping[str, float]) -> float:
    """p = P(yes) / (P(yes) + P(no)). Like INQUIRE's public scorer: Yes absent -> 0, No absent -> 1
    (so neither present -> 0)."""
    yes, no = yes_no_mass(top_logprobs)
    if yes <= 0.0:
        return 0.0
    if no <= 0.0:
        return 1.0
    return yes / (yes + no)


# ---- one verdict per check, the same on the page, in `search --json` and the API (setting undecided_band) ----
YES, NO, CANNOT_TELL = "yes", "no", "can't tell"


def verdict(p: float | None, band: float) -> str:
    """'yes', 'no' or "can't tell" for a check's p(yes): within `band` of 0.5 (inclusive) it is neither;
    None (the checker abstained) is 'not checked'."""
    if p is None:
        return NOT_CHECKED
    if abs(float(p) - 0.5) <= band:
        return CANNOT_TELL
    return YES if float(p) > 0.5 else NO


def entry_verdict(entry: Mapping, band: float) -> str:
    """The verdict of one sub-question entry of the rerank stage ({answer, p_yes, checked, ...})."""
    if entry.get("checked") is False:
        return NOT_CHECKED
    p = entry.get("p_yes")
    if isinstance(p, (int, float)):
        return verdict(float(p), band)
    word = str(entry.get("answer", "")).strip().lower()
    return YES if word.startswith("y") else (NO if word.startswith("n") else CANNOT_TELL)
