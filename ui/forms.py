"""Reading the web forms: filter fields into core Filters, uploaded photos checked for size and type, and
EcoLensError turned into what Gradio shows (the only place errors become gr.Error / gr.Warning), in the web
app's words: every message, hint and notice passes through `web_words` (ui.strings.WEB_WORDS), so a message
core wrote for the command line never shows a CLI flag or a developer's term on the page."""
from __future__ import annotations

import functools
import inspect
import logging
import re
from datetime import date, datetime
from typing import Any, Callable, Sequence

import gradio as gr

from core.contracts.errors import EcoLensError, InputError, NotReady
from core.contracts import bounds
from core.contracts.records import Filters, parse_bbox
from core.ingest.sources import parse_date
from ui import strings as S

log = logging.getLogger(__name__)


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


def example_photo_input(**kwargs: Any) -> gr.Image:
    """A gr.Image (same look) whose upload reaches the handler unopened, so a file that is not a photo, too
    large or with too many pixels is refused by core.contracts.bounds in EcoLens's own words, never with Gradio's or
    PIL's text and the upload's temporary path, and no huge image is decoded first. (Only this instance's
    preprocess is replaced: a subclass would make Gradio write a .pyi stub into the source tree.)"""
    image = gr.Image(type="filepath", image_mode=None, **kwargs)
    decode = image.preprocess

    def preprocess(payload):
        if payload is None or payload.path is None:  # nothing, or a pasted image sent as a data URL
            return decode(payload)
        return str(payload.path)  # Gradio has already checked that the file is an upload
    image.preprocess = preprocess
    return image


def read_upload(path: str | None, max_mb: float):
    """The uploaded example photo as a PIL RGB image, or None; the checks are core's (core.contracts.bounds), the same
    ones `search --image` goes through."""
    if not path:
        return None
    return bounds.example_photo(path, max_mb)


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
    """Wrap a handler (plain or generator) so that an EcoLensError becomes a gr.Error the user reads, and any
    other failure a short apology (the details go to the log file, never to the page: no SQL, no paths). A
    request that only came too early (NotReady: the collection is still being prepared) is not an error: the
    page gets a "Please wait" note and keeps what it shows (no error marks on the result fields)."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except NotReady as exc:
                yield please_wait(exc)
            except Exception as exc:
                raise as_user_error(exc, fn) from None
        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NotReady as exc:
            return please_wait(exc)
        except Exception as exc:
            raise as_user_error(exc, fn) from None
    return wrapper


def please_wait(exc: NotReady) -> dict:
    """A note for a request that came too early, and an update that leaves every output as it is."""
    log.info("refused while preparing: %s", exc.message)
    gr.Info(user_message(exc), title=exc.title, duration=8)
    return gr.skip()


def as_user_error(exc: Exception, fn: Callable) -> gr.Error:
    if isinstance(exc, gr.Error):
        return exc
    if isinstance(exc, EcoLensError):
        return gr.Error(user_message(exc), title=exc.title)
    log.exception("%s failed", getattr(fn, "__qualname__", fn))
    return gr.Error(S.INTERNAL_ERROR, title=S.INTERNAL_ERROR_TITLE)


def warn(messages: Sequence[str]) -> None:
    """Stage failures and other notices as non-blocking warnings, in the web app's words."""
    for m in web_notices(messages):
        gr.Warning(m)
