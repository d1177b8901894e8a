"""Answer with evidence: a short answer to the question that cites the ids of the photos it used.

With a photo reader (setting answer_reader; the vision-language model), the answer is read from the retrieved
photos themselves, as VisRet's reader does; otherwise the text LLM reads each photo's note (caption or
catalog metadata). A failed reader falls back to the notes with a notice."""
from __future__ import annotations

import logging
import re
from typing import Any, Sequence

from core.backends.metadata_captioner import describe
from core.methods.llm_tasks import evidence_answer, short_error
from core.methods.run import Run

log = logging.getLogger(__name__)

EVIDENCE_PHOTOS = 5


def cited(text: str, ids: Sequence[int]) -> list[int]:
    """The photo ids `text` cites as [id], among `ids`, in order of first citation."""
    known = {int(i) for i in ids}
    found = [int(x) for x in re.findall(r"\[(\d+)\]", text or "") if int(x) in known]
    return list(dict.fromkeys(found))


def run_answer(run: Run, question: str, ids: Sequence[int], limit: int = EVIDENCE_PHOTOS) -> dict[str, Any]:
    photos = run.photos(list(ids)[:limit])
    reader = run.backends.reader
    if reader is not None and photos:
        try:
            with run.timed("answer"):
                text = reader.read(question, [(p, lambda p=p: run.corpus.load_image(p)) for p in photos])
            if text.strip():
                return {"text": text.strip(), "cited_ids": cited(text, [p.id for p in photos]), "verified": True,
                        "source": "photos", "reader": reader.model_id, "photos": [int(p.id) for p in photos],
                        **({"standin": True} if reader.is_standin else {})}
            run.notice(f"the photo reader {reader.model_id} returned nothing; the answer used the photo notes")
            log.warning("photo reader %s returned nothing for %r", reader.model_id, question)
        except Exception as exc:  # reported: notice + log line; the answer reads the notes instead
            log.exception("photo reader %s failed; answering from the photo notes", reader.model_id)
            run.notice(f"the photo reader failed ({short_error(exc)}); the answer used the photo notes")
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
    out = {**out, "source": "captions", "photos": [int(p.id) for p in photos]}
    if not out.get("verified", True):
        run.notice("the answer is unverified: no language model wrote it")
    return out
