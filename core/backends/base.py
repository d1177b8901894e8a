"""The backend interfaces: embedder, text LLM, vision-language judge, image generator (optionally composing
from reference pictures), photo reader (answers from photos), captioner.

Each is a small Protocol; real implementations import their heavy packages lazily, offline ones run here.
Every backend exposes `model_id` (stored with what it produced) and `is_standin` (True for offline
stand-ins, so the app can label their output)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np
from PIL import Image

from core.contracts.records import Photo


@runtime_checkable
class Embedder(Protocol):
    """Images and texts into one space; every row L2-normalised, float32."""

    model_id: str
    dim: int
    is_standin: bool
    max_text_tokens: int | None  # the text encoder's context; longer text is truncated

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray: ...

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


@dataclass
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@runtime_checkable
class LLM(Protocol):
    """Chat completion. `json_schema`, when given, asks for JSON of that shape (callers still validate)."""

    model_id: str
    is_standin: bool

    def chat(self, messages: Sequence[ChatMessage], *, temperature: float = 0.0, seed: int = 0,
             max_tokens: int = 256, json_schema: dict[str, Any] | None = None) -> str: ...


@dataclass
class JudgeRequest:
    """One yes/no question about one photo, with what the judge should know."""

    image: Image.Image
    question: str  # the yes/no (sub-)question
    query: str = ""  # the user's original query
    context: str = ""  # expert context paragraph (may be empty)
    history: tuple[tuple[str, str], ...] = ()  # earlier (sub-question, answer) pairs for this photo
    photo: Photo | None = None  # metadata, for judges that may use it (never the label)
    # Majority voting: 0 is the deterministic first vote; a judge that can sample (the OpenAI judge) draws vote
    # v > 0 with seed v and a temperature above 0. Offline judges are deterministic and may ignore it.
    vote: int = 0


@dataclass
class JudgeAnswer:
    """A judge's answer to one yes/no question about one photo, or its abstention: `abstained` means the judge
    could not answer from the photo ("not checked"); `reason` then says why and `unchecked` names the parts
    of the question it cannot see ("calling", "at night"; empty when the whole question was out of reach for
    another reason, e.g. an undecided reply). An abstention counts as undecided (0.5), neither pass nor fail
    (core/backends/reach.py builds one)."""

    answer: str  # "yes" or "no"; "not checked" when abstained
    top_logprobs: dict[str, float]  # first answer token -> log-probability (top-20); may be empty when abstained
    reason: str = ""  # one line
    abstained: bool = False
    unchecked: tuple[str, ...] = ()


@runtime_checkable
class Judge(Protocol):
    """Answers yes/no questions about photos. A judge may abstain (JudgeAnswer.abstained) on a question it
    cannot answer from the photo; a judge that knows its reach in advance also has `unseen(text) -> list[str]`,
    the phrases of `text` it cannot check (optional: callers use getattr)."""

    model_id: str
    is_standin: bool

    def ask(self, request: JudgeRequest) -> JudgeAnswer: ...


@dataclass
class GeneratedImage:
    image: Image.Image
    prompt: str
    seed: int
    model_id: str
    ignored_words: list[str] = field(default_factory=list)  # words a stand-in generator could not draw


@runtime_checkable
class ImageGenerator(Protocol):
    model_id: str
    is_standin: bool

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage: ...


@dataclass
class ReferenceImage:
    """A picture a generator should draw from, and what to take from it (Cross-modal RAG: a Pareto photo and
    the sub-queries it satisfies)."""

    image: Image.Image
    instruction: str  # e.g. "use only: a red crest; a perched bird"
    photo_id: int | None = None


@runtime_checkable
class PhotoReader(Protocol):
    """A vision-language model that answers a question from several photos, citing them by id as [id]."""

    model_id: str
    is_standin: bool

    def read(self, question: str, photos: Sequence[tuple[int, Image.Image]]) -> str: ...


@runtime_checkable
class Captioner(Protocol):
    model_id: str
    is_standin: bool

    def caption(self, image: Image.Image, photo: Photo | None = None) -> str: ...


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norms, 1e-12)
