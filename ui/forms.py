"""Reading the web forms: filter fields into core Filters, uploaded photos checked for size and type, and
EcoLensError turned into what Gradio shows (the only place errors become gr.Error / gr.Warning), in the web
app's words: every message, hint and notice passes through `web_words` (ui.strings.WEB_WORDS), so a message
core wrote for the command line never shows a CLI flag or a developer's term on the page."""
from __future__ import annotations

import functools
import inspect
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any, Callable, Sequence

import gradio as gr

from core.errors import EcoLensError, InputError
from core.imageio import IMAGE_SUFFIXES, load_image
from core.records import Filters, parse_bbox
from core.sources import parse_date
from ui import strings as S


def _date(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # a calendar's timestamp
        return datetime.fromtimestamp(float(value)).date()
    text = str(value or "").strip()
    if len(text) > 10 and text[10:11] in (" ", "T"):  # the calendar adds a time of day
        text = text[:10]
    try:
        return parse_date(text or None)
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


def read_upload(path: str | None, max_mb: float, max_pixels: int):
    """The uploaded photo as a PIL RGB image, or None; InputError when too big or not an image."""
    if not path:
        return None
    p = Path(path)
    if p.suffix.lower() not in IMAGE_SUFFIXES:
        raise InputError(S.UPLOAD_BAD_TYPE.format(name=p.name), S.UPLOAD_BAD_TYPE_HINT)
    mb = p.stat().st_size / 1_000_000
    if mb > max_mb:
        raise InputError(S.UPLOAD_TOO_BIG.format(mb=mb, limit=max_mb), S.UPLOAD_TOO_BIG_HINT)
    return load_image(p, max_pixels=max_pixels)


_FLAG = re.compile(r"--[a-z][a-z-]*")


def web_words(text: str) -> str:
    """`text` with command-line and developer wording replaced by the web app's (ui.strings.WEB_WORDS), and
    any remaining command-line option named by the page's field that does the same."""
    text = str(text or "")
    for said, meant in S.WEB_WORDS:
        text = text.replace(said, meant)
    return _FLAG.sub(lambda m: S.WEB_FIELDS.get(m.group(0), m.group(0).lstrip("-").replace("-", " ")), text)


def sentence(text: str, capital: bool = True) -> str:
    """One sentence: a capital first letter (unless `capital` is False) and exactly one closing full stop."""
    text = " ".join(str(text or "").split()).rstrip()
    if not text:
        return ""
    if capital:
        text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…" else text + "."


def user_message(exc: EcoLensError) -> str:
    """What the page says for an error: the message and the hint, each one sentence in the web app's words."""
    message = sentence(web_words(exc.message), capital=False)
    return f"{message} {sentence(web_words(exc.hint))}" if exc.hint else message


def web_notices(notices: Sequence[str]) -> list[str]:
    """Notices as the page shows them: in the web app's words, each once."""
    out: list[str] = []
    for n in notices:
        worded = sentence(web_words(n))
        if worded and worded not in out:
            out.append(worded)
    return out


def photo_id(value: Any) -> int | None:
    """A photo id typed or sent by a script (int, float or text); None for empty; InputError otherwise."""
    if value in (None, "") or (isinstance(value, float) and value != value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(S.BAD_PHOTO_ID.format(value=value), S.BAD_PHOTO_ID_HINT) from None
    if number != int(number) or number < 1:
        raise InputError(S.BAD_PHOTO_ID.format(value=value), S.BAD_PHOTO_ID_HINT)
    return int(number)


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
    """Stage failures and other notices as non-blocking warnings, in the web app's words."""
    for m in web_notices(messages):
        gr.Warning(m)
