"""Vision-language yes/no judge through an OpenAI-compatible chat server (judge='openai').

One call per (photo, question): the photo goes as a data-URL image part, the prompt (core/prompts/judge.py)
asks for the answer word first and a one-line reason, and the call requests the top log-probabilities of
each generated token. The answer's confidence is computed by the caller from `top_logprobs` of the FIRST
answer token (methods.md section 3.4); this module only collects them. Model: the `judge_model` setting.
Votes (JudgeRequest.vote): vote 0 is greedy; later votes are sampled with their own seed (majority voting)."""
from __future__ import annotations

import math
import re
from typing import Any, Sequence

from core.backends import openai_common as oc
from core.backends.base import JudgeAnswer, JudgeRequest
from core.backends.judge_checks import VisionProbe, honest_reply, not_json
from core.prompts import judge as prompts

MAX_TOKENS = 40  # the answer word and a short reason
VOTE_TEMPERATURE = 0.7  # sampling temperature of votes after the first (majority voting)
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


class OpenAIJudge:
    is_standin = False

    def __init__(self, client: Any, model: str, top_logprobs: int = 20, max_tokens: int = MAX_TOKENS):
        self.client = client
        self.max_tokens = int(max_tokens)
        self.model = model
        self.top_logprobs = max(0, min(int(top_logprobs), 20))  # the API's upper bound
        self.model_id = f"openai-judge:{model}@{oc.server_name(client)}"
        self.vision = VisionProbe()

    @classmethod
    def from_settings(cls, settings: Any, spec: str = "openai", embedder: Any = None) -> "OpenAIJudge":
        return cls(oc.make_client(settings, "judge"), settings.judge_model, settings.top_logprobs)

    def messages(self, request: JudgeRequest) -> list[dict[str, Any]]:
        """The chat sent for one request (public so a cache can key on it)."""
        return [
            {"role": "system", "content": prompts.SYSTEM},
            {"role": "user", "content": [
                {"type": "text", "text": prompts.user_text(request)},
                {"type": "image_url", "image_url": {"url": oc.image_data_url(request.image)}},
            ]},
        ]

    @staticmethod
    def sampling(request: JudgeRequest) -> dict[str, Any]:
        """Vote 0 is greedy (temperature 0, seed 0); vote v > 0 samples with seed v at VOTE_TEMPERATURE, so
        majority voting sees different draws."""
        vote = max(0, int(getattr(request, "vote", 0) or 0))
        return {"temperature": VOTE_TEMPERATURE if vote else 0.0, "seed": vote}

    def ask(self, request: JudgeRequest) -> JudgeAnswer:
        self.vision.check(self)  # once per judge: a model that cannot see images never judges a photo
        where = oc.server_name(self.client)
        with oc.calling("The judge request", self.client, oc.VISION_NOTE):
            try:
                response = self.create(request)
            except ValueError:  # the body was not JSON
                raise not_json(where) from None
        text, top = honest_reply(response, where)  # no logprobs, no choices, an HTML page: not an answer
        answer, reason = parse_answer(text, top)
        return JudgeAnswer(answer=answer, top_logprobs=top, reason=reason)

    def create(self, request: JudgeRequest) -> Any:
        """The raw chat completion for one request (no checks)."""
        return self.client.chat.completions.create(
            model=self.model, messages=self.messages(request), **self.sampling(request),
            max_tokens=self.max_tokens, logprobs=True, top_logprobs=self.top_logprobs)
