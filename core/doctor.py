"""The backend check-up behind `app.py doctor`: each configured backend is built and sent one tiny request,
and the answer is checked for what EcoLens relies on.

  embedder   its dimension, and eight colour pictures (fixed seed) against the eight texts "a red picture",
             ...: each picture's closest text must be its own colour for at least PASS_MATCHES of them, a
             score that guessing reaches less than 1% of the time (random weights fail: not usable)
  llm        one JSON task (two yes/no sub-questions) with its schema; the answer must parse and name the subject;
             an in-process model (transformers) must also find an English sentence clearly likelier than its
             words backwards (core/backends/fluency.py: random weights do not, though their JSON still parses)
  judge      one yes/no question about a picture that shows it and one that does not (a red and a green
             picture, or the judge's own `probe_case()`, e.g. the demo world's two look-alike birds): both
             answers need yes/no log-probabilities, and p(yes) must be clearly higher for the first (the same
             p(yes) for both is a blind judge: not usable, stand-ins included)
  generator  one small picture
  captioner  one sentence about a picture; an in-process model, the English-sentence check as for the llm

A failing probe becomes a row with the error and its fix; nothing here raises for a backend's fault."""
from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np
from PIL import Image

from core.backends.base import ChatMessage, JudgeRequest
from core.contracts.errors import EcoLensError
from core.redact import mask_urls_in

log = logging.getLogger(__name__)
KINDS = ("embedder", "llm", "judge", "generator", "captioner")
RED, GREEN = (200, 30, 30), (30, 170, 40)
JUDGE_QUESTION = "Is the picture red?"
# the embedder's probe: eight colours, each a picture with a little noise drawn from a fixed seed (the verdict
# is the same on every run) and a text naming it
PROBE_COLOURS: dict[str, tuple[int, int, int]] = {
    "red": RED, "green": GREEN, "blue": (40, 70, 210), "yellow": (240, 220, 40), "white": (245, 245, 245),
    "black": (15, 15, 15), "orange": (240, 130, 20), "purple": (130, 40, 170)}
PROBE_SEED = 20240611
CHANCE_LIMIT = 0.01  # a probe passes only with a score that guessing reaches less often than this
JUDGE_MARGIN = 0.05  # p(yes) for the picture that shows it must be at least this much above the other's
LLM_QUERY = "a heron eating a fish"


@dataclass
class ProbeResult:
    backend: str  # embedder | llm | judge | generator | captioner
    setting: str  # the configured name (URLs masked)
    ok: bool
    standin: bool
    model_id: str
    detail: str  # what the probe saw
    fix: str  # how to fix a failure ('' when ok)
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _picture(colour: tuple[int, int, int], side: int = 64) -> Image.Image:
    return Image.new("RGB", (side, side), colour)


class ProbeFailed(ValueError):
    """A backend answered, but not well enough to be used: the message says why, `fix` what to do."""

    def __init__(self, message: str, fix: str):
        super().__init__(message)
        self.fix = fix


def chance_of(matched: int, n: int) -> float:
    """How often guessing (each picture's closest text one of the n at random) matches at least `matched`."""
    p = 1.0 / n
    return sum(math.comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(matched, n + 1))


PASS_MATCHES = next(m for m in range(1, len(PROBE_COLOURS) + 1) if chance_of(m, len(PROBE_COLOURS)) < CHANCE_LIMIT)


def probe_pictures(side: int = 64) -> list[Image.Image]:
    """One picture per probe colour: the colour with noise of a fixed seed."""
    rng = np.random.default_rng(PROBE_SEED)
    out = []
    for rgb in PROBE_COLOURS.values():
        pixels = np.asarray(rgb, dtype=np.float32)[None, None, :] + rng.normal(0.0, 8.0, (side, side, 3))
        out.append(Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)))
    return out


def probe_embedder(embedder: Any) -> str:
    n = len(PROBE_COLOURS)
    texts = np.asarray(embedder.embed_texts([f"a {c} picture" for c in PROBE_COLOURS]), dtype=np.float32)
    images = np.asarray(embedder.embed_images(probe_pictures()), dtype=np.float32)
    dim = int(getattr(embedder, "dim", texts.shape[-1]))
    if texts.shape != (n, dim) or images.shape != (n, dim):
        raise ValueError(f"vectors of shape {texts.shape} and {images.shape}, expected ({n}, {dim})")
    if not (np.isfinite(texts).all() and np.isfinite(images).all()):
        raise ValueError("vectors with NaN or infinite values")
    matched = int(((images @ texts.T).argmax(axis=1) == np.arange(n)).sum())
    said = (f"dimension {dim}; colour pictures matched to their colour's text: {matched}/{n} (guessing "
            f"matches {matched} or more {100 * chance_of(matched, n):.2g}% of the time; {PASS_MATCHES} needed)")
    if matched < PASS_MATCHES:
        raise ProbeFailed(f"not usable: {said}; its vectors do not tell colours apart, as with random weights "
                          "or a checkpoint that is not this model's",
                          "use trained weights: embedder=open_clip:ARCH/TAG (e.g. open_clip:ViT-B-32/"
                          "laion2b_s34b_b79k), or open_clip:ARCH@FILE with a checkpoint trained for ARCH; "
                          "offline, embedder=fieldguide for the demo world")
    return said


def probe_llm(llm: Any) -> str:
    from core.methods import llm_checks, llm_schemas

    if getattr(llm, "is_standin", False):
        return "offline rules answer every task (no language model)"
    schema = llm_schemas.schema_for(llm_schemas.SubQuestionsReply, items={"questions": (2, 2)})
    system = ("Write two short yes/no questions that check whether a photo matches the request; the first asks "
              "whether its main subject is in the photo. Reply with JSON only: {\"questions\": [...]}.")
    text = llm.chat([ChatMessage("system", system), ChatMessage("user", f"Request: {LLM_QUERY}")],
                    max_tokens=120, json_schema=schema)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError(f"the answer is not JSON: {text[:80]!r}")
    reply = llm_schemas.SubQuestionsReply.model_validate(json.loads(text[start:end + 1]))
    try:
        llm_checks.require_subject("first question", LLM_QUERY, reply.questions[0])
        meaning = "names the subject"
    except llm_checks.Unusable:
        meaning = "does NOT name the subject (answers will often fall back to rules)"
    said = f"JSON task answered with its schema; first question {reply.questions[0]!r} {meaning}{_llm_size(llm)}"
    return said + reads_english(llm, "llm", said)


def reads_english(backend: Any, kind: str, said: str) -> str:
    """'' for a backend without a `fluency()` check (a server's model, a stand-in); else what the check saw.
    ProbeFailed, naming the model, when the model does not score an English sentence clearly above its words
    backwards and above a uniform guess: random weights, or a checkpoint that is not the model's."""
    check = getattr(backend, "fluency", None)
    if not callable(check):
        return ""
    model = getattr(backend, "model_id", "") or kind
    try:
        got = check()
    except Exception as exc:  # (a model whose text part cannot be read alone): no verdict either way
        log.warning("doctor: the English-sentence check could not run on %s", model, exc_info=True)
        return f"; the English-sentence check could not run ({type(exc).__name__}: {str(exc)[:120]})"
    if not got.reads_english:
        log.info("doctor: %s answered (%s) but does not read English", model, said)
        raise ProbeFailed(f"not usable: the model {model} does not read English: {got.said()}, as with random "
                          "weights or a checkpoint that is not this model's",
                          f"use the model's trained weights (download it again), point {kind} at another trained "
                          f"model ({kind}=transformers:MODEL), or set ECOLENS_MODELS=standin for the offline "
                          "stand-ins")
    return f"; reads English ({got.said()})"


def _llm_size(llm: Any) -> str:
    """What the model's facts were matched on (its parameter count where known) and what they mean."""
    facts = getattr(llm, "facts", None)
    if facts is None:
        return ""
    tiny = "tiny: notice and the request's-own-words grammar" if facts.own_words else "not tiny"
    return f"; facts matched on {facts.matched} ({tiny})"


def yes_no(top: dict[str, float]) -> tuple[float, float]:
    """(p(yes), p(no)) from first-token log-probabilities (any case, decoration stripped)."""
    yes = sum(math.exp(v) for k, v in top.items() if k.strip(" *_\"'.:").lower() == "yes")
    no = sum(math.exp(v) for k, v in top.items() if k.strip(" *_\"'.:").lower() == "no")
    return yes, no


def probe_judge(judge: Any) -> str:
    """The same question about a picture that shows it and one that does not; the judge's own `probe_case()`
    (question, picture with, picture without) where it has one (a judge made for one world's pictures)."""
    case = getattr(judge, "probe_case", None)
    question, with_it, without = case() if callable(case) else (JUDGE_QUESTION, _picture(RED), _picture(GREEN))
    answers = [judge.ask(JudgeRequest(image=im, question=question, query=question)) for im in (with_it, without)]
    for a in answers:
        if getattr(a, "abstained", False):
            raise ValueError(f"the judge did not check the probe question ({a.reason})")
        if a.answer not in ("yes", "no"):
            raise ValueError(f"answer {a.answer!r} is not yes or no")
        yes, no = yes_no(a.top_logprobs or {})
        if yes + no <= 0:
            raise ValueError("no yes/no log-probabilities in the reply (the server must return logprobs)")
    p = [yes_no(a.top_logprobs)[0] / max(1e-12, sum(yes_no(a.top_logprobs))) for a in answers]
    said = f"{question!r}: p(yes) {p[0]:.2f} for a picture that shows it vs {p[1]:.2f} for one that does not"
    fix = ("use a vision-language model that reads the image (judge=openai with judge_model set to one); "
           "offline, judge=fieldguide for the demo world")
    if abs(p[0] - p[1]) < 1e-6:
        raise ProbeFailed(f"not usable: {said}; the same answer for both pictures, so it does not see the images "
                          "(a blind judge)", fix)
    if p[0] - p[1] < JUDGE_MARGIN:
        raise ProbeFailed(f"not usable: {said}; it does not tell the two pictures apart the right way round", fix)
    return f"yes/no log-probabilities returned; {said}"


def probe_generator(generator: Any) -> str:
    out = generator.generate("a red flower", seed=0, size=64)
    if out.image.size != (64, 64):
        raise ValueError(f"a picture of {out.image.size}, expected 64 x 64")
    return "one 64 px picture drawn"


def probe_captioner(captioner: Any) -> str:
    text = captioner.caption(_picture(GREEN))
    if not isinstance(text, str) or not text.strip():
        raise ValueError("an empty caption")
    said = f"caption: {text.strip()[:60]!r}"
    return said + reads_english(captioner, "captioner", said)


PROBES: dict[str, Callable[[Any], str]] = {"embedder": probe_embedder, "llm": probe_llm, "judge": probe_judge,
                                           "generator": probe_generator, "captioner": probe_captioner}
GENERIC_FIX = {
    "embedder": "check the embedder setting (python app.py config) and that its weights are available",
    "llm": "check llm, llm_model and openai_base_url; a server must accept JSON output",
    "judge": "use a vision-language model that returns logprobs (judge=openai, judge_model=...)",
    "generator": "check the generator setting and that its weights are available",
    "captioner": "set captioner to a vision-language model (captioner=transformers:MODEL, or captioner=openai "
                 "with judge_model naming a served one), or captioner=metadata for notes from the catalog",
}
# the setting that names the model a backend set to 'openai' asks its server for (the captioner shares the judge's)
MODEL_SETTING = {"llm": "llm_model", "judge": "judge_model", "captioner": "judge_model"}


def setting_of(settings: Any, kind: str) -> str:
    """What the row of backend `kind` names: its own setting's value, and for a server backend the model
    setting it reads ('openai (judge_model=...)' for the captioner, which uses the judge's model name)."""
    value = str(getattr(settings, kind))
    model_setting = MODEL_SETTING.get(kind)
    model = str(getattr(settings, model_setting) or "") if model_setting and value == "openai" else ""
    return mask_urls_in(f"{value} ({model_setting}={model})" if model else value)


def probe(backends: Any, kind: str) -> ProbeResult:
    """Build backend `kind` from `backends` (a registry.Backends) and probe it."""
    setting = setting_of(backends.settings, kind)
    start = time.monotonic()
    backend = None
    try:
        backend = getattr(backends, kind)
        detail = PROBES[kind](backend)
        ok, fix = True, ""
    except EcoLensError as exc:
        ok, detail, fix = False, mask_urls_in(exc.message), mask_urls_in(exc.hint or GENERIC_FIX[kind])
        log.warning("doctor: the %s backend %r failed its probe: %s", kind, setting, detail)
    except ProbeFailed as exc:  # it answered, but its answers show it cannot be used
        ok, detail, fix = False, mask_urls_in(str(exc)), mask_urls_in(exc.fix)
        log.warning("doctor: the %s backend %r is not usable: %s", kind, setting, detail)
    except Exception as exc:  # a backend that answers wrongly or breaks: reported in its row
        ok, detail, fix = False, mask_urls_in(f"{type(exc).__name__}: {exc}")[:300], GENERIC_FIX[kind]
        log.warning("doctor: the %s backend %r failed its probe", kind, setting, exc_info=True)
    return ProbeResult(kind, setting, ok, bool(getattr(backend, "is_standin", False)),
                       mask_urls_in(str(getattr(backend, "model_id", ""))), detail, fix,
                       round(time.monotonic() - start, 2))


def profile_report(settings: Any) -> dict[str, Any]:
    """The model profile as a whole: its name and purpose, the backends it fills, the backend settings given
    explicitly instead (they beat the profile), and its hub models that are not downloaded yet."""
    from core.backends import model_fetch
    from core.contracts import profiles

    filled = profiles.values(settings.models)
    explicit = {k: getattr(settings, k) for k in profiles.BACKEND_SETTINGS if k in filled and k in settings.explicit()}
    return {"models": settings.models, "purpose": profiles.PURPOSE.get(settings.models, ""),
            "from_profile": {k: v for k, v in settings.from_profile().items()},
            "explicit": explicit, "overridden": {k: filled[k] for k in explicit},
            "not_downloaded": [m.repo_id for m in model_fetch.missing(settings)]}


def check_up(backends: Any) -> list[ProbeResult]:
    """One probe per backend, in KINDS order."""
    return [probe(backends, kind) for kind in KINDS]
