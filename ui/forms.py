"""Reading the web forms: filter fields into core Filters, uploaded photos checked for size and type, and
EcoLensError turned into what Gradio shows (the only place errors become gr.Error / gr.Warning)."""
from __future__ import annotations

import functools
import inspect
from datetime import date
from typing import Any, Callable, Sequence

import gradio as gr

from core.errors import EcoLensError, InputError
from core import bounds
from core.records import Filters, parse_bbox
from core.sources import parse_date
from ui import strings as S


def _date(value: Any) -> date | None:
    if isinstance(value, date):
        return value
    try:
        return parse_date(None if value in (None, "") else str(value))
    except InputError:
        raise InputError(S.BAD_DATE.format(value=value), S.BAD_DATE_HINT) from None


def _bbox(value: str) -> tuple[float, float, float, float] | None:
    try:
        return parse_bbox(value)
    except InputError:
        raise InputError(S.BAD_BBOX.format(value=value), S.BAD_BBOX_HINT) from None


def parse_filters(taxon: str = "", date_from: Any = "", date_to: Any = "", months: Sequence[str] = (),
                  bbox: str = "", license: str = "") -> Filters:
    """The filter fields of a form as Filters (empty fields ignored); InputError names a bad field."""
    month_numbers = tuple(sorted(S.MONTH_NAMES.index(m) + 1 for m in (months or []) if m in S.MONTH_NAMES))
    return Filters(taxon=(taxon or "").strip(), date_from=_date(date_from), date_to=_date(date_to),
                   months=month_numbers, bbox=_bbox(bbox), license=(license or "").strip())


def read_upload(path: str | None, max_mb: float):
    """The uploaded example photo as a PIL RGB image, or None; the checks are core's (core.bounds), the same
    ones `search --image` goes through."""
    if not path:
        return None
    return bounds.example_photo(path, max_mb)


def user_message(exc: EcoLensError) -> str:
    return f"{exc.message}. {exc.hint}" if exc.hint else exc.message


def shows_errors(fn: Callable) -> Callable:
    """Wrap a handler (plain or generator) so that an EcoLensError becomes a gr.Error the user reads."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except EcoLensError as exc:
                raise gr.Error(user_message(exc), title=exc.title) from None
        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except EcoLensError as exc:
            raise gr.Error(user_message(exc), title=exc.title) from None
    return wrapper


def warn(messages: Sequence[str]) -> None:
    """Stage failures and other notices as non-blocking warnings."""
    for m in messages:
        gr.Warning(m)
