"""Which model an OpenAI-compatible server serves, and how large it is: the name sent with each request and
what the per-model facts (model_facts.llm_facts) are matched on.

- A model name set in settings (`llm_model`, `judge_model`) is sent as it is.
- An empty name with `openai_base_url` set means "ask the server": `GET /v1/models` (one request, a short
  timeout, no retries), and the first model it lists is used. Its size is what the server reports
  (llama.cpp's own server: `meta.n_params`), else, for a server on this machine (127.0.0.1, localhost) whose
  model id is a GGUF file that exists here (llama-cpp-python's server reports its `--model` path, which may
  be called anything, e.g. 'model.gguf'), the parameter count read from that file's header.
- With a name set and a base URL, the server is asked too, only for the size of the model it serves.
- An empty name with no base URL is the hosted default, HOSTED_DEFAULT_MODEL, on api.openai.com, as before.

When the server cannot be asked, the failure is logged, `notice` says so, and the facts come from the name
alone (the name sent is then the setting, or '' which a single-model server such as llama.cpp's accepts)."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import urlparse

from core.backends import http_bounds
from core.backends.gguf_header import GGUFError, read_header
from core.backends.model_facts import count_text
from core.redact import mask_url

log = logging.getLogger(__name__)
HOSTED_DEFAULT_MODEL = "gpt-4.1-mini"  # what an empty model name means on api.openai.com (no base URL)
DISCOVERY_TIMEOUT_S = 5.0  # the one request that asks the server for its model; never longer than the backend's
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class ServedModel:
    name: str  # the model name sent with each request
    n_params: int | None = None  # the parameter count, when the server or the model file says it
    source: str = "setting"  # 'setting', 'server' (asked: the name was empty), 'hosted default'
    size_from: str = ""  # where n_params came from: 'server metadata' or 'GGUF header of <file>'
    notice: str = ""  # a problem users should see (the server could not be asked)

    @property
    def short_name(self) -> str:
        """The name without a file path's folders ('/models/x/model.gguf' -> 'model.gguf')."""
        return PurePath(self.name).name if "/" in self.name or "\\" in self.name else self.name

    @property
    def label(self) -> str:
        """How notices name the model: 'model.gguf (134.5M parameters)'."""
        name = self.short_name or "the served model"
        return f"{name} ({count_text(self.n_params)} parameters)" if self.n_params else name


def is_loopback(base_url: str) -> bool:
    host = (urlparse(base_url).hostname or "").lower()
    return host in _LOOPBACK or host.startswith("127.")


def _entries(client: Any, timeout_s: float) -> list[dict[str, Any]]:
    once = client.with_options(timeout=timeout_s, max_retries=0) if hasattr(client, "with_options") else client
    with http_bounds.clock(timeout_s, 0):  # the whole request, body included, within timeout_s; no retries
        page = once.models.list()
    out = []
    for item in getattr(page, "data", None) or []:
        entry = item.model_dump() if hasattr(item, "model_dump") else dict(item)
        if entry.get("id"):
            out.append(entry)
    return out


def _reported_params(entry: dict[str, Any]) -> int | None:
    meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
    for value in (meta.get("n_params"), entry.get("n_params"), entry.get("parameter_count")):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return int(value)
    return None


def _file_params(model_id: str, base_url: str) -> tuple[int | None, str]:
    """The parameter count from the GGUF file the server names, when the server runs on this machine."""
    if not is_loopback(base_url) or not model_id.lower().endswith(".gguf"):
        return None, ""
    path = Path(model_id)
    if not path.is_file():
        return None, ""
    try:
        head = read_header(path)
    except (OSError, GGUFError) as exc:
        log.warning("could not read the GGUF header of %s: %s", path.name, exc)
        return None, ""
    return (head.n_params or None), f"GGUF header of {path.name}"


def resolve(client: Any, configured: str, base_url: str, *, setting: str = "llm_model",
            timeout_s: float = DISCOVERY_TIMEOUT_S) -> ServedModel:
    """The model to send requests to and its size (see the module's docstring)."""
    configured = (configured or "").strip()
    if not base_url:
        return ServedModel(configured, source="setting") if configured else ServedModel(
            HOSTED_DEFAULT_MODEL, source="hosted default")
    where = mask_url(base_url)
    try:
        entries = _entries(client, timeout_s)
        if not entries:
            raise ValueError("it lists no model")
    except Exception as exc:  # unreachable, slow, no /v1/models endpoint ...: facts from the name
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        log.warning("could not ask %s which model it serves (%s); %s facts come from the name %r only",
                    where, reason, setting, configured)
        return ServedModel(configured, source="setting" if configured else "server", notice=(
            f"could not ask {where} which model it serves ({reason}); its size is unknown, so it is treated as "
            f"its name{' ' + repr(configured) if configured else ''} suggests; check that the server is running "
            "and answers GET /v1/models"))
    entry = next((e for e in entries if e["id"] == configured), None) if configured else entries[0]
    if entry is None and len(entries) == 1:
        entry = entries[0]  # a single-model server (llama.cpp) answers with its model whatever the name
    if entry is None:
        return ServedModel(configured, source="setting")
    if not configured and len(entries) > 1:
        log.info("%s serves %d models; %s is empty, so the first, %s, is used", where, len(entries), setting,
                 entry["id"])
    n_params, size_from = _reported_params(entry), "server metadata"
    if n_params is None:
        n_params, size_from = _file_params(str(entry["id"]), base_url)
    log.info("%s serves %s (%s parameters, from %s)", where, entry["id"],
             count_text(n_params) if n_params else "unknown", size_from or "nowhere")
    return ServedModel(configured or str(entry["id"]), n_params, "setting" if configured else "server",
                       size_from if n_params else "")


def discovery_timeout(settings: Any) -> float:
    return min(DISCOVERY_TIMEOUT_S, float(settings.backend_timeout_s))


def for_settings(settings: Any, client: Any, setting: str) -> ServedModel:
    """resolve() for the model named by `setting` ('llm_model' or 'judge_model') of `settings`."""
    return resolve(client, str(getattr(settings, setting) or ""),
                   str(settings.openai_base_url or ""), setting=setting,
                   timeout_s=discovery_timeout(settings))


def client_and_name(settings: Any, client_setting: str, model_setting: str) -> tuple[Any, str]:
    """An OpenAI client for `client_setting` and the model name to send (resolved from `model_setting`)."""
    from core.backends import openai_common as oc

    client = oc.make_client(settings, client_setting)
    named = str(getattr(settings, model_setting) or "").strip()
    return client, named or for_settings(settings, client, model_setting).name  # a name set is sent as it is
