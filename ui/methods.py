"""Presets to core pipeline requests: Fast = baseline, Visualize = VisRet, Verify = VisRet + full rerank,
Cover = Pareto coverage. One Pipeline per app (it holds the disk cache); events stream back to handlers."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from core.methods.pipeline import Pipeline, SearchRequest
from core.methods.plugir import DialogueSession
from core.records import Filters

PRESET_NAMES = ("Fast", "Visualize", "Verify", "Cover")


@dataclass
class Knobs:
    """The advanced panel: every knob a preset may use."""

    k: int = 20
    m: int = 3
    rerank_k: int = 100
    rerank_mode: str = "full"
    answer: bool = False
    seeds: list[int] | None = None  # VisRet seeds (regenerate / drop change them)
    examples: list[Any] = field(default_factory=list)  # PIL images joining the fusion


def request_for(preset: str, query: str, knobs: Knobs, filters: Filters | None = None,
                relevant: Sequence[int] = (), nonrelevant: Sequence[int] = ()) -> SearchRequest:
    """The pipeline request a preset stands for."""
    visret = preset in ("Visualize", "Verify")
    return SearchRequest(query=query, k=knobs.k, filters=filters, method="visret" if visret else "baseline",
                         m=knobs.m, seeds=knobs.seeds if visret else None,
                         rerank=knobs.rerank_mode if preset == "Verify" else "none", rerank_k=knobs.rerank_k,
                         coverage=preset == "Cover", answer=knobs.answer, examples=list(knobs.examples),
                         relevant_ids=list(relevant), nonrelevant_ids=list(nonrelevant))


class Methods:
    """The app's one Pipeline (built on first use) and dialogue sessions sharing its cached backends."""

    def __init__(self, engine: Any):
        self.engine = engine
        self._pipeline: Pipeline | None = None
        self._lock = threading.Lock()

    @property
    def pipeline(self) -> Pipeline:
        with self._lock:
            if self._pipeline is None:
                self._pipeline = Pipeline(self.engine.search)
            return self._pipeline

    def run(self, request: SearchRequest, on_event=None) -> Any:
        return self.pipeline.run(request, on_event=on_event)

    def stream(self, request: SearchRequest) -> Iterator[dict[str, Any]]:
        """Events as stages finish, ending with {"type": "result"|"error", ...}."""
        return self.pipeline.stream(request)

    def dialogue(self, description: str, filters: Filters | None = None, k: int | None = None) -> DialogueSession:
        return DialogueSession(self.engine.search, description, backends=self.pipeline.backends,
                               filters=filters, k=k)
