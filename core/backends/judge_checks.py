"""Judge honesty: what the OpenAI-compatible judge must get from its server before an answer counts.

A reply counts as a judged answer only if it is a chat completion (not an HTML page or plain text), has a
choice, carries log-probabilities for its first answer token, and that token is a yes or a no. Before its
first answer, the judge is probed once: the same question about two very different pictures must not give
identical log-probabilities (a text-only model, or a server that drops image parts, answers both alike),
and the server must accept image parts at all. Anything else is a BackendError naming the cause, so the
rerank stage counts that photo as failed and says why instead of ranking by noise."""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

from PIL import Image

from core.backends.base import JudgeRequest
from core.contracts.errors import BackendError, BackendUnavailable, DeadlinePassed

log = logging.getLogger(__name__)
PROBE_QUESTION = "Is this picture mostly red?"
NEEDS_VISION = "set judge_model to a vision-language model (one that accepts image input)"
NEEDS_LOGPROBS = ("use a server and model that return log-probabilities (OpenAI, vLLM, or llama.cpp's server "
                  "started with --logits_all)")


def not_json(where: str) -> BackendError:
    return BackendError(f"the judge server {where} sent a reply that is not JSON",
                        "check openai_base_url: it must point at an OpenAI-compatible API (usually ending in /v1)")


def honest_reply(response: Any, where: str, neither_ok: bool = False) -> tuple[str, dict[str, float]]:
    """(text, first-answer-token log-probabilities) of one judge reply, or BackendError saying why the reply
    cannot count as an answer. `neither_ok`: a first token with no yes or no among its alternatives is passed
    on (the caller treats it as an abstention) instead of raised."""
    from core.backends import openai_common as oc
    from core.backends.judge_answers import _yes_no_mass, answer_logprobs

    choices = getattr(response, "choices", None)
    if choices is None:  # the client hands back the body as text when it is not JSON (a login or error page)
        body = str(response)[:2000].lower()
        what = "an HTML page" if "<html" in body or "<!doctype" in body else "text"
        raise BackendError(f"the judge server {where} answered with {what}, not a chat completion",
                           "check openai_base_url: it must point at an OpenAI-compatible API (usually ending in /v1)")
    if not choices:
        raise BackendError(f"the judge server {where} sent an empty reply (no choices)",
                           "check the server's log: the model may have failed on this photo")
    text = oc.message_text(response)
    top = answer_logprobs(getattr(choices[0], "logprobs", None))
    if not top:
        raise BackendError(f"the judge server {where} sent no log-probabilities, so the judge's confidence "
                           "cannot be read", NEEDS_LOGPROBS)
    yes, no = _yes_no_mass(top)
    if yes <= 0.0 and no <= 0.0 and not neither_ok:
        raise BackendError(f"the judge's answer did not start with yes or no (it began {text[:40]!r})",
                           "use a model that follows the yes/no instruction of the judge prompt")
    return text, top


def probe_pictures() -> tuple[Image.Image, Image.Image]:
    """Two pictures no seeing model could confuse: bright red, and dark blue with a white disc."""
    red = Image.new("RGB", (256, 256), (220, 20, 20))
    blue = Image.new("RGB", (256, 256), (15, 25, 120))
    from PIL import ImageDraw

    ImageDraw.Draw(blue).ellipse([64, 64, 192, 192], fill=(250, 250, 250))
    return red, blue


class VisionProbe:
    """Runs the two-picture probe once per judge (the first ask) and remembers a failure.

    A judge that cannot see images is never asked again. A probe that failed for a passing reason (no answer
    within backend_timeout_s, a rate limit, a server error) is remembered too: every ask in the judge's
    cool-down (backend_cooldown_s) fails at once with BackendUnavailable, so the rerank stage marks the
    photos as not checked instead of calling a dead server once per photo; after the cool-down the probe runs
    again. Asks that arrive while the probe runs wait for it (one probe, not one per photo). A probe that
    the search's time limit cut short is not remembered (DeadlinePassed): the server is not to blame."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._verdict: str | None = None  # None: not probed yet; "": the judge sees images; else why not
        self._failure: BackendError | None = None  # the last probe's passing failure
        self._failed_at = 0.0

    def check(self, judge: Any) -> None:
        with self._lock:
            if self._verdict is None:
                self._failure_or_probe(judge)
        if self._verdict:
            raise BackendUnavailable(self._verdict, NEEDS_VISION)

    def _failure_or_probe(self, judge: Any) -> None:
        cooldown = float(getattr(getattr(judge.client, "ecolens_limits", None), "cooldown_s", 60.0))
        ago = time.monotonic() - self._failed_at
        if self._failure is not None and ago < cooldown:  # the same cause, without calling the server again
            raise BackendUnavailable(self._failure.message, self._failure.hint)
        try:
            self._verdict = self._probe(judge)
        except DeadlinePassed:  # the search ran out of time, not the server: the next search probes again
            raise
        except BackendError as err:
            self._failure, self._failed_at = err, time.monotonic()
            log.error("judge %s failed its image check; not called for %.0f s: %s", judge.model_id, cooldown,
                      err.message)
            raise BackendUnavailable(err.message, err.hint) from None
        self._failure = None

    @staticmethod
    def _probe(judge: Any) -> str:
        """'' when the judge answers the two pictures differently; else the reason it cannot see images.
        A passing failure (no answer, rate limit, connection) raises BackendError; the caller remembers it."""
        from core.backends import openai_common as oc

        where = oc.server_name(judge.client)
        tops = []
        for picture in probe_pictures():
            request = JudgeRequest(image=picture, question=PROBE_QUESTION)
            with oc.calling("The judge's image check", judge.client):  # one total deadline per picture
                try:
                    response = judge.create(request)
                except ValueError:  # a body that is not JSON
                    raise not_json(where) from None
                except Exception as exc:
                    status = getattr(exc, "status_code", None)
                    if status in (400, 415, 422) or (status is not None and "image" in str(exc).lower()):
                        log.error("judge %s rejects image input: %s", judge.model_id, exc)
                        return (f"the judge server {where} rejects image input (HTTP {status}), so it cannot "
                                "judge photos")
                    raise
            tops.append(honest_reply(response, where)[1])
        if tops[0] == tops[1]:
            log.error("judge %s gave identical log-probabilities for two different pictures: %s",
                      judge.model_id, tops[0])
            return (f"the judge model {judge.model} at {where} does not see the photos: it answered a red and a blue "
                    "picture with identical log-probabilities")
        log.info("judge %s passed the image check", judge.model_id)
        return ""
