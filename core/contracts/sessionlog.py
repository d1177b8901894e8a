"""The session log contract: what the web app records about sessions, turns, requests, stages, labels and
exports, as plain dataclasses plus the SessionLog protocol. storage/sessionlog.py implements it on SQLite;
core/sessions/memory_log.py (MemorySessionLog) keeps everything in memory (tests, throwaway runs)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Protocol, Sequence

from core.contracts import bounds
from core.contracts.errors import InputError

RELEVANT, NOT_RELEVANT, SKIPPED = 1, 0, -1
LABEL_VALUES = (RELEVANT, NOT_RELEVANT, SKIPPED)
SESSION_KINDS = ("search", "dialogue", "compare", "label")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class SessionInfo:
    """One browser session of one kind (search, dialogue, compare, label)."""

    id: int
    kind: str
    title: str = ""
    created_at: datetime = field(default_factory=utcnow)
    requests: int = 0
    labels: int = 0
    # every distinct query of the session's searches and labels, in the order first used: what the history
    # picker names the session by (the stored title is only its first search)
    queries: tuple[str, ...] = ()
    token: str = ""  # what the page and the API call the session by (core.people.session_tokens); `id` stays inside
    owner: str = ""  # the logged-in person's name key; '' when nobody logs in (or one shared password)

    def named(self) -> str:
        """The session's queries joined (whole, none cut), or its title when it has none."""
        return " · ".join(self.queries) or self.title


@dataclass
class StageRecord:
    """One stage of a request: its ranking [(photo id, score)] and its artefacts (JSON; pictures by path)."""

    name: str
    ranking: list[tuple[int, float]] = field(default_factory=list)
    artefacts: dict[str, Any] = field(default_factory=dict)


@dataclass
class RequestRecord:
    """One search: the query, the method, the settings and model ids used, and its stages."""

    session_id: int
    query: str
    method: str
    settings: dict[str, Any] = field(default_factory=dict)
    models: dict[str, Any] = field(default_factory=dict)
    filters: dict[str, Any] = field(default_factory=dict)
    id: int | None = None
    created_at: datetime = field(default_factory=utcnow)
    stages: list[StageRecord] = field(default_factory=list)


@dataclass
class TurnRecord:
    """One dialogue turn: the question asked, the user's answer and the reformulated description."""

    session_id: int
    index: int
    question: str
    answer: str = ""
    description: str = ""
    request_id: int | None = None
    id: int | None = None
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class Label:
    """One relevance judgement: this photo is (1) / is not (0) relevant to this query, or skipped (-1)."""

    session_id: int
    query: str
    photo_id: int
    label: int
    annotator: str
    seconds: float = 0.0
    id: int | None = None
    created_at: datetime = field(default_factory=utcnow)
    session_token: str = ""  # the session's token when read back from a log: what an export names it by

    def checked(self) -> "Label":
        if self.label not in LABEL_VALUES:
            raise InputError(f"Label {self.label!r} is not 1, 0 or -1", "use 1 relevant, 0 not relevant, -1 skip")
        name = bounds.name(bounds.text("annotator name", self.annotator, 200))  # NFC, one space, trimmed
        if not bounds.name_key(name):  # nothing visible: zero-width or bidi characters only
            raise InputError("The annotator name is empty", "type your name before labelling")
        query = bounds.name(bounds.text("query", self.query))  # stored and compared as clean_query leaves it
        if not query:
            raise InputError("The label has no query", "search for something before labelling")
        return replace(self, annotator=name[:100], query=query, seconds=max(0.0, float(self.seconds or 0.0)))


@dataclass
class ExportRecord:
    session_id: int | None
    format: str
    path: str
    rows: int
    id: int | None = None
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class SessionDetail:
    """A past session reopened: its requests (with stages), dialogue turns and labels."""

    session: SessionInfo
    requests: list[RequestRecord] = field(default_factory=list)
    turns: list[TurnRecord] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)


class SessionLog(Protocol):
    def start_session(self, kind: str, title: str = "", owner: str = "") -> int:
        """A new session owned by `owner` ('' nobody); returns its number (its token: `token`)."""

    def token(self, session_id: int) -> str:
        """The session's token; NotFoundError when the number is unknown."""

    def find(self, token: Any, owner: str | None = None) -> int:
        """The number of the session with this token, owned by `owner` (None: anyone's); the one
        core.people.session_tokens.no_such_session answer for anything else."""

    def log_request(self, request: RequestRecord) -> int:
        """Store the request and its stages (pictures in artefacts are written as files); returns its id."""

    def add_stage(self, request_id: int, stage: StageRecord) -> None: ...

    def log_turn(self, turn: TurnRecord) -> int: ...

    def add_label(self, label: Label) -> int: ...

    def labels(self, session_id: int | None = None, query: str | None = None) -> list[Label]: ...

    def remove_label(self, label_id: int) -> Label:
        """Undo: delete one label (the annotator's previous label of that photo, if any, counts again);
        returns it. NotFoundError when the id is unknown."""

    def set_instructions(self, query: str, text: str) -> None:
        """The annotators' instructions for one query (empty text removes them)."""

    def instructions(self, query: str) -> str:
        """The instructions for `query`, or ''."""

    def log_export(self, export: ExportRecord) -> int: ...

    def exports(self) -> list[ExportRecord]: ...

    def sessions(self, limit: int = 50, owner: str | None = None) -> list[SessionInfo]:
        """Most recent first; only `owner`'s when given."""

    def session(self, session_id: int) -> SessionDetail:
        """NotFoundError when the id is unknown."""


def ranking_of(hits: Sequence[Any]) -> list[tuple[int, float]]:
    """[(photo id, score)] of a list of core.contracts.records.Hit."""
    return [(int(h.photo_id), float(h.score)) for h in hits]
