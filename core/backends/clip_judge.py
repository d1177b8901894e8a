"""Offline judge from the embedder (judge='clip'): an approximation, not a reading of the photo.

The yes/no question is rewritten by simple rules into a statement and its negation ("Is there a nest?" ->
"a photo with a nest" / "a photo with no nest"); p(yes) is the softmax of the photo's similarity to the
two, scaled by a CLIP-like temperature. The result is reported in the same shape as a real judge's
(top log-probabilities of 'Yes' and 'No'), flagged as a stand-in.

Its reach (when it abstains, answering "not checked"):
- on a question about something no picture states: sounds and calls (calling, singing, buzzing, loud),
  time of day (at night, at dawn, in the evening), smell, taste and temperature (NON_VISUAL below). An image
  and a sentence cannot be compared on these, so any p(yes) would be the rest of the sentence speaking;
- inside its undecided band: when p(yes) is within the setting undecided_band (0.1 by default) of 0.5, the two
  statements are about as close to the photo as each other and the judge says neither yes nor no; the page
  and `search --json` call the same band "can't tell" for every judge."""
from __future__ import annotations

import math
import re
import threading
from typing import Any

import numpy as np

from core.backends.base import Embedder, JudgeAnswer, JudgeRequest
from core.backends.reach import abstain, phrases

TEMPERATURE = 100.0  # CLIP's usual logit scale
# words with no visual statement: sounds, time of day, smell, taste, temperature
NON_VISUAL = frozenset(
    "call calls calling called croak croaks croaking sing sings singing sang song songs chirp chirps chirping "
    "buzz buzzes buzzing hum hums humming hoot hoots hooting howl howls howling bark barks barking roar roars "
    "roaring whistle whistles whistling drum drums drumming trill trills trilling sound sounds sounding noise "
    "noises noisy loud loudly quiet quietly silent silently voice voices vocal vocalizing vocalising echo "
    "night nights nighttime night-time midnight dawn dusk twilight morning mornings evening evenings afternoon "
    "noon sunrise sunset daytime nocturnal diurnal crepuscular "
    "smell smells smelling smelly scent scented odour odor fragrant fragrance stink stinks stinking "
    "taste tastes tasting tasty bitter sweet sour warm cold hot cool temperature".split())
_AUX = r"(?:is|are|was|were|does|do|did|can|could|has|have|will|would|should)"
_ABOUT_PHOTO = re.compile(
    r"^(?:the|this|that)\s+(?:photo|image|picture|photograph)\s+"
    r"(?:shows?|shown|contains?|depicts?|include|includes|have|has|show|contain|depict)\s+", re.IGNORECASE)
_THERE = re.compile(r"^there\s+(?:any\s+)?", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:a|an|any|some)\s+", re.IGNORECASE)
_HAVE = re.compile(r"^(.+?)\s+(?:have|has)\s+(.+)$", re.IGNORECASE)
_IN_PHOTO = re.compile(r"\s+(?:in|on)\s+(?:the|this)\s+(?:photo|image|picture|photograph)$", re.IGNORECASE)


def statement_pair(question: str) -> tuple[str, str]:
    """(statement, negated statement) for a yes/no question, by word rules only."""
    text = re.sub(r"\s+", " ", (question or "").strip()).rstrip("?.! ").strip()
    aux = re.match(rf"^{_AUX}\s+", text, re.IGNORECASE)
    core = text[aux.end():] if aux else text
    core = _IN_PHOTO.sub("", core)
    there = _THERE.match(core)
    if there:
        core = core[there.end():]
        return f"a photo with {core}", f"a photo with no {_ARTICLE.sub('', core)}"
    about = _ABOUT_PHOTO.match(core)
    if about:
        core = core[about.end():]
    owner = _HAVE.match(core) if aux and aux.group(0).strip().lower() in ("do", "does", "did") else None
    if owner and not about:
        subject, thing = owner.group(1), owner.group(2)
        return f"a photo of {subject} with {thing}", f"a photo of {subject} without {_ARTICLE.sub('', thing)}"
    core = core or "the subject"
    return f"a photo of {core}", f"a photo without {core}"


def yes_probability(image_vec: np.ndarray, pos_vec: np.ndarray, neg_vec: np.ndarray,
                    temperature: float = TEMPERATURE) -> float:
    """softmax(T * [cos(image, pos), cos(image, neg)])[0] for L2-normalised vectors."""
    a = temperature * float(np.dot(image_vec, pos_vec))
    b = temperature * float(np.dot(image_vec, neg_vec))
    return 1.0 / (1.0 + math.exp(max(-700.0, min(700.0, b - a))))


class ClipJudge:
    is_standin = True
    prompt_id = "reach-1"  # part of the cache keys of its answers: answers from before abstentions are misses

    def __init__(self, embedder: Embedder, band: float, temperature: float = TEMPERATURE):
        self.embedder = embedder
        self.temperature = float(temperature)
        self.band = float(band)  # |p(yes) - 0.5| within this: not checked (setting undecided_band)
        self.prompt_id = f"undecided-band {self.band:g}"  # part of the judge cache key: a new band is a miss
        self.model_id = f"clip-judge@v1/{embedder.model_id}"
        self._statements: dict[str, tuple[str, str, np.ndarray]] = {}  # question -> texts and vectors
        self._lock = threading.Lock()  # judge calls run in parallel (judge_concurrency); the cache is shared

    def _statement_vectors(self, question: str) -> tuple[str, str, np.ndarray]:
        """The statement pair and its two text vectors; cached, as one question is asked of many photos."""
        with self._lock:
            found = self._statements.get(question)
        if found is None:
            pos, neg = statement_pair(question)
            found = (pos, neg, np.asarray(self.embedder.embed_texts([pos, neg])))
            with self._lock:
                if len(self._statements) >= 1024:
                    self._statements.clear()
                self._statements[question] = found
        return found

    @classmethod
    def from_settings(cls, settings: Any, spec: str, embedder: Embedder) -> "ClipJudge":
        return cls(embedder, settings.undecided_band)

    @staticmethod
    def unseen(text: str) -> list[str]:
        """The phrases of `text` with no visual statement ("calling", "at night")."""
        return phrases(text, lambda w: w in NON_VISUAL)

    def ask(self, request: JudgeRequest) -> JudgeAnswer:
        unseen = self.unseen(request.question)
        if unseen:
            return abstain(f"{', '.join(unseen)}: nothing a photo shows, so the similarity checker did not check "
                           "this question", unseen)
        pos, neg, text_vecs = self._statement_vectors(request.question)
        image_vec = np.asarray(self.embedder.embed_images([request.image]))[0]
        p = yes_probability(image_vec, text_vecs[0], text_vecs[1], self.temperature)
        tiny = 1e-12
        top = {"Yes": math.log(max(p, tiny)), "No": math.log(max(1.0 - p, tiny))}
        if abs(p - 0.5) <= self.band:
            return abstain(f"approximation by image-text similarity: '{pos}' vs '{neg}' gives p(yes)={p:.2f}, "
                           "too close to even to say yes or no")
        answer = "yes" if p >= 0.5 else "no"
        reason = (f"approximation by image-text similarity: '{pos}' vs '{neg}' gives p(yes)={p:.2f}; "
                  "not a visual judgement")
        return JudgeAnswer(answer=answer, top_logprobs=top, reason=reason)
