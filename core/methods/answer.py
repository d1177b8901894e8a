"""Answer with evidence: a short answer to the question that cites the ids of the photos it used."""
from __future__ import annotations

import logging
from typing import Any, Sequence

from core.backends.metadata_captioner import describe
from core.methods.llm_tasks import evidence_answer, short_error
from core.methods.run import Run

log = logging.getLogger(__name__)

EVIDENCE_PHOTOS = 5


def run_answer(run: Run, question: str, ids: Sequence[int]) -> dict[str, Any]:
    photos = run.photos(list(ids)[:EVIDENCE_PHOTOS])
    notes: list[tuple[int, str]] = []
    captioner = run.backends.captioner
    with run.timed("answer"):
        for p in photos:
            try:
                note = captioner.caption(None, p, load=lambda p=p: run.corpus.load_image(p))
            except Exception as exc:  # reported: notice + log line; the answer uses metadata
                log.warning("captioner %s failed on photo %s", captioner.model_id, p.id, exc_info=exc)
                run.notice(f"the captioner failed ({short_error(exc)}); the answer used catalog metadata")
                note = describe(p)
            notes.append((int(p.id), note))
        out = evidence_answer(run.backends.llm, question, notes, run.notices)
    if not out.get("verified", True):
        run.notice("the answer is unverified: no language model wrote it")
    return out
