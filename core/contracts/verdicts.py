"""The words of a check's verdict, the same on the page, in `search --json` and the API: each sub-question a
photo checker answers is yes, no, can't tell (inside the undecided band, setting undecided_band) or not checked
(the checker abstained): the words, and the one rule that reads a p(yes) into them."""
from __future__ import annotations

from typing import Mapping

YES, NO, CANNOT_TELL = "yes", "no", "can't tell"
NOT_CHECKED = "not checked"  # the answer word of an abstention
VERDICTS = (YES, NO, CANNOT_TELL, NOT_CHECKED)


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
