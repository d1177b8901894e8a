"""Every bound on what one request may ask for, in one place: the CLI, the web app and the API all go
through these checks and get the same message. Limits keep one request from exhausting memory or budget."""
from __future__ import annotations

import math
from typing import Any, Iterable

from core.errors import InputError

MAX_QUERY_CHARS = 2000
MAX_K = 1000  # results returned
MAX_RERANK_K = 1000  # candidates judged
MAX_M = 16  # generated pictures per instruction
MAX_VOTES = 9  # judge votes per question
MAX_IDS = 100_000  # photo ids in one request (a benchmark pool, relevance marks)
MAX_ID = 2**63 - 1  # SQLite / FAISS ids are signed 64-bit


def whole_number(name: str, value: Any, lo: int, hi: int, hint: str = "") -> int:
    """`value` as an int in [lo, hi]; InputError naming `name` for NaN, fractions, text, booleans, or out of
    range values."""
    if isinstance(value, bool):
        raise InputError(f"{name} = {value!r} is not a whole number", hint or f"use a whole number from {lo} to {hi}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} = {value!r} is not a whole number",
                         hint or f"use a whole number from {lo} to {hi}") from None
    if math.isnan(number) or math.isinf(number) or number != int(number):
        raise InputError(f"{name} = {value!r} is not a whole number", hint or f"use a whole number from {lo} to {hi}")
    if not lo <= int(number) <= hi:
        raise InputError(f"{name} = {int(number)} is outside {lo} to {hi}", hint or f"use a value from {lo} to {hi}")
    return int(number)


def photo_ids(name: str, ids: Iterable[Any]) -> tuple[int, ...]:
    """User-supplied photo ids as ints; InputError for too many, non-integers or impossible values."""
    out = tuple(ids)
    if len(out) > MAX_IDS:
        raise InputError(f"{name}: {len(out)} photo ids, more than {MAX_IDS}", "give fewer photo ids")
    return tuple(whole_number(f"{name} id", i, 1, MAX_ID, "use photo ids shown in the results") for i in out)
