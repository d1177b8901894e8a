"""The outcome of one search: the final ranking (what every front end shows and the evaluation scores) plus
everything needed to explain it; `stages` holds each method's artefacts."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.contracts.records import Hit


@dataclass
class SearchResult:
    query: str
    method: str
    hits: list[Hit]
    timings_ms: dict[str, float] = field(default_factory=dict)
    backends: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    stages: dict[str, Any] = field(default_factory=dict)
    filters: dict[str, Any] = field(default_factory=dict)
    pool_size: int | None = None
    label: str = ""  # the preset or method name the caller chose

    @property
    def ids(self) -> list[int]:
        return [h.photo_id for h in self.hits]

    def to_json(self) -> dict[str, Any]:
        out = {"query": self.query, "method": self.method, "results": [h.to_json() for h in self.hits],
               "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()}, "backends": self.backends,
               "notices": self.notices, "pool_size": self.pool_size, "filters": self.filters}
        if self.label:
            out["preset"] = self.label
        if self.stages:
            out["stages"] = self.stages
        return out
