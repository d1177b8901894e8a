"""Yes/no confidence from the first answer token's top log-probabilities (methods.md 3.4)."""
from __future__ import annotations

import math
from typing import Mapping

# one verdict per check (yes, no, can't tell, not checked), the same on the page, in `search --json` and the API
# (setting undecided_band): core.contracts.verdicts, re-exported here
from core.contracts.verdicts import CANNOT_TELL, NO, NOT_CHECKED, YES, entry_verdict, verdict  # noqa: F401

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
