"""Disk cache of backend outputs keyed by a hash of the inputs and the model id (issue 4, costs).

Wrappers with the backends' own methods sit in front of each backend, so a repeated query with unchanged
settings makes no backend call. The store is a diskcache.Cache (SQLite, values over 32 KiB in files beside it):
writes are atomic, it is safe across threads and processes, and it holds at most `cache_size_mb` megabytes,
evicting the least recently used entries first. A damaged or unreadable entry is logged and treated as a miss;
a cache that cannot be opened at all is logged and every lookup is a miss.

Here: the wrappers; the store is disk_cache.py, the keys cache_keys.py."""
from __future__ import annotations

import dataclasses
import logging
import os
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from PIL import Image

from core.backends.base import GeneratedImage, JudgeAnswer, JudgeRequest
from core.methods.cache_keys import image_hash, key_of, photo_key
from core.methods.disk_cache import DiskCache
from core.prompts import judge as judge_prompts
from core.workers.right_of_way import give_way, in_plain_search

log = logging.getLogger(__name__)


class CachedEmbedder:
    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        for name in ("model_id", "dim", "is_standin", "max_text_tokens"):
            setattr(self, name, getattr(inner, name, None))

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def _cached(self, kind: str, items: Sequence[Any], compute: Callable[[list], np.ndarray]) -> np.ndarray:
        give_way()  # a costly search's step: plain searches first (core.workers.right_of_way)
        keys = [key_of(self.model_id, kind, it) for it in items]
        rows: list[np.ndarray | None] = [self.cache.get_array("embed", k) for k in keys]
        todo = [i for i, r in enumerate(rows) if r is None]
        if todo:
            fresh = np.asarray(compute([items[i] for i in todo]), dtype=np.float32)
            later = in_plain_search()  # a plain search answers first; its vectors are written right after
            for i, vec in zip(todo, fresh):
                rows[i] = vec
                self.cache.put_array("embed", keys[i], vec, later=later)
        if not rows:
            return np.zeros((0, self.dim or 0), np.float32)
        return np.stack(rows).astype(np.float32)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        # an embedder that changes how it reads words (not its weights) says so in `text_version`: its cached
        # text vectors from before are then misses, while its picture vectors stay valid
        version = getattr(self.inner, "text_version", "")
        return self._cached(f"text:{version}" if version else "text", list(texts), self.inner.embed_texts)

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        return self._cached("image", list(images), self.inner.embed_images)


def _plain(x: Any) -> bool:
    """True for JSON data (what a key can hold exactly): strings, numbers, booleans, None, lists and dicts."""
    if x is None or isinstance(x, (str, int, float, bool)):
        return True
    if isinstance(x, (list, tuple)):
        return all(_plain(v) for v in x)
    if isinstance(x, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in x.items())
    return False


class CachedLLM:
    """Caches chat answers by the model, the messages and every keyword argument of the call. Each keyword
    (json_schema with its request-words patterns, and any other a backend takes) reaches the inner LLM as given;
    a call with an argument that is not plain JSON data goes to the LLM uncached. What the cache does not
    define (own_words, is_tiny, ...) is the inner LLM's, so callers that ask the model's facts see them."""

    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        self.model_id, self.is_standin = inner.model_id, inner.is_standin
        self.notice = getattr(inner, "notice", "")  # the model's caveat (tiny SmolLM2), shown with its answers

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "cache"):  # not yet set (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def chat(self, messages, *, temperature: float = 0.0, seed: int = 0, max_tokens: int = 256,
             json_schema: dict | None = None, **options: Any) -> str:
        give_way()  # a costly search's step: plain searches first (core.workers.right_of_way)
        def call() -> str:
            return self.inner.chat(messages, temperature=temperature, seed=seed, max_tokens=max_tokens,
                                   json_schema=json_schema, **options)

        if not _plain(options):
            log.debug("LLM call with arguments that are not plain data (%s): not cached", sorted(options))
            return call()
        parts: list[Any] = [self.model_id, [(m.role, m.content) for m in messages], temperature, seed, max_tokens,
                            json_schema]
        if options:  # a call without extra arguments keeps the key it always had
            parts.append(options)
        key = key_of(*parts)
        hit = self.cache.get_json("llm", key)
        if hit is not None:
            return hit["text"]
        text = call()
        self.cache.put_json("llm", key, {"text": text})
        return text


_SAMPLE = JudgeRequest(image=None, question="Q?", query="q", context="c", history=(("a?", "yes"),))


def judge_prompt_version(judge) -> str:
    """A hash of what the judge's prompt template makes of a fixed sample request, plus the backend's own
    prompt version: part of every key that caches judge answers, so editing a prompt is a cache miss."""
    return key_of(getattr(judge, "prompt_id", ""), judge_prompts.SYSTEM, judge_prompts.user_text(_SAMPLE))


class CacheMiss(Exception):
    """Raised by a cache-only lookup that found nothing."""


class CachedJudge:
    """Caches answers by (model, photo or image, question, query, context, history, vote). `ask` accepts a
    request whose image is None together with a `load` callable: the photo is then only read on a miss."""

    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        self.model_id, self.is_standin = inner.model_id, inner.is_standin

    @property
    def prompt_id(self) -> str:
        return getattr(self.inner, "prompt_id", "")

    @property
    def not_used(self) -> str:
        """Why the judge's answers are not checks at all (one that failed its check), '' for a judge in use."""
        return str(getattr(self.inner, "not_used", "") or "")

    def ask(self, request: JudgeRequest, load: Callable[[], Image.Image] | None = None, vote: int | None = None,
            cache_only: bool = False) -> JudgeAnswer:
        """`vote`, when given, overrides request.vote; the inner judge receives the vote in the request."""
        give_way()  # a costly search's step: plain searches first (core.workers.right_of_way)
        if vote is not None and vote != request.vote:
            request = dataclasses.replace(request, vote=int(vote))
        who = photo_key(request.photo) if request.photo is not None else request.image
        # the key holds everything that decides the answer: model, photo, the rendered prompt (so an edited
        # prompt template is a miss), the backend's own prompt version if it has one, and the vote
        key = key_of(self.model_id, getattr(self.inner, "prompt_id", ""), who, judge_prompts.SYSTEM,
                     judge_prompts.user_text(request), request.vote)
        hit = self.cache.get_json("judge", key, count_miss=not cache_only)
        if hit is not None:
            return JudgeAnswer(hit["answer"], hit["top_logprobs"], hit.get("reason", ""),
                               bool(hit.get("abstained", False)), tuple(hit.get("unchecked") or ()))
        if cache_only:
            raise CacheMiss(key)
        if request.image is None:
            if load is None:
                raise ValueError("a judge request needs an image or a loader")
            request = dataclasses.replace(request, image=load())
        ans = self.inner.ask(request)
        self.cache.put_json("judge", key, {"answer": ans.answer, "top_logprobs": ans.top_logprobs,
                                           "reason": ans.reason, "abstained": bool(getattr(ans, "abstained", False)),
                                           "unchecked": list(getattr(ans, "unchecked", ()) or ())})
        return ans

    def unseen(self, text: str) -> list[str]:
        """The phrases of `text` the judge says it cannot check (none when it does not say)."""
        found = getattr(self.inner, "unseen", None)
        return list(found(text)) if callable(found) else []


class CachedGenerator:
    """Keeps each picture as a PNG keyed by (prompt, model, seed, size); `last_path` tells where it is."""

    def __init__(self, inner, cache: DiskCache, out_dir: Path):
        self.inner, self.cache, self.out_dir = inner, cache, Path(out_dir)
        self.model_id, self.is_standin = inner.model_id, inner.is_standin

    def generate_to_file(self, prompt: str, *, seed: int, size: int = 224) -> tuple[GeneratedImage, Path]:
        key = key_of(self.model_id, prompt, seed, size)
        return self._stored(key, lambda: self.inner.generate(prompt, seed=seed, size=size), asked=(prompt, seed))

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage:
        return self.generate_to_file(prompt, seed=seed, size=size)[0]

    @property
    def supports_references(self) -> bool:
        inner = self.inner
        if hasattr(inner, "supports_references"):
            return bool(inner.supports_references)
        return callable(getattr(inner, "generate_from_references", None))

    def generate_from_references_to_file(self, prompt: str, references, *, seed: int,
                                         size: int = 224) -> tuple[GeneratedImage, Path]:
        """Like generate_to_file, composing from reference pictures; keyed also by each reference's pixels and
        instruction."""
        refs = [(image_hash(r.image), r.instruction, r.photo_id) for r in references]
        key = key_of(self.model_id, "references", prompt, refs, seed, size)
        return self._stored(key, lambda: self.inner.generate_from_references(prompt, list(references), seed=seed,
                                                                              size=size))

    def _stored(self, key: str, make, asked: tuple[str, int] | None = None) -> tuple[GeneratedImage, Path]:
        """The picture under `key` (a PNG beside its cache entry), made by `make` on a miss. `asked`: the
        (prompt, seed) a hit reports; without it, the entry keeps the picture's own prompt and seed."""
        give_way()  # a costly search's step: plain searches first (core.workers.right_of_way)
        png = self.out_dir / f"{key[:24]}.png"
        meta = self.cache.get_json("generated", key)
        if meta is not None and png.is_file():
            with Image.open(png) as im:
                image = im.convert("RGB")
            prompt, seed = asked if asked is not None else (meta.get("prompt", ""), meta.get("seed", 0))
            return GeneratedImage(image, prompt, seed, meta["model_id"], meta.get("ignored_words", [])), png
        out = make()
        png.parent.mkdir(parents=True, exist_ok=True)
        tmp = png.with_name(f".{png.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        out.image.convert("RGB").save(tmp, format="PNG")
        os.replace(tmp, png)
        meta = {"model_id": out.model_id, "ignored_words": list(out.ignored_words)}
        if asked is None:
            meta.update(prompt=out.prompt, seed=out.seed)
        self.cache.put_json("generated", key, meta)
        return out, png


class CachedCaptioner:
    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        self.model_id, self.is_standin = inner.model_id, inner.is_standin

    def caption(self, image: Image.Image | None, photo=None, load: Callable[[], Image.Image] | None = None) -> str:
        who = [photo_key(photo), photo.caption, photo.scientific_name, photo.common_name] if photo is not None \
            else image
        hint = " / ".join(n for n in (photo.common_name, photo.scientific_name) if n) if photo is not None else ""
        key = key_of(self.model_id, getattr(self.inner, "prompt_id", ""), who, judge_prompts.CAPTION_SYSTEM,
                     judge_prompts.caption_text(hint))
        give_way()  # a costly search's step: plain searches first (core.workers.right_of_way)
        hit = self.cache.get_json("caption", key)
        if hit is not None:
            return hit["text"]
        if image is None:
            image = load() if load is not None else None
        text = self.inner.caption(image, photo)
        self.cache.put_json("caption", key, {"text": text})
        return text


class CachedReader:
    """Caches a photo reader's answers by (model, question, the photos' identities); `read` takes photos with
    loaders, so cached answers never read a picture."""

    def __init__(self, inner, cache: DiskCache):
        self.inner, self.cache = inner, cache
        self.model_id, self.is_standin = inner.model_id, inner.is_standin

    def read(self, question: str, photos: Sequence[tuple[Any, Callable[[], Image.Image]]]) -> str:
        """`photos`: (photo, load) pairs in the order the reader should see them."""
        from core.prompts import answer as answer_prompts

        key = key_of(self.model_id, answer_prompts.READER_SYSTEM, answer_prompts.reader_intro(question),
                     [(int(p.id), photo_key(p)) for p, _ in photos])
        hit = self.cache.get_json("reader", key)
        if hit is not None:
            return hit["text"]
        text = self.inner.read(question, [(int(p.id), load()) for p, load in photos])
        self.cache.put_json("reader", key, {"text": text})
        return text
