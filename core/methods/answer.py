"""Answer with evidence: a short answer to the question that cites the ids of the photos it used.

With a photo reader (setting answer_reader; the vision-language model), the answer is read from the retrieved
photos themselves, as VisRet's reader does; otherwise the text LLM reads each photo's note (caption or
catalog metadata). A failed reader falls back to the notes with a notice.

Either way the answer stays with its evidence: a stand-in reader is not asked about photos outside its world;
a model's answer is shown as an answer with evidence (`verified`) only when it passes core/methods/answer_check.py
(it cites a photo it was shown, none it was not, is no echo of its prompt, and names only organisms its cited
photos record: a claim naming another is left out, with a notice naming it and who wrote it); otherwise it is
refused, and the answer says that no answer can be written, and why. The offline rule's answer is never
verified."""
from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

from core.backends.metadata_captioner import describe
from core.methods import answer_check, evidence
from core.methods.llm_call import model_label, short_error
from core.methods.llm_tasks import evidence_answer
from core.methods.run import Run

log = logging.getLogger(__name__)

EVIDENCE_PHOTOS = 5


def cited(text: str, ids: Sequence[int]) -> list[int]:
    """The photo ids `text` cites ('[12]', '[12, 15]'), among `ids`, in order of first citation."""
    known = {int(i) for i in ids}
    return [i for i in answer_check.citations(text) if i in known]


def run_answer(run: Run, question: str, ids: Sequence[int], limit: int = EVIDENCE_PHOTOS,
               checked: Mapping[int, Sequence[str]] | None = None) -> dict[str, Any]:
    """The answer stage. `checked`: photo id -> the questions the photo checker answered "yes" for it in this
    search (evidence for the organisms they name)."""
    photos = run.photos(list(ids)[:limit])
    out, notes = _written(run, question, photos)
    if out.pop("by_model", True):
        return _checked(run, question, photos, out, notes, checked)
    return _rule_answer(run, question, photos, out, checked)


def _checked(run: Run, question: str, photos, out: dict[str, Any], notes: list[tuple[int, str]],
             checked: Mapping[int, Sequence[str]] | None) -> dict[str, Any]:
    """A model's answer through answer_check: verified when it passes, trimmed (with a notice) when some of its
    claims name organisms its photos do not record, else refused with the reason (one notice, the same words
    as the refusal)."""
    text = out.get("text", "")
    who = out.get("reader") or out.get("writer") or "the answer"
    verdict = answer_check.check(text, question, photos, who=who, notes=notes,
                                 catalog_names=[n for n, _ in run.corpus.taxon_names()], checked=checked)
    if verdict.refused:
        run.notice(f"answer: not shown, because {verdict.refused}")
        log.warning("answer to %r refused: %s; the text was %r", question, verdict.refused, text)
        kept_keys = {k: v for k, v in out.items() if k in ("source", "reader", "standin", "writer")}
        return {**evidence.refusal(verdict.refused, photos), **kept_keys, "refused_text": text}
    if verdict.left_out:
        why = (f"{who} named {', '.join(verdict.left_out)}, which none of the photos it cites is catalogued as or "
               f"was checked to show (they are catalogued as {evidence.catalogued_as(photos)})")
        run.notice(f"answer: left out what it said of {', '.join(verdict.left_out)}: {why}")
        log.warning("answer to %r trimmed: %s; the text was %r", question, why, text)
        return {**out, "text": verdict.text, "cited_ids": verdict.cited, "verified": True,
                "left_out": verdict.left_out, "original_text": text}
    return {**out, "text": verdict.text, "cited_ids": verdict.cited, "verified": True}


def _rule_answer(run: Run, question: str, photos, out: dict[str, Any],
                 checked: Mapping[int, Sequence[str]] | None) -> dict[str, Any]:
    """The offline rule's answer (no language model wrote it): never verified, and it too names only organisms
    its photos record."""
    text = out.get("text", "")
    kept, bad = evidence.kept_to_evidence(text, question, photos, [n for n, _ in run.corpus.taxon_names()], checked)
    shown = [int(p.id) for p in photos]
    if bad and cited(kept, shown):
        out = {**out, "text": kept, "cited_ids": cited(kept, shown), "left_out": bad, "original_text": text}
    elif bad:
        why = (f"the offline rule named {', '.join(bad)}, which none of the photos it cites is catalogued as")
        run.notice(f"answer: not shown, because {why}")
        kept_keys = {k: v for k, v in out.items() if k in ("source", "writer")}
        return {**evidence.refusal(why, photos), **kept_keys, "refused_text": text}
    run.notice("the answer is unverified: no language model wrote it (the offline rule did)")
    return {**out, "verified": False}


def _written(run: Run, question: str, photos) -> tuple[dict[str, Any], list[tuple[int, str]]]:
    """(the answer as written, with `by_model` False when the offline rule wrote it; the notes it was written
    from, empty when a photo reader read the photos themselves)."""
    reader = run.backends.reader
    if reader is not None and photos and reader.is_standin:
        outside = evidence.outside_world(photos, run.rules)
        if outside:
            run.notice(f"the photo reader {reader.model_id} is a stand-in made for the demo world, and "
                       f"{len(outside)} of these photos are not of it (catalogued as "
                       f"{evidence.catalogued_as(outside)}); the answer used the photo notes")
            log.info("stand-in reader %s not asked: %d photos outside its world", reader.model_id, len(outside))
            reader = None
    if reader is not None and photos:
        try:
            with run.timed("answer"):
                text = reader.read(question, [(p, lambda p=p: run.corpus.load_image(p)) for p in photos])
            if text.strip():
                return {"text": text.strip(), "cited_ids": cited(text, [p.id for p in photos]), "verified": False,
                        "by_model": True, "source": "photos", "reader": reader.model_id,
                        "photos": [int(p.id) for p in photos], **({"standin": True} if reader.is_standin else {})}, []
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
        out = evidence_answer(run.backends.llm, question, notes, run.notices, book=run.book)
    return {**out, "source": "captions", "photos": [int(p.id) for p in photos],
            "writer": model_label(run.backends.llm)}, notes


def checked_yes(rerank_stage: Mapping[str, Any] | None) -> dict[int, list[str]]:
    """Photo id -> the sub-questions the photo checker answered "yes" for it (the stage's verdicts)."""
    out: dict[int, list[str]] = {}
    for photo in (rerank_stage or {}).get("photos") or []:
        yes = [a["question"] for a in photo.get("answers") or [] if a.get("answer") == "yes" and a.get("checked", True)]
        if yes:
            out[int(photo["id"])] = yes
    return out
