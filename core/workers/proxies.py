"""What the server holds in place of a backend that runs in a worker process: the same attributes (model_id,
is_standin, dim ...) and methods, each method call sent to the worker. The embedder is split: texts are
embedded in the server (a search's first step, and cheap), pictures in the worker."""
from __future__ import annotations

from functools import partial
from typing import Any, Sequence

IMAGE_SIDE = frozenset({"preprocess_images", "encode_preprocessed"})


class RemoteBackend:
    """A backend in a worker (core.workers.pool.Worker): plain attributes as the worker reported them, methods
    called in the worker."""

    def __init__(self, worker: Any):
        facts = worker.facts()  # starts the process and loads the model (BackendError when that fails)
        self._worker, self._methods = worker, frozenset(facts["methods"])
        self.__dict__.update(facts["attrs"])
        self.worker_pid = facts.get("pid")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._methods:
            raise AttributeError(name)
        return partial(self._worker.call, name)


class SplitEmbedder:
    """The embedder of the server (texts, token counts, everything else) with its pictures embedded by the
    embedder worker (the same model, loaded there once)."""

    def __init__(self, local: Any, worker: Any):
        self._local, self._worker = local, worker

    def embed_images(self, images: Sequence[Any]):
        return self._worker.call("embed_images", list(images))

    def __getattr__(self, name: str) -> Any:
        # the split ingest path (preprocess here, encode there) is hidden: an ingest embeds its pictures with
        # embed_images, in the worker, like everything else
        if name.startswith("__") or name in IMAGE_SIDE:
            raise AttributeError(name)
        return getattr(self._local, name)
