"""Vision-language yes/no judge through an OpenAI-compatible chat server (judge='openai').

One call per (photo, question): the photo goes as a data-URL image part, the prompt (core/prompts/judge.py)
asks for the answer word first and a one-line reason, and the call requests the top log-probabilities of
each generated token. The answer's confidence is computed by the caller from `top_logprobs` of the FIRST
answer token (methods.md section 3.4); this module only collects them. Model: the `judge_model` setting.
Votes (JudgeRequest.vote): vote 0 is greedy; later votes are sampled with their own seed (majority voting).

Reach: a vision-language model sees the photo, so its yes or no is taken as it is; but when its first answer
token puts less than MIN_ANSWER_SHARE (half) of its listed probability on yes or no variants (it began "It",
"I cannot", "Maybe"), it did not answer, and the answer is an abstention ("not checked")."""
from __future__ import annotations

import logging
from typing import Any

from core.backends import openai_common as oc
from core.backends import served_model
from core.backends.base import JudgeAnswer, JudgeRequest
from core.backends.judge_answers import (  # noqa: F401
    MIN_ANSWER_SHARE,
    _get,
    _yes_no_mass,
    answer_logprobs,
    answer_share,
    first_answer_logprobs,
    legacy_first_answer_logprobs,
    parse_answer,
)
from core.backends.judge_checks import VisionProbe, honest_reply, not_json
from core.backends.reach import abstain
from core.prompts import judge as prompts

log = logging.getLogger(__name__)
MAX_TOKENS = 40  # the answer word and a short reason
VOTE_TEMPERATURE = 0.7  # sampling temperature of votes after the first (majority voting)
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
        return cls(*served_model.client_and_name(settings, "judge", "judge_model"), settings.top_logprobs)

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
        # no logprobs, no choices, an HTML page: not an answer (an error); a first word that is neither yes nor
        # no: an abstention
        text, top = honest_reply(response, where, neither_ok=True)
        share = answer_share(top)
        if share < MIN_ANSWER_SHARE:
            log.info("judge %s abstained on %r: yes/no share %.2f of its first token (%r)", self.model_id,
                     request.question, share, text[:60])
            said = " ".join(text.split())[:120]
            return abstain(f"the photo checker answered neither yes nor no ({share:.0%} of its first word was a yes "
                           f"or no): {said!r}" if said else
                           f"the photo checker answered neither yes nor no ({share:.0%} of its first word)")
        answer, reason = parse_answer(text, top)
        return JudgeAnswer(answer=answer, top_logprobs=top, reason=reason)

    def create(self, request: JudgeRequest) -> Any:
        """The raw chat completion for one request (no checks)."""
        return self.client.chat.completions.create(
            model=self.model, messages=self.messages(request), **self.sampling(request),
            max_tokens=self.max_tokens, logprobs=True, top_logprobs=self.top_logprobs)
