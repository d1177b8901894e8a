"""Backends chosen by name from settings (a plug-in's come with its one registration, core.plugins.registry):
create_embedder, create_llm, create_judge, create_generator, create_captioner and the lazy Backends bundle.
Implementations are imported only when chosen; what each model needs (steps, guidance, size, precision, context) is
data in core/backends/model_facts.py.

Backends builds each backend once, under a lock (two concurrent searches never load a model twice), and a
load that failed is remembered for the process: it is logged once and the same error is raised again at
once, instead of loading again for every photo or picture."""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable

from core.backends.base import LLM, Captioner, Embedder, ImageGenerator, Judge
from core.backends.model_facts import ModelFacts, model_facts  # noqa: F401  (the registry's model data)
from core.backends.resolution import resolve
from core.config import Settings
from core.contracts.errors import BackendError
from core.plugins import registry as plugins

log = logging.getLogger(__name__)

# name (or "prefix:") -> "module:factory"; each factory takes (settings, spec[, embedder]).
EMBEDDERS = {
    "hash": "core.backends.hash_embedder:HashEmbedder.from_settings",
    "open_clip:": "core.backends.openclip_embedder:OpenClipEmbedder.from_settings",
}
LLMS = {
    "rule": "core.backends.rule_llm:RuleLLM.from_settings",
    "llama_cpp": "core.backends.llamacpp_llm:LlamaCppLLM.from_settings",
    "openai": "core.backends.openai_llm:OpenAILLM.from_settings",
    "transformers:": "core.backends.transformers_llm:TransformersLLM.from_settings",
}
JUDGES = {
    "clip": "core.backends.clip_judge:ClipJudge.from_settings",
    "openai": "core.backends.openai_judge:OpenAIJudge.from_settings",
    "transformers:": "core.backends.transformers_vlm:TransformersJudge.from_settings",
}
GENERATORS = {
    "standin": "core.backends.standin_generator:StandinGenerator.from_settings",
    "diffusers:": "core.backends.diffusers_generator:DiffusersGenerator.from_settings",
    "openai:": "core.backends.openai_generator:OpenAIGenerator.from_settings",
}
EMBEDDER_JUDGES = {"clip"}  # judges built on the embedder (a world's judge may read its encoder's heads)
CAPTIONERS = {
    "metadata": "core.backends.metadata_captioner:MetadataCaptioner.from_settings",
    "openai": "core.backends.openai_captioner:OpenAICaptioner.from_settings",
    "transformers:": "core.backends.transformers_vlm:TransformersCaptioner.from_settings",
}


TABLES = {"embedder": EMBEDDERS, "llm": LLMS, "judge": JUDGES, "generator": GENERATORS, "captioner": CAPTIONERS}
# (kind, name) of the backends that run a model in this process (CPU- or GPU-heavy): with workers on, each runs
# in a worker process of its kind (core/workers/); backends behind a server, and cheap ones, stay in the process
MODEL_BACKENDS = {("embedder", "open_clip:"), ("judge", "clip"), ("judge", "transformers:"),
                  ("generator", "diffusers:"), ("captioner", "transformers:")}


def table(kind: str) -> dict[str, str]:
    """The backends setting `kind` accepts: EcoLens's own, then the registered plug-ins'."""
    return {**TABLES[kind], **plugins.backend_targets(kind)}


def reads_embedder(judge: str) -> bool:
    """Whether judge `judge` is built on the embedder (it receives it as a third argument)."""
    return judge in EMBEDDER_JUDGES or judge in plugins.embedder_judges()


def runs_model(kind: str, value: str) -> bool:
    """Whether backend `value` of `kind` runs a model in the process (an exact name or a 'prefix:' entry)."""
    known = MODEL_BACKENDS | plugins.model_backends()
    if (kind, value) in known:
        return True
    return any(k == kind and name.endswith(":") and value.startswith(name) for k, name in known)


def list_backends() -> dict[str, list[str]]:
    """The backend names each setting accepts (prefixes end with ':')."""
    return {kind: list(table(kind)) for kind in TABLES}


def create_embedder(settings: Settings) -> Embedder:
    factory, spec = resolve(table("embedder"), "embedder", settings.embedder)
    return factory(settings, spec)


def create_llm(settings: Settings) -> LLM:
    factory, spec = resolve(table("llm"), "llm", settings.llm)
    return factory(settings, spec)


def create_judge(settings: Settings, embedder: Embedder) -> Judge:
    factory, spec = resolve(table("judge"), "judge", settings.judge)
    return factory(settings, spec, embedder)


def create_generator(settings: Settings) -> ImageGenerator:
    factory, spec = resolve(table("generator"), "generator", settings.generator)
    return factory(settings, spec)


def create_captioner(settings: Settings) -> Captioner:
    factory, spec = resolve(table("captioner"), "captioner", settings.captioner)
    return factory(settings, spec)


# backend kind -> the setting that names it, where the two differ
SETTING_OF = {"reader": "answer_reader"}

# (backend kind, settings) -> the error its load raised; kept for the life of the process.
_FAILED_LOADS: dict[tuple[str, Settings], BackendError] = {}
_FAILED_LOCK = threading.Lock()


def failed_load(kind: str, settings: Settings) -> BackendError | None:
    """The remembered load error of backend `kind` under `settings`, if its load failed in this process."""
    with _FAILED_LOCK:
        return _FAILED_LOADS.get((kind, settings))


def _remember_failure(kind: str, settings: Settings, exc: BackendError) -> None:
    with _FAILED_LOCK:
        _FAILED_LOADS[(kind, settings)] = exc
    if exc.hint and "restart" not in exc.hint:
        exc.hint = f"{exc.hint} (then restart EcoLens: a failed load is not retried)"


@dataclass
class Backends:
    """The five backends one engine uses. Built lazily so that a search that needs no judge never loads one."""

    settings: Settings
    _embedder: Embedder | None = None
    _llm: LLM | None = None
    _judge: Judge | None = None
    _generator: ImageGenerator | None = None
    _captioner: Captioner | None = None
    _reader: object | None = None  # a PhotoReader, or None when answers read captions (core/backends/readers.py)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    # core.workers.pool.WorkerPool: backends that run a model are built in its worker processes (None: here)
    workers: object | None = field(default=None, repr=False, compare=False)
    # called as on_load(kind, backend) after each build (core.search.model_checkup starts its check there)
    on_load: Callable[[str, object], None] | None = field(default=None, repr=False, compare=False)
    # kind -> why its answers are not used (a model that failed its check: core.search.model_checkup)
    unusable: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    # the world plug-in (core.contracts.world.World) the collection is, as the composition root sees it before
    # the reader is built: the answer reader 'auto' picks its reader (None: no world)
    world: object | None = field(default=None, repr=False, compare=False)

    def _remote(self, kind: str, build: Callable[[], object]) -> object:
        """Backend `kind` from `build()`, or, with workers and a backend that runs a model, its stand-in for the
        worker that runs it (the embedder: texts here, pictures in the worker)."""
        if self.workers is None or not runs_model(kind, getattr(self.settings, kind)):
            return build()
        return self.workers.backend(kind, build)

    def _lazy(self, name: str, make: Callable[[], object]):
        built = getattr(self, "_" + name)
        if built is not None:
            return built
        with self._lock:  # re-entrant: the judge builds the embedder first
            if getattr(self, "_" + name) is None:
                remembered = failed_load(name, self.settings)
                if remembered is not None:  # a fresh copy: re-raising one object would grow its traceback
                    raise BackendError(remembered.message, remembered.hint)
                try:
                    setattr(self, "_" + name, make())
                except BackendError as exc:
                    log.exception("loading the %s backend %r failed; not retried in this process", name,
                                  getattr(self.settings, SETTING_OF.get(name, name)))
                    _remember_failure(name, self.settings, exc)
                    raise
                if self.on_load is not None:
                    self.on_load(name, getattr(self, "_" + name))
            return getattr(self, "_" + name)

    @property
    def embedder(self) -> Embedder:
        return self._lazy("embedder", lambda: self._remote("embedder", lambda: create_embedder(self.settings)))

    @property
    def llm(self) -> LLM:
        return self._lazy("llm", lambda: create_llm(self.settings))

    @property
    def judge(self) -> Judge:
        # only the judges that read the embedder get it: an OpenAI judge must not fail for a broken embedder
        return self._lazy("judge", lambda: self._remote("judge", lambda: create_judge(
            self.settings, self.embedder if reads_embedder(self.settings.judge) else None)))

    @property
    def generator(self) -> ImageGenerator:
        return self._lazy("generator", lambda: self._remote("generator", lambda: create_generator(self.settings)))

    @property
    def captioner(self) -> Captioner:
        return self._lazy("captioner", lambda: self._remote("captioner", lambda: create_captioner(self.settings)))

    @property
    def reader(self):
        """The photo reader of the answer stage (setting answer_reader), or None: answers read captions."""
        from core.backends.readers import create_reader

        return self._lazy("reader", lambda: create_reader(self.settings, self.embedder, self.world))

    def describe(self) -> dict[str, dict[str, object]]:
        """Model id and stand-in flag of each backend built so far (for JSON output and banners)."""
        out = {}
        for name in ("embedder", "llm", "judge", "generator", "captioner", "reader"):
            b = getattr(self, "_" + name)
            if b is not None:
                out[name] = {"model_id": b.model_id, "standin": bool(b.is_standin)}
        return out
