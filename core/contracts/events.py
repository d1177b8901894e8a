"""Typed events a search emits while it runs: first results, each visualization, each judged photo, notices,
stage timings, and the end (done, failed or cancelled). Every event turns into JSON for `search --events`.
`Waiting` is not emitted by the search itself: SearchEngine.stream adds it while nothing else happens."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

# the steps of a search (StageEvent.stage) that wait on a model, and which one (a settings name: llm, generator,
# judge); the time-limit notices (core.methods.deadline) and the web app's status line (ui.status) name the same
STEP_BACKEND = {"instruction": "llm", "rewrite": "llm", "rerank_plan": "llm", "decompose": "llm", "answer": "llm",
                "generate": "generator", "reference": "generator", "rerank": "judge"}


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, **asdict(self)}


@dataclass(frozen=True)
class FirstResults(Event):
    """A ranking shown before the final one: `stage` is "preview" (plain embedding similarity, shown at once
    while a slower first stage runs) or "first" (the method's own first stage, before any rerank)."""

    kind: ClassVar[str] = "first_results"
    stage: str
    hits: list[dict[str, Any]]


@dataclass(frozen=True)
class StageEvent(Event):
    kind: ClassVar[str] = "stage"
    stage: str
    status: str  # started | done
    ms: float | None = None


@dataclass(frozen=True)
class Visualization(Event):
    """One generated picture (ok) or a failed one (ok False, with the error)."""

    kind: ClassVar[str] = "visualization"
    ok: bool
    organism: int
    index: int
    seed: int
    path: str = ""
    model: str = ""
    prompt: str = ""
    ignored_words: list[str] = field(default_factory=list)
    error: str = ""


@dataclass(frozen=True)
class PhotoJudged(Event):
    """One photo's sub-question answers are in; `done` of `total` photos judged so far."""

    kind: ClassVar[str] = "judged"
    photo: dict[str, Any]
    done: int
    total: int

    @property
    def progress(self) -> str:
        return f"judged {self.done}/{self.total}"


@dataclass(frozen=True)
class Waiting(Event):
    """Nothing new for a while: `stage` (the innermost step still running, "" if none) started `seconds` ago.
    SearchEngine.stream(..., heartbeat_s=...) yields one after each quiet `heartbeat_s`, so a page can show a
    live wait for a slow backend."""

    kind: ClassVar[str] = "waiting"
    stage: str
    seconds: float


@dataclass(frozen=True)
class Notice(Event):
    kind: ClassVar[str] = "notice"
    text: str


@dataclass(frozen=True)
class Done(Event):
    """The search finished; `result` is the final core.contracts.search_result.SearchResult."""

    kind: ClassVar[str] = "done"
    result: Any

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, "method": self.result.method, "n": len(self.result.hits)}


@dataclass(frozen=True)
class Failed(Event):
    kind: ClassVar[str] = "error"
    error: BaseException

    def to_json(self) -> dict[str, Any]:
        return {"type": self.kind, "error": str(self.error)}


@dataclass(frozen=True)
class Cancelled(Event):
    kind: ClassVar[str] = "cancelled"
    reason: str
