"""Reading a yes/no judge's reply: the answer word and its reason from the text, and the log-probabilities
of the FIRST answer token (methods.md section 3.4), in the chat API's current and legacy layouts."""
from __future__ import annotations

import math
import re
from typing import Any, Sequence

_DECOR = " \t\r\n*_`\"'“”‘’:-–—.,()[]"
_ANSWER_AT_START = re.compile(r"^[\W_]*(yes|no)\b", re.IGNORECASE)
_ANSWER_ANYWHERE = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def first_answer_logprobs(content: Sequence[Any] | None) -> dict[str, float]:
    """token -> log-probability among the top alternatives of the first token that is not blank or
    decoration (markdown stars, quotes). Empty when the server sent no log-probabilities."""
    for entry in content or []:
        token = _get(entry, "token", "") or ""
        if not token.strip(_DECOR):
            continue
        out: dict[str, float] = {}
        for alt in _get(entry, "top_logprobs", None) or []:
            tok, lp = _get(alt, "token", None), _get(alt, "logprob", None)
            if tok is not None and lp is not None:
                out[tok] = max(float(lp), out.get(tok, -math.inf))
        if not out and _get(entry, "logprob", None) is not None:
            out[token] = float(_get(entry, "logprob"))
        return out
    return {}


def legacy_first_answer_logprobs(tokens: Sequence[str] | None, top: Sequence[Any] | None,
                                 token_logprobs: Sequence[float] | None = None) -> dict[str, float]:
    """The same from the older completions-style shape some servers send for chat too (llama-cpp-python):
    parallel lists `tokens`, `top_logprobs` (a dict per token) and `token_logprobs`."""
    top = list(top or [])
    lps = list(token_logprobs or [])
    for i, token in enumerate(tokens or []):
        if not (token or "").strip(_DECOR):
            continue
        alts = top[i] if i < len(top) and isinstance(top[i], dict) else {}
        out = {str(t): float(lp) for t, lp in alts.items() if lp is not None}
        if not out and i < len(lps) and lps[i] is not None:
            out[token] = float(lps[i])
        return out
    return {}


def answer_logprobs(logprobs: Any) -> dict[str, float]:
    """First-answer-token alternatives from a choice's `logprobs`, in either shape."""
    if logprobs is None:
        return {}
    content = _get(logprobs, "content", None)
    if content:
        return first_answer_logprobs(content)
    return legacy_first_answer_logprobs(_get(logprobs, "tokens", None), _get(logprobs, "top_logprobs", None),
                                        _get(logprobs, "token_logprobs", None))


MIN_ANSWER_SHARE = 0.5  # below this share of yes + no in the first token's alternatives, the judge abstains


def answer_share(top: dict[str, float]) -> float:
    """The share of the first answer token's listed probability that is on a yes or a no variant (0 when
    nothing is listed). A model that puts most of its first word elsewhere ("It", "I", "Maybe") did not answer
    the question with yes or no."""
    total = sum(math.exp(lp) for lp in (top or {}).values())
    yes, no = _yes_no_mass(top or {})
    return (yes + no) / total if total > 0 else 0.0


def _yes_no_mass(top: dict[str, float]) -> tuple[float, float]:
    yes = sum(math.exp(lp) for t, lp in top.items() if t.strip(_DECOR).lower() == "yes")
    no = sum(math.exp(lp) for t, lp in top.items() if t.strip(_DECOR).lower() == "no")
    return yes, no


def parse_answer(text: str, top: dict[str, float] | None = None) -> tuple[str, str]:
    """('yes' | 'no', one-line reason) from the judge's reply. The answer word is looked for at the start,
    then anywhere (if only one of the two occurs); failing both, the log-probabilities decide; else 'no'."""
    text = (text or "").strip()
    start = _ANSWER_AT_START.match(text)
    words = {m.group(1).lower() for m in _ANSWER_ANYWHERE.finditer(text)}
    if start:
        answer, rest = start.group(1).lower(), text[start.end():]
    elif len(words) == 1:  # only one of the two words occurs ("I think yes, ...")
        answer, rest = words.pop(), text
    else:
        yes, no = _yes_no_mass(top or {})
        answer = "yes" if yes > no else "no"
        rest = text
    reason = rest.strip(_DECOR).splitlines()[0].strip() if rest.strip(_DECOR) else ""
    return answer, reason[:240]
