"""One call of a text-LLM task (`ask`) with the task's offline rule as its fallback, and what the tasks share.

`ask` returns (value, source) with source "llm" or "rule". An LLM that fails, returns nothing or returns
something unusable is replaced by the rule and a notice is added (with a log line); the offline 'rule' LLM (a
stand-in that always answers "") means "use the rule" and adds no notice. `checked_rule` puts the rule's answer
through the task's own parser; `backend_attr`, `model_label` and `note_model` read the backend's facts through
the wrappers around it (the cache, the call counter). The tasks themselves are llm_tasks.py."""
from __future__ import annotations

import json
import logging
from typing import Any, Callable

from core.backends.base import ChatMessage
from core.contracts.errors import DeadlinePassed
from core.methods import llm_checks as checks

log = logging.getLogger(__name__)


def short_error(exc: BaseException) -> str:
    """The error's message: EcoLens's own (written to be read: which server, which limit) whole, without its
    fix line, which is generic and, cut short, read as a broken sentence ("(raise the search..."); any other
    error's text at most 160 characters (an HTML page, a stack of reasons)."""
    own = getattr(exc, "message", "")
    if isinstance(own, str) and own.strip():
        return own.strip()[:400]
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def ask(llm, task: str, system: str, user: str, parse: Callable[[str], Any], rule: Callable[[], Any],
        notices: list[str], *, json_schema: dict | None = None, max_tokens: int = 300,
        temperature: float = 0.0) -> tuple[Any, str]:
    """Run one LLM task with its rule as the fallback."""
    try:
        text = llm.chat([ChatMessage("system", system), ChatMessage("user", user)], temperature=temperature,
                        max_tokens=max_tokens, json_schema=json_schema)
    except Exception as exc:  # any backend failure downgrades to the rule: notice + log line
        if isinstance(exc, DeadlinePassed):  # the search's time limit, not a fault: no traceback
            log.warning("%s: %s; using the offline rule", task, exc.message)
        else:
            log.exception("%s: LLM %s failed; using the offline rule", task, getattr(llm, "model_id", "?"))
        notices.append(f"{task}: the language model failed ({model_label(llm)}: {short_error(exc)}); used the "
                       "offline rule instead")
        return rule(), "rule"
    if not (text or "").strip():
        if not llm.is_standin:
            log.warning("%s: LLM %s returned nothing; using the offline rule", task, llm.model_id)
            notices.append(f"{task}: the language model returned nothing ({model_label(llm)}); used the offline "
                           "rule instead")
        return rule(), "rule"
    try:
        value = parse(text)
    except checks.Unusable as exc:  # the right shape, the wrong meaning: say what was refused and why
        log.warning("%s: refused the answer of LLM %s: %s (%r)", task, llm.model_id, exc, text[:200])
        notices.append(f"{task}: refused the text written by {model_label(llm)}: {exc}; the offline rule wrote "
                       "it instead")
        return rule(), "rule"
    except (ValueError, KeyError, TypeError, AttributeError):
        value = None
    if value is None:
        log.warning("%s: LLM %s answered unusably (%r); using the offline rule", task, llm.model_id, text[:200])
        notices.append(f"{task}: the language model's answer was unusable ({model_label(llm)}: not the form asked "
                       "for); used the offline rule instead")
        return rule(), "rule"
    return value, "llm"


def checked_rule(task: str, value: Any, reply: str, parse: Callable[[str], Any], notices: list[str]) -> Any:
    """The offline rule's answer, written out as an LLM reply and read back by the task's own parser, so rule
    answers pass the same checks as LLM answers. A rule answer the checks reject is still used (there is
    nothing better), with a notice and a log line."""
    try:
        parsed = parse(reply)
    except (ValueError, KeyError, TypeError, AttributeError):
        parsed = None
    if parsed is None:
        log.error("%s: the offline rule's answer failed the task's checks: %r", task, reply)
        notices.append(f"{task}: the offline rule's answer failed the checks; used it as it is")
        return value
    return parsed


def parse_json(text: str) -> Any:
    """The first JSON object in `text` (code fences and chatter around it are ignored)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object")
    return json.loads(text[start:end + 1])



def backend_attr(llm, name: str, default: Any = None) -> Any:
    """An attribute of the LLM backend, looked up through the wrappers around it (the cache's CachedLLM keeps
    the wrapped backend as `inner`; the call counter forwards every attribute)."""
    seen = 0
    while llm is not None and seen < 8:
        if name in getattr(llm, "__dict__", {}) or hasattr(type(llm), name):
            return getattr(llm, name)
        inner = getattr(llm, "inner", None)
        if inner is None:
            return getattr(llm, name, default)
        llm, seen = inner, seen + 1
    return default


def model_label(llm) -> str:
    """How notices name the model that wrote a text ('model.gguf (134.5M parameters)', else its model id)."""
    return str(backend_attr(llm, "display_name", None) or getattr(llm, "model_id", "the language model"))


def note_model(llm, notices: list[str]) -> None:
    """The backend's own caveat (e.g. the tiny-model notice), once per list of notices."""
    note = backend_attr(llm, "notice", "") or ""
    if note and note not in notices:
        notices.append(note)


def checked(task: str, parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` whose meaning failures (llm_checks.Unusable) are logged with their reason and make the answer
    unusable (ask() then uses the rule and says so)."""
    def run(text: str) -> Any:
        try:
            return parse(text)
        except checks.Unusable as exc:
            log.warning("%s: answer rejected: %s", task, exc)
            return None
    return run
