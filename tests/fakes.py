"""Fakes for tests (no mocks): embedder, LLM, judge, generator, captioner, and an in-memory corpus view
(FakeSearch) that the search engine accepts in place of core.search.corpus.Corpus.

Every fake records its calls in `.calls` (a list) so tests can count backend calls and read requests."""
from __future__ import annotations

import hashlib
import math
import threading
from typing import Any, Callable, Sequence

import numpy as np
from PIL import Image

from core.backends.base import GeneratedImage, JudgeAnswer, JudgeRequest, l2_normalise
from core.contracts.errors import BackendError
from core.contracts.records import Filters, Hit, Photo


def _seeded(text: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32)


class FakeEmbedder:
    """Texts: the sum of per-word random vectors (or `texts[text]` when given). Images: the vector stored under
    the image's top-left pixel colour in `images`, else a vector seeded by the pixels."""

    is_standin = True
    max_text_tokens = 77

    def __init__(self, dim: int = 16, texts: dict[str, np.ndarray] | None = None,
                 images: dict[tuple, np.ndarray] | None = None):
        self.dim, self.model_id = dim, f"fake-embedder/{dim}"
        self.texts, self.images = texts or {}, images or {}
        self.calls: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.calls.append(("texts", len(texts)))
        rows = [self.texts[t] if t in self.texts else sum((_seeded(w, self.dim) for w in t.lower().split()),
                                                          np.zeros(self.dim, np.float32)) for t in texts]
        return l2_normalise(np.array(rows, dtype=np.float32).reshape(len(texts), self.dim))

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        with self._lock:
            self.calls.append(("images", len(images)))
        rows = []
        for im in images:
            key = tuple(im.convert("RGB").getpixel((0, 0)))
            rows.append(self.images[key] if key in self.images else _seeded(im.tobytes().hex()[:64], self.dim))
        return l2_normalise(np.array(rows, dtype=np.float32).reshape(len(images), self.dim))


class FakeLLM:
    """Answers with the first reply whose key occurs in the system or user text; else `default`.
    A reply may be a callable(messages) -> str or an Exception to raise."""

    def __init__(self, replies: dict[str, Any] | None = None, default: str = "", is_standin: bool = False):
        self.replies, self.default, self.is_standin = replies or {}, default, is_standin
        self.model_id = "fake-llm"
        self.calls: list[list] = []

    def chat(self, messages, *, temperature: float = 0.0, seed: int = 0, max_tokens: int = 256,
             json_schema=None) -> str:
        self.calls.append(list(messages))
        text = "\n".join(m.content for m in messages)
        for key, reply in self.replies.items():
            if key in text:
                if isinstance(reply, Exception):
                    raise reply
                return reply(messages) if callable(reply) else reply
        return self.default


def logprobs_for(p: float) -> dict[str, float]:
    return {"Yes": math.log(max(p, 1e-9)), "No": math.log(max(1 - p, 1e-9))}


class FakeJudge:
    """p(yes) from `rule(request)` (default 0.5); records every request (thread-safe). `fail` raises, or
    `fail_when(request)` raises for the requests it picks. `reason(request, p)` gives the one-line reason."""

    is_standin = True

    def __init__(self, rule: Callable[[JudgeRequest], float] | None = None, fail: bool = False, delay: float = 0.0,
                 fail_when: Callable[[JudgeRequest], bool] | None = None,
                 reason: Callable[[JudgeRequest, float], str] | None = None):
        self.rule, self.fail, self.delay = rule or (lambda r: 0.5), fail, delay
        self.fail_when, self.reason = fail_when, reason
        self.model_id = "fake-judge"
        self.calls: list[JudgeRequest] = []
        self._lock = threading.Lock()

    def ask(self, request: JudgeRequest) -> JudgeAnswer:
        with self._lock:
            self.calls.append(request)
        if self.delay:
            import time

            time.sleep(self.delay)
        if self.fail or (self.fail_when is not None and self.fail_when(request)):
            raise BackendError("the fake judge is down")
        p = float(self.rule(request))
        reason = self.reason(request, p) if self.reason is not None else f"fake reason p={p:.2f}"
        return JudgeAnswer("yes" if p >= 0.5 else "no", logprobs_for(p), reason)


class FakeChatClient:
    """An OpenAI-style client for the chat judge: records the keyword arguments of every
    chat.completions.create call and answers `text` with first-token log-probabilities."""

    base_url = "fake://chat"
    api_key = ""

    def __init__(self, text: str = "Yes - red wings", top: dict[str, float] | None = None):
        from types import SimpleNamespace as NS

        self.requests: list[dict[str, Any]] = []
        self.probes: list[dict[str, Any]] = []  # the judge's two-picture check, answered as a seeing model would
        top = top or {"Yes": -0.1, "No": -2.4}
        first = text.split()[0] if text.split() else ""
        logprobs = NS(content=[NS(token=first, logprob=max(top.values()),
                                  top_logprobs=[NS(token=t, logprob=lp) for t, lp in top.items()])])
        self._response = NS(choices=[NS(message=NS(content=text), logprobs=logprobs)])
        self.chat = NS(completions=NS(create=self._create))

    def _create(self, **kwargs):
        from types import SimpleNamespace as NS

        from core.backends.judge_checks import PROBE_QUESTION

        parts = kwargs["messages"][-1]["content"]
        if any(PROBE_QUESTION in (p.get("text") or "") for p in parts):  # the judge's image check: it sees
            self.probes.append(kwargs)
            image = "".join(p["image_url"]["url"] for p in parts if p.get("type") == "image_url")
            yes = -0.05 - (int(hashlib.sha256(image.encode()).hexdigest()[:4], 16) % 100) / 50
            alts = [NS(token="Yes", logprob=yes), NS(token="No", logprob=-1.5)]
            return NS(choices=[NS(message=NS(content="Yes"), logprobs=NS(content=[NS(token="Yes", logprob=yes,
                                                                                      top_logprobs=alts)]))])
        self.requests.append(kwargs)
        return self._response


class FakeGenerator:
    """A solid colour per (prompt, seed): the first `by_prompt` colour whose key occurs in the prompt, else
    `colours` (seed -> RGB), else a hash; seeds in `fail_seeds` raise."""

    is_standin = True

    def __init__(self, colours: dict[int, tuple] | None = None, fail_seeds: Sequence[int] = (), fail_all=False,
                 by_prompt: dict[str, tuple] | None = None):
        self.colours, self.fail_seeds, self.fail_all = colours or {}, set(fail_seeds), fail_all
        self.by_prompt = by_prompt or {}
        self.model_id = "fake-generator"
        self.calls: list[tuple[str, int]] = []

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage:
        self.calls.append((prompt, seed))
        if self.fail_all or seed in self.fail_seeds:
            raise BackendError(f"the fake generator refuses seed {seed}")
        named = [c for key, c in self.by_prompt.items() if key in prompt]
        colour = (named[0] if named else self.colours.get(seed)) or \
            tuple(hashlib.sha256(f"{prompt}{seed}".encode()).digest()[:3])
        return GeneratedImage(Image.new("RGB", (size, size), colour), prompt, seed, self.model_id, [])


class FakeCaptioner:
    is_standin = False
    model_id = "fake-captioner"

    def __init__(self):
        self.calls: list[Any] = []

    def caption(self, image, photo=None) -> str:
        self.calls.append(photo.id if photo is not None else None)
        return photo.caption if photo is not None else "a photo"


class FakeBackends:
    def __init__(self, embedder=None, llm=None, judge=None, generator=None, captioner=None):
        self.embedder = embedder or FakeEmbedder()
        self.llm = llm or FakeLLM(is_standin=True)
        self.judge = judge or FakeJudge()
        self.generator = generator or FakeGenerator()
        self.captioner = captioner or FakeCaptioner()

    def describe(self) -> dict:
        return {n: {"model_id": getattr(self, n).model_id, "standin": getattr(self, n).is_standin}
                for n in ("embedder", "llm", "judge", "generator", "captioner")}


class _FakeIndex:
    def __init__(self, ids: np.ndarray, mat: np.ndarray):
        self._ids, self._mat = ids, mat
        self._row = {int(i): r for r, i in enumerate(ids)}

    def __len__(self) -> int:
        return len(self._ids)

    def ids(self):
        return self._ids

    def matrix(self):
        return self._mat

    def contains(self, pid: int) -> bool:
        return int(pid) in self._row

    def vectors(self, ids):
        return self._mat[[self._row[int(i)] for i in ids]]


class FakeSearch:
    """An in-memory corpus: photos with vectors (and optional images), ranked by cosine like
    core.search.corpus.Corpus."""

    def __init__(self, photos: Sequence[Photo], vectors: np.ndarray, settings, backends=None,
                 images: dict[int, Image.Image] | None = None):
        self.settings, self.backends = settings, backends or FakeBackends()
        self._photos = {p.id: p for p in photos}
        self.index = _FakeIndex(np.array([p.id for p in photos], dtype=np.int64), l2_normalise(vectors))
        self.images = images or {}
        self.startup_notices: list[str] = []
        self.loads = 0

    def follow_catalog(self) -> list[str]:
        """Nothing changes on disk under an in-memory corpus."""
        return []

    def pool(self, filters: Filters | None):
        if filters is None or filters.is_empty():
            return None
        return np.asarray(filters.ids or [], dtype=np.int64)

    def photos(self, ids):
        return [self._photos[int(i)] for i in ids if int(i) in self._photos]

    def untaxed(self, ids) -> set[int]:
        return {p.id for p in self.photos(ids) if not p.taxon_names()}

    def places(self, limit: int = 2000) -> list[tuple[float, float]]:
        return [(p.latitude, p.longitude) for p in self._photos.values()
                if p.latitude is not None and p.longitude is not None][:limit]

    def taxon_names(self, limit: int = 5000) -> list[tuple[str, str]]:
        names: dict[str, tuple[str, str]] = {}
        for p in self._photos.values():
            for name, rank in ((p.scientific_name, "species"), (p.common_name, "common name"), (p.genus, "genus"),
                               (p.family, "family")):
                if name:
                    names.setdefault(name.lower(), (name, rank))
        return sorted(names.values())[:limit]

    def vectors(self, ids):
        return self.index.vectors(ids)

    def load_image(self, photo: Photo) -> Image.Image:
        self.loads += 1
        return self.images.get(photo.id) or Image.new("RGB", (8, 8), (photo.id % 256, 0, 0))

    def rank_vector(self, vector, k: int, pool) -> list[tuple[int, float]]:
        ids, mat = self.index.ids(), self.index.matrix()
        if pool is not None:
            keep = np.isin(ids, pool)
            ids, mat = ids[keep], mat[keep]
        scores = mat @ np.asarray(vector, dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda r: (-round(float(scores[r]), 6), int(ids[r])))[:k]
        return [(int(ids[r]), float(scores[r])) for r in order]

    def hits(self, ranked):
        return [Hit(rank=r, photo_id=i, score=s, photo=self._photos.get(i)) for r, (i, s) in
                enumerate(ranked, start=1)]
