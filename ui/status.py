"""The search's status in words: one short line a naturalist reads ("Search 3 · 20 photos · 100 checked with 3
yes/no questions · done in 3.5 s"), and, behind a "details" toggle, how long each step that ran took. While a
search runs, the line says what is on screen and what EcoLens is doing or waiting for, with the seconds it
has waited ("waiting for the photo checker at api.example.org, 12 s"). Pure: fed the engine's events, no
gradio; the words are ui.strings'."""
from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlparse

from core.contracts.events import (
    STEP_BACKEND,  # which backend each step waits on; the others run here
    FirstResults,
    PhotoJudged,
    StageEvent,
    Waiting,
)
from ui import strings as S


def seconds(s: float) -> str:
    """'under 0.01 s', '0.15 s', '3.5 s', '12 s': never a bare count of milliseconds."""
    s = max(0.0, float(s))
    if s < 0.01:
        return "under 0.01 s"
    if s < 1:
        return f"{s:.2f} s"
    return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"


def backend_host(settings: Any, kind: str) -> str:
    """The host a remote backend of `kind` is reached at ('' for one that runs here): the OpenAI-compatible
    server's, for the backends set to openai."""
    name = str(getattr(settings, kind) or "")
    if name != "openai" and not name.startswith("openai:"):
        return ""
    url = str(settings.openai_base_url or "")
    return (urlparse(url).hostname or url) if url else "api.openai.com"


def counted(n: int, one: str, many: str) -> str:
    return S.counted(n, one, many)


class SearchStatus:
    """What one search has done so far, as the page says it. Feed it every event (`on`); read `line()` while
    it runs, `finished(result)` at the end, and `details()` for the toggle."""

    def __init__(self, number: int | None = None, settings: Any = None, clock=time.perf_counter):
        self.number, self.settings, self.clock = number, settings, clock
        self.t0 = clock()
        self.shown = 0  # photos on screen so far
        self.first_at: float | None = None  # seconds to the first photos on screen
        self.steps: list[tuple[str, float]] = []  # (step, seconds) of every step that finished, in order
        self.running: list[tuple[str, float]] = []  # steps started and not finished, innermost last
        self.judged: tuple[int, int] | None = None
        self.waited: tuple[str, float] | None = None  # the last Waiting event: (step, seconds)

    # ---- events -------------------------------------------------------------------------------------
    def on(self, event: Any) -> None:
        if isinstance(event, FirstResults):
            self.shown = len(event.hits)
            if self.first_at is None:
                self.first_at = self.clock() - self.t0
        elif isinstance(event, StageEvent):
            if event.status == "started":
                self.running.append((event.stage, self.clock()))
            else:
                self.running = [r for r in self.running if r[0] != event.stage]
                if event.stage in S.STEP_NAMES:
                    self.steps.append((event.stage, float(event.ms or 0.0) / 1000))
            self.waited = None
        elif isinstance(event, PhotoJudged):
            self.judged = (event.done, event.total)
        elif isinstance(event, Waiting):
            self.waited = (event.stage, event.seconds)

    # ---- the short line -----------------------------------------------------------------------------
    def _head(self) -> list[str]:
        return [S.SEARCH_NO.format(n=self.number)] if self.number else []

    def doing(self) -> str:
        """What EcoLens is doing now, with how long it has been at it: a wait for a remote backend names the
        backend and its host."""
        step, since = self.running[-1] if self.running else ("", self.t0)
        waited = self.clock() - since
        if self.waited and self.waited[0] == step:
            waited = max(waited, self.waited[1])
        host = backend_host(self.settings, STEP_BACKEND.get(step, "")) if step in STEP_BACKEND else ""
        if host:
            what = S.WAITING_FOR.format(who=S.BACKEND_WHO[STEP_BACKEND[step]], host=host)
        else:
            what = S.STEP_DOING.get(step, S.MORE_COMING)
        if step == "rerank" and self.judged:
            what += " " + S.JUDGED.format(done=self.judged[0], total=self.judged[1])
        return f"{what}, {seconds(waited)}" if waited >= 1 else what

    def line(self) -> str:
        """The line while the search runs: the photos on screen so far and what is being done."""
        shown = [S.SO_FAR.format(photos=counted(self.shown, "photo", "photos"))] if self.shown else []
        return " · ".join([*self._head(), *shown, self.doing()])

    def finished(self, result: Any) -> str:
        """The line once the search is done: what was found, how, and in how long."""
        stages = result.stages or {}
        parts = [counted(len(result.hits), "photo", "photos") if result.hits else S.NO_PHOTOS]
        vis = stages.get("visret") or {}
        drawn = len(vis.get("visualizations") or [])
        if drawn and not vis.get("fallback"):
            parts[0] = S.FOUND_WITH.format(photos=parts[0], drawings=counted(drawn, "drawing", "drawings"))
        rerank = stages.get("rerank") or {}
        if rerank.get("judged"):
            questions = len(rerank.get("subquestions") or [])
            parts.append(S.CHECKED_WITH.format(n=rerank["judged"], questions=counted(
                questions, "yes/no question", "yes/no questions")) if questions else
                S.CHECKED.format(n=rerank["judged"]))
        cover = stages.get("coverage") or {}
        if cover.get("subqueries"):
            n_parts = len(cover["subqueries"])
            covering = sum(1 for h in result.hits if h.covers is not None)
            covered = n_parts - len(cover.get("uncovered") or [])
            if covering:
                which = (S.COVER_BOTH if n_parts == 2 else S.COVER_ALL.format(parts=n_parts)) \
                    if covered == n_parts else S.COVER_SOME.format(covered=covered, parts=n_parts)
                first, show = S.COVER_ONE if covering == 1 else S.COVER_MANY
                parts.append(S.COVER_DONE.format(first=first.format(n=covering), show=show, which=which))
        parts.append(S.DONE_IN.format(time=seconds(result.timings_ms.get("total", 0.0) / 1000)))
        return " · ".join([*self._head(), *parts])

    def ended(self, why: str) -> str:
        """The line of a search that ended early (stopped, failed): what is on screen stays."""
        shown = [S.SHOWN.format(photos=counted(self.shown, "photo", "photos"))] if self.shown else []
        return " · ".join([*self._head(), *shown, why])

    # ---- the details ------------------------------------------------------------------------------
    def details(self, total_s: float | None = None) -> str:
        """Markdown: when the first photos came, how long each step that ran took, and the whole search."""
        rows = []
        if self.first_at is not None:
            rows.append(S.FIRST_SHOWN.format(time=seconds(self.first_at)))
        rows += [S.STEP_TOOK.format(step=S.STEP_NAMES[name], time=seconds(s)) for name, s in self.steps]
        if total_s is not None:
            rows.append(S.TOTAL_TOOK.format(time=seconds(total_s)))
        return "\n".join(f"- {r}" for r in rows)
