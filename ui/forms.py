"""Reading the web forms: filter fields into core Filters, uploaded photos checked for size and type, and
EcoLensError turned into what Gradio shows (the only module that raises gr.Error or shows gr.Warning / gr.Info:
tests/unit/test_ui_popups.py holds it), in the web app's words: every message, hint and notice passes through
`web_words` (ui.strings.WEB_WORDS), so a message core wrote for the command line never shows a CLI flag or a
developer's term on the page."""
from __future__ import annotations

import functools
import inspect
import logging
import re
import typing
from datetime import date, datetime
from typing import Any, Callable, Sequence

import gradio as gr

from core.contracts import bounds, limits
from core.contracts.errors import EcoLensError, InputError, NotFoundError, NotReady
from core.contracts.records import Filters, parse_bbox, parse_date
from core.imageio import example_photo
from ui import strings as S
from ui import strings_web as SW

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
    if taxon is not None and not isinstance(taxon, str):  # the API lets a number through the dropdown
        raise InputError(f"taxon = {taxon!r} is a number, not a taxon's name",
                         "give a scientific or common name as text, e.g. 'Ardea alba' or 'great egret'")
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
    """The uploaded example photo as a PIL RGB image, or None; the checks are core's (core.imageio.example_photo,
    against core.contracts.bounds), the same ones `search --image` goes through."""
    if not path:
        return None
    return example_photo(path, max_mb)


_FLAG = re.compile(r"--[a-z][a-z-]*")


def web_words(text: str) -> str:
    """`text` with command-line and developer wording replaced by the web app's (ui.strings.WEB_WORDS), and
    any remaining command-line option named by the page's field that does the same."""
    text = str(text or "")
    for said, meant in SW.WEB_WORDS:
        text = text.replace(said, meant)
    return _FLAG.sub(lambda m: SW.WEB_FIELDS.get(m.group(0), m.group(0).lstrip("-").replace("-", " ")), text)


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
    except (TypeError, ValueError, OverflowError):
        raise InputError(S.BAD_PHOTO_ID.format(value=value), S.BAD_PHOTO_ID_HINT) from None
    if number != number or number in (float("inf"), float("-inf")) or number != int(number) or number < 1:
        raise InputError(S.BAD_PHOTO_ID.format(value=value), S.BAD_PHOTO_ID_HINT)
    # within the catalog's ids (signed 64-bit): 10**30 or 2**63 is no photo, never a database overflow
    return bounds.whole_number("photo id", value if isinstance(value, int) else int(number), 1, limits.MAX_ID,
                               S.BAD_PHOTO_ID_HINT)


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


REFUSED = (InputError, NotFoundError, NotReady)  # the request was refused: nothing went wrong on the server


def as_user_error(exc: Exception, fn: Callable) -> gr.Error:
    """The gr.Error the page (or script) reads. A refused input is one line in the log and Gradio prints no
    traceback for it; other EcoLensErrors (storage, backends) one warning line (where they were raised logged
    their cause); anything else is a real fault: its traceback goes to the log, the page gets an apology."""
    if isinstance(exc, gr.Error):
        return exc
    name = getattr(fn, "__qualname__", fn)
    if isinstance(exc, EcoLensError):
        if isinstance(exc, REFUSED):
            log.info("%s refused: %s", name, exc.message)
        else:
            log.warning("%s failed: %s", name, exc.message)
        return gr.Error(user_message(exc), title=exc.title, print_exception=False)
    log.exception("%s failed", name)
    return gr.Error(S.INTERNAL_ERROR, title=S.INTERNAL_ERROR_TITLE)


# ---- the types an API call must send --------------------------------------------------------------------
def _kind(value: Any) -> str:
    """How a value sent to the API is named in a message."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


def _num(v: float) -> str:
    return str(int(v)) if abs(v) < 1e16 and v == int(v) else f"{v:g}"


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _texts(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)


def expected_type(block: Any, annotation: Any = None) -> tuple[str, Callable[[Any], bool]] | None:
    """(what the parameter takes, in words; its test) for an input component of the API, or None when any
    value is left to the component or the handler (photos, state, dates)."""
    kind = type(block).__name__
    if kind in ("Textbox", "Radio"):
        return "text", lambda v: v is None or isinstance(v, str)
    if kind == "Slider":
        return "a number", _number
    if kind == "Number":  # a photo id: typed text is read by the handler, in its own words
        return "a number", lambda v: v is None or _number(v) or isinstance(v, str)
    if kind == "Checkbox":
        return "true or false", lambda v: v is None or isinstance(v, bool)
    if kind == "CheckboxGroup" or (kind == "Dropdown" and getattr(block, "multiselect", False)):
        return "a list of text", lambda v: v is None or _texts(v)
    if kind == "Dropdown":
        return "text or a number", lambda v: v is None or isinstance(v, str) or _number(v)
    if kind == "Api" and annotation is str:
        return "text", lambda v: v is None or isinstance(v, str)
    return None


def _parameters(block_fn: Any) -> tuple[list[str], dict[str, Any]]:
    """The API's parameter names of `block_fn` (as view_api shows them) and the handler's annotations."""
    names = list(getattr(block_fn, "input_parameter_names", None) or [])
    try:
        fn_names, hints = _signature(inspect.unwrap(block_fn.fn))
    except (TypeError, ValueError):
        return names, {}
    return names or list(fn_names), hints


@functools.lru_cache(maxsize=256)
def _signature(fn: Callable) -> tuple[tuple[str, ...], dict[str, Any]]:
    """A handler's parameter names and resolved annotations, read once (every API call is checked: resolving
    the annotations took 0.2 ms a call)."""
    return tuple(inspect.signature(fn).parameters), typing_hints(fn)


def typing_hints(fn: Callable) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # a hint that cannot be resolved: that parameter is left to the handler
        return {}


def _whole_number_box(block: Any) -> bool:
    """A gr.Number with precision 0: a photo id."""
    return type(block).__name__ == "Number" and getattr(block, "precision", None) == 0


def check_api_types(block_fn: Any, inputs: Sequence[Any]) -> None:
    """Refuse a call whose values have the wrong type (a number or a list as the query, text as k), naming the
    parameter and the type it takes; a slider's value outside its range is named with the range. Raises a
    gr.Error (the API's one error shape: {"error": message, "title": ...}); the log gets one line."""
    names, hints = _parameters(block_fn)
    for i, (block, value) in enumerate(zip(block_fn.inputs, inputs)):
        if getattr(block, "stateful", False):
            continue
        name = names[i] if i < len(names) and names[i] else f"parameter {i + 1}"
        wanted = expected_type(block, hints.get(name))
        problem = None
        if wanted is not None and not wanted[1](value):
            problem = f"{name} must be {wanted[0]}, not {_kind(value)}"
        elif _whole_number_box(block) and value not in (None, "") and value == value:
            try:  # before Gradio rounds it: 1.5 is no photo id (it searched photo 2), 10**30 is outside the ids
                bounds.whole_number(name, value, 1, limits.MAX_ID, S.BAD_PHOTO_ID_HINT)
            except InputError as exc:
                problem = f"{exc.message} ({exc.hint})"
        elif type(block).__name__ == "Slider" and _number(value) and value == value:
            lo, hi = block.minimum, block.maximum
            if value > hi:
                problem = f"{name} = {_num(value)} is greater than maximum value {hi:g} (use {lo:g} to {hi:g})"
            elif value < lo:
                problem = f"{name} = {_num(value)} is less than minimum value {lo:g} (use {lo:g} to {hi:g})"
        if problem:
            log.info("/%s refused: %s", getattr(block_fn, "api_name", "?"), problem)
            raise gr.Error(sentence(problem, capital=False), title=InputError.title, print_exception=False)


def with_defaults(block_fn: Any, inputs: Sequence[Any]) -> list[Any]:
    """A call's values, those it left out at the end given the components' own defaults: an older call, made
    before parameters were added after the others (the camera-trap filters of /search), keeps working."""
    inputs = list(inputs or [])
    blocks = list(getattr(block_fn, "inputs", []) or [])
    for block in blocks[len(inputs):]:
        inputs.append(None if getattr(block, "stateful", False) else getattr(block, "value", None))
    return inputs


CHOICES_REFUSAL = "is not in the list of choices"  # Gradio's refusal of a value outside a choice component's list
MAX_CHOICES_SHOWN = 20


def _choice_values(block: Any) -> list[Any]:
    return [c[1] if isinstance(c, (tuple, list)) else c for c in (getattr(block, "choices", None) or [])]


def not_a_choice(block_fn: Any, inputs: Sequence[Any], state: Any = None) -> str | None:
    """The EcoLens message for the first value outside its dropdown's, radio's or checkbox group's choices (as
    the page holds them for this session): the parameter, the value and the choices it takes."""
    names, _ = _parameters(block_fn)
    for i, (block, value) in enumerate(zip(block_fn.inputs, inputs)):
        if type(block).__name__ not in ("Dropdown", "Radio", "CheckboxGroup") or value is None:
            continue
        try:
            if state is not None and block._id in state:
                block = state[block._id]  # the choices this session's page was given
        except (AttributeError, KeyError, TypeError):
            pass
        if getattr(block, "allow_custom_value", False):
            continue
        allowed = _choice_values(block)
        wrong = next((v for v in (value if isinstance(value, list) else [value]) if v not in allowed), None)
        if wrong is None:
            continue
        name = names[i] if i < len(names) and names[i] else f"parameter {i + 1}"
        shown = ", ".join(str(v) for v in allowed[:MAX_CHOICES_SHOWN]) + (", ..." if len(allowed) > MAX_CHOICES_SHOWN
                                                                          else "")
        return f"{name} = {_shown_value(wrong)} is not one of its choices ({shown or 'none yet'})"
    return None


def _shown_value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def typed_api(app: gr.Blocks) -> gr.Blocks:
    """Check the type of every value an API call sends before Gradio reads it (check_api_types); a value a
    component still cannot read is refused naming the endpoint, never as an error without a message."""
    read = app.preprocess_data

    async def preprocess_data(block_fn, inputs, state, explicit_call=False):
        inputs = with_defaults(block_fn, inputs)
        check_api_types(block_fn, inputs)
        try:
            return await read(block_fn, inputs, state, explicit_call)
        except gr.Error as exc:
            if CHOICES_REFUSAL not in str(exc.message):
                raise
            problem = not_a_choice(block_fn, inputs, state) or S.UNREADABLE_VALUE.format(
                api=getattr(block_fn, "api_name", "?"))  # Gradio's own words never reach the caller
            log.info("/%s refused: %s", getattr(block_fn, "api_name", "?"), problem)
            raise gr.Error(sentence(problem, capital=False), title=InputError.title, print_exception=False) from None
        except OSError:  # the server's disk or files, not the caller's value: a real fault
            log.exception("/%s: reading the call's values failed", getattr(block_fn, "api_name", "?"))
            raise gr.Error(S.INTERNAL_ERROR, title=S.INTERNAL_ERROR_TITLE) from None
        except Exception as exc:
            log.info("/%s refused: a value could not be read (%s)", getattr(block_fn, "api_name", "?"),
                     type(exc).__name__)
            raise gr.Error(sentence(S.UNREADABLE_VALUE.format(api=getattr(block_fn, "api_name", "?"))),
                           title=InputError.title, print_exception=False) from None

    app.preprocess_data = preprocess_data
    return app


def note(message: str) -> None:
    """Information about how a step went (not a failure) as a non-blocking note, in the web app's words."""
    for m in web_notices([message]):
        gr.Info(m, title=S.NOTE_TITLE)


def not_recorded(exc: EcoLensError) -> str:
    """What the page says when a search, export or turn worked but the history could not record it: the
    error in the web app's words, with its fix (the error's own hint, else where to look)."""
    reason = user_message(exc)
    return S.NOT_RECORDED.format(reason=reason if exc.hint else f"{reason} {S.NOT_RECORDED_FIX}")


def warn(messages: Sequence[str]) -> None:
    """Stage failures and other notices as non-blocking warnings, in the web app's words."""
    for m in web_notices(messages):
        gr.Warning(m)
