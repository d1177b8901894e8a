"""What one search asks for (text, example photos, or both, and every option), validated against
core.contracts.bounds before any costly stage runs."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Sequence

from PIL import Image

from core.contracts import bounds
from core.contracts.errors import InputError
from core.contracts.records import Filters

METHODS = ("baseline", "rewrite", "visret")
RERANK_MODES = ("none", "direct", "subq", "context", "full")


def visible(text: object) -> str:
    """`text` without its invisible characters (Unicode format characters: zero-width spaces and joiners, a
    byte-order mark, bidi marks), so a query of only those is empty, as it looks."""
    if not isinstance(text, str):
        return text  # bytes and other types are clean_query's to refuse
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


# how a question opens ("What colour ...", "Does it ..."); a request that is a question may be answered (the web
# app offers its answer box for it) and a picture description must not be one
QUESTION_START = re.compile(r"^\s*(what|which|how|why|when|where|who|whose|is|are|does|do|can)\b", re.IGNORECASE)


def is_question(request: str) -> bool:
    """Whether a request is a question: it ends with '?' or opens as one."""
    return request.strip().endswith("?") or bool(QUESTION_START.match(request))


def clean_query(query: str) -> str:
    """The query as it is searched, stored and compared: Unicode NFC, its spaces collapsed, trimmed
    (bounds.name); InputError if it is empty, not text or too long."""
    if isinstance(query, bytes):
        try:
            query = query.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("The query is not valid UTF-8 text", "type the query again as plain text") from None
    q = bounds.name(visible(query))
    if not q:
        raise InputError("The query is empty", "type what you are looking for, e.g. 'a frog calling at night'")
    if any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in q):
        raise InputError("The query contains control characters or broken text", "type the query again as plain text")
    if len(q) > bounds.MAX_QUERY_CHARS:
        raise InputError(f"The query has {len(q)} characters, more than {bounds.MAX_QUERY_CHARS}",
                         "shorten it to the visual features you are looking for")
    return q


@dataclass
class SearchRequest:
    query: str = ""  # words; may be empty when example photos are given
    k: int | None = None  # results returned (settings.k when None)
    filters: Filters | None = None  # pool: taxon, dates, place, licence, explicit ids
    method: str = "baseline"  # first stage: baseline | rewrite | visret
    m: int | None = None  # VisRet pictures per instruction (settings.visret_m when None)
    seeds: Sequence[int] | None = None  # VisRet seeds (change one to regenerate that picture)
    rerank: str = "none"  # none | direct | subq | context | full
    rerank_k: int | None = None  # candidates judged (settings.rerank_k when None)
    votes: int | None = None  # judge votes per question (settings.rerank_votes when None)
    coverage: bool = False  # Pareto coverage: the covering photos come first in the ranking
    reference: bool = False  # with coverage: a generated reference picture
    answer: bool = False  # short answer citing photo ids
    examples: Sequence[Image.Image] = ()  # the user's own example photos
    example_ids: Sequence[int] = ()  # catalog photos used as examples ("more like this")
    relevant_ids: Sequence[int] = ()  # relevance feedback marks (Rocchio)
    nonrelevant_ids: Sequence[int] = ()
    # comparisons of two organisms (rewrite, visret): 0 or 1 ranks that organism on its own (its own fused list,
    # as Visual-RAG-ME scores each organism); None fuses both organisms' lists into one view (the UI)
    organism: int | None = None
    # the organism to rank by name (scientific or common, e.g. Visual-RAG-ME's sn[i]); matched by name against
    # the comparison's organisms, so it holds whichever organism the question names first; wins over `organism`
    organism_name: str = ""
    preview: bool = False  # emit a plain-similarity preview before a slow first stage (the web app)
    label: str = ""  # the preset or method name the caller chose (shown and logged)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def has_examples(self) -> bool:
        return bool(self.examples) or bool(self.example_ids)

    def validate(self) -> None:
        """Raise InputError for anything out of bounds; normalises the query and the numbers in place."""
        if self.method not in METHODS:
            raise InputError(f"Unknown method {self.method!r}", "use one of: " + ", ".join(METHODS))
        if self.rerank not in RERANK_MODES:
            raise InputError(f"Unknown rerank mode {self.rerank!r}", "use one of: " + ", ".join(RERANK_MODES))
        if str(visible(self.query) or "").strip() or not self.has_examples:
            self.query = clean_query(self.query)
        else:
            self.query = ""
        if not self.query and (self.method != "baseline" or self.rerank != "none" or self.coverage or self.answer):
            raise InputError("This kind of search needs words, not only an example photo",
                             "describe what you are looking for, or search by the photo alone with the plain search")
        if self.k is not None:
            self.k = bounds.whole_number("k (results)", self.k, 1, bounds.MAX_K)
        if self.rerank_k is not None:
            self.rerank_k = bounds.whole_number("rerank_k (candidates to verify)", self.rerank_k,
                                                bounds.MIN_RERANK_K, bounds.MAX_RERANK_K)
        if self.m is not None:
            self.m = bounds.whole_number("m (pictures to draw)", self.m, 1, bounds.MAX_M)
        if self.votes is not None:
            self.votes = bounds.whole_number("votes", self.votes, 1, bounds.MAX_VOTES)
        if self.organism is not None and self.organism not in (0, 1):
            raise InputError(f"organism={self.organism} is not 0 or 1", "name the first (0) or second (1) organism")
        self.organism_name = " ".join(str(self.organism_name or "").split())
        if len(self.organism_name) > 200:
            raise InputError("organism_name is longer than 200 characters", "name one organism")
        if self.seeds is not None:
            self.seeds = [bounds.whole_number("seed", s, 0, 2**31 - 1) for s in self.seeds]
            if not self.seeds:
                self.seeds = None
        self.example_ids = bounds.photo_ids("example photos", self.example_ids)
        bounds.example_count(len(self.examples) + len(self.example_ids))
        self.relevant_ids = bounds.photo_ids("photos marked relevant", self.relevant_ids)
        self.nonrelevant_ids = bounds.photo_ids("photos marked not relevant", self.nonrelevant_ids)
        both = sorted(set(self.relevant_ids) & set(self.nonrelevant_ids))
        if both:
            raise InputError(f"Photo {', '.join(map(str, both[:5]))} is marked both relevant and not relevant",
                             "mark each photo only one way")
        if self.filters is not None and self.filters.ids is not None:
            bounds.photo_ids("the pool", self.filters.ids)

    @property
    def name(self) -> str:
        """How the search is called in results and logs, e.g. "visret+rerank:full"."""
        name = self.method
        if self.rerank != "none":
            name += f"+rerank:{self.rerank}"
        if self.coverage:
            name += "+coverage"
        return name
