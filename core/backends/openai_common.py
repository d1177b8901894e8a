"""What every OpenAI-compatible backend shares: building the client from settings, turning the client's
errors into BackendError, and packing a picture as a data URL.

The server may be api.openai.com or any compatible one (vLLM, Ollama, llama.cpp's server) at
`openai_base_url`. Retries are the client's own (`backend_retries`), with `backend_timeout_s` per call.
Error messages and model ids never contain the API key or credentials inside the base URL (core.redact)."""
from __future__ import annotations

import base64
import io
import os
from contextlib import contextmanager
from typing import Any, Iterator

from PIL import Image

from core.contracts import bounds
from core.contracts.errors import BackendError
from core.redact import mask_url, mask_urls_in

INSTALL_HINT = "pip install openai"
PLACEHOLDER_KEY = "not-needed"  # local servers such as llama.cpp accept any key
VISION_NOTE = "the model named by judge_model must accept image input (a vision-language model)"


def import_openai(setting: str) -> Any:
    try:
        import openai
    except ImportError:
        raise BackendError(f"The 'openai' package is not installed (needed by {setting}='openai...')",
                           f"{INSTALL_HINT}, or set {setting} to an offline backend") from None
    return openai


def api_key(settings: Any) -> str:
    """The key from settings, else $OPENAI_API_KEY, else a placeholder when a local base URL is set."""
    key = settings.openai_api_key or os.environ.get("OPENAI_API_KEY", "")
    if key:
        return key
    if settings.openai_base_url:
        return PLACEHOLDER_KEY
    raise BackendError("No API key for the OpenAI backend",
                       "set OPENAI_API_KEY (or ECOLENS_OPENAI_API_KEY), or set openai_base_url to a local "
                       "OpenAI-compatible server")


def make_client(settings: Any, setting: str) -> Any:
    """An `openai.OpenAI` client configured from settings (base URL, key, timeout, retries)."""
    openai = import_openai(setting)
    return openai.OpenAI(base_url=settings.openai_base_url or None,
                         api_key=api_key(settings),
                         timeout=settings.backend_timeout_s,
                         max_retries=settings.backend_retries)


def server_name(client: Any) -> str:
    """The server's base URL for messages and model ids, credentials masked."""
    return mask_url(str(getattr(client, "base_url", "") or "the OpenAI API").rstrip("/"))


def _scrub(text: str, client: Any) -> str:
    key = getattr(client, "api_key", "") or ""
    if key and key != PLACEHOLDER_KEY:
        text = text.replace(key, "***")
    return mask_urls_in(text)


def translate_error(exc: BaseException, what: str, client: Any) -> BackendError:
    """A BackendError that says what failed, where, and what to try; other exceptions get a generic one."""
    where = server_name(client)
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    detail = _scrub(str(getattr(exc, "message", "") or exc), client)[:300]
    if name == "APITimeoutError":
        return BackendError(f"{what} timed out at {where}",
                            "raise backend_timeout_s or check that the server is not overloaded")
    if name == "APIConnectionError":
        return BackendError(f"{what} could not reach {where}",
                            "check openai_base_url and that the server is running")
    if name == "AuthenticationError" or status in (401, 403):
        return BackendError(f"{what} was refused by {where}: the API key was not accepted",
                            "set a valid OPENAI_API_KEY / openai_api_key")
    if name == "RateLimitError" or status == 429:
        return BackendError(f"{what} was rate-limited by {where}", "wait, or lower judge_concurrency")
    if name == "NotFoundError" or status == 404:
        return BackendError(f"{what} failed at {where}: model or endpoint not found ({detail})",
                            "check the model name setting and openai_base_url")
    if status is not None:
        return BackendError(f"{what} failed at {where} with HTTP {status}: {detail}",
                            "check the request settings and the server's log")
    return BackendError(f"{what} failed at {where}: {name}: {detail}", "check the server and its log")


def is_option_rejected(exc: BaseException, option: str) -> bool:
    """True when the server refused the call because of `option`: HTTP 400/422, or any error status whose
    message names the option (llama-cpp-python's server answers a validation error with HTTP 500)."""
    status = getattr(exc, "status_code", None)
    return status in (400, 422) or (status is not None and option in str(exc))


@contextmanager
def calling(what: str, client: Any, note: str = "") -> Iterator[None]:
    """Run an openai call; any client error comes out as a BackendError (`note` is added to its hint)."""
    try:
        yield
    except BackendError:
        raise
    except Exception as exc:  # the client's errors and anything unexpected in its response handling
        module = type(exc).__module__ or ""
        if module.startswith("openai") or module.startswith("httpx"):
            err = translate_error(exc, what, client)
            if note:
                err.hint = f"{err.hint}; {note}" if err.hint else note
            raise err from None
        raise


def image_data_url(image: Image.Image, max_side: int = 1024) -> str:
    """The picture as a JPEG data URL, scaled down so its longer side is at most `max_side`."""
    img = image.convert("RGB")
    if max(img.size) > max_side:
        img = img.copy()
        img.thumbnail((max_side, max_side))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def message_text(response: Any) -> str:
    """The first choice's text ('' when the server sent none)."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    return bounds.reply_text((getattr(message, "content", None) or "").strip())  # a 100 MB reply is no answer
