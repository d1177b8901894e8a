"""Every bound on what one request may ask for, in one place: the CLI, the web app and the API all go
through these checks and get the same message. Limits keep one request from exhausting memory or budget."""
from __future__ import annotations

import math
import unicodedata
from typing import Any, Iterable

from core.contracts.errors import BackendError, InputError
from core.contracts.limits import (  # noqa: F401 (the limits, stated once; named here for older callers)
    EXAMPLE_SIDE,
    MAX_EXAMPLE_PIXELS,
    MAX_EXAMPLES,
    MAX_FULL_DECODE_PIXELS,
    MAX_ID,
    MAX_IDS,
    MAX_K,
    MAX_M,
    MAX_PHOTO_BYTES,
    MAX_QUERY_CHARS,
    MAX_REPLY_CHARS,
    MAX_RERANK_K,
    MAX_ROUNDS,
    MAX_VOTES,
    MIN_RERANK_K,
    WORKING_SIDE,
)

EXAMPLE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff")


def whole_number(name: str, value: Any, lo: int, hi: int, hint: str = "") -> int:
    """`value` as an int in [lo, hi]; InputError naming `name` for NaN, fractions, text, booleans, or out of
    range values."""
    if isinstance(value, bool):
        raise InputError(f"{name} = {value!r} is not a whole number", hint or f"use a whole number from {lo} to {hi}")
    exact = _exact_int(value)
    if exact is None:
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{name} = {_shown(value)} is not a whole number",
                             hint or f"use a whole number from {lo} to {hi}") from None
        if math.isnan(number) or math.isinf(number) or number != int(number):
            raise InputError(f"{name} = {_shown(value)} is not a whole number",
                             hint or f"use a whole number from {lo} to {hi}")
        exact = int(number)
    if not lo <= exact <= hi:
        raise InputError(f"{name} = {_shown(exact)} is outside {lo} to {hi}", hint or f"use a value from {lo} to {hi}")
    return exact


def _exact_int(value: Any) -> int | None:
    """An int or a text of digits as the exact integer (no float rounding of a 25-digit id); else None."""
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit() and len(value.strip()) <= 40:
        return int(value.strip())
    return None


def _shown(value: Any) -> str:
    """A value as a message shows it: short, printable."""
    text = repr(value) if not isinstance(value, int) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def photo_ids(name: str, ids: Iterable[Any]) -> tuple[int, ...]:
    """User-supplied photo ids as ints; InputError for too many, non-integers or impossible values."""
    out = tuple(ids)
    if len(out) > MAX_IDS:
        raise InputError(f"{name}: {len(out)} photo ids, more than {MAX_IDS}", "give fewer photo ids")
    return tuple(whole_number(f"{name} id", i, 1, MAX_ID, "use photo ids shown in the results") for i in out)


def download(data: bytes, url: str) -> bytes:
    """A downloaded photo's bytes, read with a limit of MAX_PHOTO_BYTES + 1; OSError when over it (the ingest
    then skips that row with the reason)."""
    if len(data) > MAX_PHOTO_BYTES:
        raise OSError(f"{url} is larger than {MAX_PHOTO_BYTES // 1_000_000} MB")
    return data


def example_count(n: int) -> None:
    """InputError when one search brings more than MAX_EXAMPLES example photos."""
    if n > MAX_EXAMPLES:
        raise InputError(f"{n} example photos, more than the {MAX_EXAMPLES} one search may use",
                         f"choose at most {MAX_EXAMPLES} example photos")


def reply_text(text: str) -> str:
    """A model backend's text reply, or BackendError when it is longer than MAX_REPLY_CHARS: a reply that
    long is a broken or hostile server, never an answer to show or to trust."""
    if len(text) > MAX_REPLY_CHARS:
        raise BackendError(f"the model server sent a reply of {len(text):,} characters, more than the "
                           f"{MAX_REPLY_CHARS:,} a reply may have; it was not used",
                           "check the server and the model it runs")
    return text


def text(name: str, value: Any, max_chars: int = MAX_QUERY_CHARS) -> str:
    """A free-text field (taxon, licence, annotator) as a str; InputError for bytes that are not UTF-8, broken
    characters (lone surrogates, from undecodable command-line bytes), control characters or too long."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"The {name} is not valid UTF-8 text", "type it again as plain text") from None
    value = "" if value is None else str(value)
    if any(0xD800 <= ord(c) <= 0xDFFF or (ord(c) < 32 and c not in "\t") for c in value):
        raise InputError(f"The {name} contains control characters or broken text", "type it again as plain text")
    if len(value) > max_chars:
        raise InputError(f"The {name} has {len(value)} characters, more than {max_chars}", "shorten it")
    return value


def name(value: Any) -> str:
    """A person's or a taxon's name, or a query, as it is stored and compared: Unicode NFC (an "é" typed as one
    character or as "e" plus a combining accent is the same text), runs of white space as one space, trimmed."""
    return " ".join(unicodedata.normalize("NFC", "" if value is None else str(value)).split())


# characters that show nothing (Unicode category Cf: zero-width space and joiners, the bidi controls, the BOM,
# soft hyphen, word joiner, ...) and the variation selectors: a name holding them looks like the name without
INVISIBLE_RANGES = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF))


def visible(text: str) -> str:
    """`text` without invisible characters (format characters, category Cf, and variation selectors)."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf"
                   and not any(lo <= ord(c) <= hi for lo, hi in INVISIBLE_RANGES))


def name_key(value: Any) -> str:
    """What two names are compared by: Unicode NFKC (full-width "Ｒｅｎéｅ" and ligatures are the plain letters),
    invisible characters removed (zero-width, bidi controls, BOM), white space as one space, case-folded; so
    "Renée", "RENÉE", a decomposed "rene\u0301e" and "Re\u200bnée" are one annotator, and "Straße" is
    "strasse". Names are still stored and shown as typed (name)."""
    folded = unicodedata.normalize("NFKC", visible(unicodedata.normalize("NFKC", "" if value is None else str(value))))
    return " ".join(unicodedata.normalize("NFKC", folded.casefold()).split())


def seconds(value: Any) -> float:
    """Seconds spent on one label: a finite number, 0 when not given; InputError otherwise."""
    if value in (None, ""):
        return 0.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"seconds = {value!r} is not a number", "give the seconds as a number, e.g. 2.5") from None
    if math.isnan(number) or math.isinf(number) or not 0 <= number <= 86_400:
        raise InputError(f"seconds = {value!r} is outside 0 to 86400", "give the seconds spent on this photo")
    return number
