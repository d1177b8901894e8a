"""The one catalog of named searches: the web app's presets (Fast, Visualize, Verify, Cover) and the
evaluation's method names (baseline, visret, rerank-full, coverage, ...) -> the SearchRequest each stands for.
The web app, the CLI and the evaluation all build their requests here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.contracts.errors import InputError
from core.contracts.search_request import SearchRequest


@dataclass(frozen=True)
class Preset:
    name: str
    method: str = "baseline"  # first stage
    rerank: str = "none"
    coverage: bool = False
    summary: str = ""  # what it does, for help texts and reports

    def fields(self) -> dict[str, Any]:
        return {"method": self.method, "rerank": self.rerank, "coverage": self.coverage}


# the web app's presets, named by what they do
PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("Fast", summary="embedding similarity only (baseline)"),
    Preset("Visualize", "visret", summary="draw what you describe, then search with the pictures (VisRet)"),
    Preset("Verify", "visret", "full", summary="VisRet, then yes/no sub-questions checked on each candidate"),
    Preset("Cover", coverage=True, summary="photos that together show every part of the query first (Pareto)"),
)}

# the evaluation's method names (the papers' baselines and ablations)
METHODS: dict[str, Preset] = {p.name: p for p in (
    Preset("baseline", summary="embedding similarity"),
    Preset("rewrite", "rewrite", summary="LLM rewrite, then embedding similarity"),
    Preset("visret", "visret", summary="VisRet"),
    *(Preset(f"rerank-{m}", rerank=m, summary=f"judge rerank ({m})") for m in ("direct", "subq", "context", "full")),
    Preset("visret+rerank-full", "visret", "full", summary="VisRet + full rerank"),
    Preset("coverage", coverage=True, summary="Pareto coverage first, then embedding similarity"),
)}

PRESET_NAMES = tuple(PRESETS)
# the setting holding each kind of search's time limit (core.methods.deadline.SearchDeadline)
DEADLINE_SETTINGS = {"Fast": "deadline_fast_s", "Visualize": "deadline_visualize_s", "Verify": "deadline_verify_s",
                     "Cover": "deadline_cover_s"}
METHOD_NAMES = tuple(METHODS)


def preset(name: str) -> Preset:
    """A preset or method by name; InputError listing the valid names."""
    found = PRESETS.get(name) or METHODS.get(name)
    if found is None:
        raise InputError(f"Unknown search {name!r}", "use one of: " + ", ".join((*PRESET_NAMES, *METHOD_NAMES)))
    return found


def request_for(name: str, query: str = "", *, rerank_mode: str | None = None, **options: Any) -> SearchRequest:
    """The request a named search stands for, with any SearchRequest option (k, m, seeds, filters, rerank_k,
    votes, answer, examples, example_ids, relevant_ids, nonrelevant_ids, organism, preview ...).
    `rerank_mode` changes the judge mode of a preset that reranks (the web app's Verify)."""
    p = preset(name)
    fields = p.fields()
    if rerank_mode and p.rerank != "none":
        fields["rerank"] = rerank_mode
    if p.method != "visret":
        options.pop("seeds", None)
        options.pop("m", None)
    return SearchRequest(query=query, label=name, **fields, **options)


def deadline_kind(request: SearchRequest) -> str:
    """The preset whose time limit bounds a request, by what it does: a judge or an answer (Verify) before
    coverage (Cover) before a drawn or rewritten first stage (Visualize); else Fast. An evaluation method
    gets the limit of the preset it resembles."""
    if request.rerank != "none" or request.answer:
        return "Verify"
    if request.coverage:
        return "Cover"
    return "Visualize" if request.method != "baseline" else "Fast"
