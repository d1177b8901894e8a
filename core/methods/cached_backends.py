"""The backends as the methods see them: each real backend counted, then cached on disk.

`calls` counts the calls that reached a real backend (what costs money or time); the cache's own counters
count hits and misses. One CachedBackends lives as long as its pipeline; budgets are applied per query."""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from core.methods.cache import CachedCaptioner, CachedEmbedder, CachedGenerator, CachedJudge, CachedLLM, CachedReader
from core.methods.disk_cache import DiskCache

log = logging.getLogger(__name__)
_COUNTED = {"embed_images", "embed_texts", "chat", "ask", "generate", "caption", "read",
            "generate_from_references"}


class Counted:
    """Forwards everything to `inner`, counting calls of the costly methods under `name`."""

    def __init__(self, inner: Any, name: str, calls: dict[str, int], lock: threading.Lock):
        self._inner, self._name, self._calls, self._lock = inner, name, calls, lock

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._inner, attr)
        if attr in _COUNTED and callable(value):
            def counted(*args, **kwargs):
                with self._lock:
                    self._calls[self._name] = self._calls.get(self._name, 0) + 1
                return value(*args, **kwargs)
            return counted
        return value


class Unavailable:
    """Stands in for a backend that could not be built: every call raises BackendError with the reason, so each
    stage degrades with a notice instead of the whole search failing."""

    is_standin = False

    def __init__(self, name: str, exc: BaseException):
        self.name, self.reason = name, str(exc) or type(exc).__name__
        self.model_id = f"unavailable:{name}"

    def _fail(self, *args, **kwargs):
        from core.contracts.errors import BackendError

        raise BackendError(f"the {self.name} backend is unavailable: {self.reason}", "check its settings")

    embed_images = embed_texts = chat = ask = generate = caption = read = generate_from_references = _fail
    dim = 0
    max_text_tokens = None

    def count_tokens(self, text: str) -> int:
        return 0


class UnusedJudge:
    """The judge of a model that failed its check (core.search.model_checkup): every question is answered
    "not checked" with the reason, so no photo is scored by it; its own prompt id keeps its answers apart in the
    cache."""

    is_standin = False

    def __init__(self, model_id: str, reason: str):
        self.model_id, self.reason = model_id, reason
        self.prompt_id = "not used: failed its check"
        self.not_used = reason  # why none of its answers is a check (core.methods.rerank's notice says it)

    def ask(self, request):
        from core.backends.reach import abstain

        return abstain(self.reason)

    def unseen(self, text: str) -> list[str]:
        return []


def unusable(backends: Any, name: str) -> str:
    """Why backend `name` of `backends` is not used ('' when it is, or nothing checked it)."""
    found = getattr(backends, "unusable", None)
    return str(found.get(name, "")) if isinstance(found, dict) else ""


def _raw(backends: Any, name: str) -> Any:
    if name == "embedder":  # nothing works without it: let its error reach the user
        return backends.embedder
    try:
        return getattr(backends, name)
    except Exception as exc:  # a missing package, a bad model name, no API key ...: every call reports it
        log.exception("the %s backend could not be built; its stages will degrade", name)
        return Unavailable(name, exc)


class CachedBackends:
    def __init__(self, backends: Any, cache_dir: Path, generated_dir: Path, size_mb: float | None = None):
        """`size_mb`: the disk cache's bound (the cache_size_mb setting; None: diskcache's own)."""
        self.raw = backends
        self.cache = DiskCache(cache_dir, size_mb)
        self.generated_dir = Path(generated_dir)
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()
        self._made: dict[str, Any] = {}
        self.unavailable: dict[str, str] = {}

    def _wrap(self, name: str, make) -> Any:
        with self._lock:
            if name not in self._made:
                raw = _raw(self.raw, name)
                if isinstance(raw, Unavailable):
                    self.unavailable[name] = raw.reason
                self._made[name] = make(Counted(raw, name, self.calls, self._lock))
            return self._made[name]

    @property
    def embedder(self) -> CachedEmbedder:
        return self._wrap("embedder", lambda b: CachedEmbedder(b, self.cache))

    @property
    def llm(self) -> CachedLLM:
        return self._wrap("llm", lambda b: CachedLLM(b, self.cache))

    @property
    def judge(self) -> CachedJudge:
        unused = self._unused_judge()
        if unused is not None:
            return CachedJudge(unused, self.cache)
        return self._wrap("judge", lambda b: CachedJudge(b, self.cache))

    def _unused_judge(self) -> UnusedJudge | None:
        """The stand-in that answers "not checked" when the judge failed its check, else None."""
        reason = unusable(self.raw, "judge")
        return UnusedJudge(str(self.raw.judge.model_id), reason) if reason else None

    @property
    def generator(self) -> CachedGenerator:
        return self._wrap("generator", lambda b: CachedGenerator(b, self.cache, self.generated_dir))

    @property
    def captioner(self) -> CachedCaptioner:
        return self._wrap("captioner", lambda b: CachedCaptioner(b, self.cache))

    @property
    def reader(self) -> CachedReader | None:
        """The cached photo reader of the answer stage, or None when answers read captions."""
        with self._lock:
            if "reader" not in self._made:
                try:
                    raw = getattr(self.raw, "reader", None)
                except Exception as exc:  # the reader could not be built: every answer reports it
                    log.exception("the reader backend could not be built; answers will read captions")
                    raw = Unavailable("reader", exc)
                    self.unavailable["reader"] = raw.reason
                self._made["reader"] = None if raw is None else CachedReader(
                    Counted(raw, "reader", self.calls, self._lock), self.cache)
            return self._made["reader"]

    def counted(self, name: str) -> Counted:
        """The real backend `name`, counted but not cached."""
        return Counted(_raw(self.raw, name), name, self.calls, self._lock)

    def judge_for(self, budget) -> CachedJudge:
        """A cached judge whose real calls spend `budget` (one query's)."""
        from core.methods.budget import BudgetedJudge

        unused = self._unused_judge()
        if unused is not None:  # its answers cost nothing and spend no budget
            return CachedJudge(unused, self.cache)
        return CachedJudge(BudgetedJudge(self.counted("judge"), budget), self.cache)

    def generator_for(self, budget) -> CachedGenerator:
        from core.methods.budget import BudgetedGenerator

        return CachedGenerator(BudgetedGenerator(self.counted("generator"), budget), self.cache, self.generated_dir)

    def describe(self) -> dict:
        out = dict(self.raw.describe())
        for name, reason in self.unavailable.items():
            out[name] = {"model_id": f"unavailable:{name}", "standin": False, "error": reason}
        return out

    def snapshot(self) -> dict[str, Any]:
        """Backend calls and cache hits so far (subtract two snapshots for one query)."""
        return {"calls": dict(self.calls), "cache_hits": dict(self.cache.hits), "cache_misses": dict(self.cache.misses)}


def difference(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in ("calls", "cache_hits", "cache_misses"):
        a, b = after.get(part, {}), before.get(part, {})
        out[part] = {k: a[k] - b.get(k, 0) for k in a if a[k] - b.get(k, 0)}
    out["backend_calls_total"] = sum(out["calls"].values())
    out["cache_hits_total"] = sum(out["cache_hits"].values())
    return out
