"""PlugIR evaluation with a simulated user: the vision-language judge looks at the target photo and answers
each clarifying question (its yes/no and its one-line reason); we record the target's 1-based rank in the
whole pool after every round (never capped).

The same judge checks the candidates against each answer inside the dialogue (constraints.py), so the
simulated user never contradicts that check on the target: a real user can disagree with the judge, which
these numbers do not show (docs/methods.md, PlugIR)."""
from __future__ import annotations

import re
from typing import Mapping

from core.backends.base import JudgeRequest
from core.contracts.errors import InputError
from core.contracts.records import Filters
from core.evaluation.items import EvalItem
from core.methods.confidence import CANNOT_TELL, p_yes, verdict
from core.methods.plugir import DialogueSession

# what offline judges say about their own method, not about the photo: never passed on as the user's words
_BOILERPLATE = (
    re.compile(r"approximation by image-text similarity\b.*$", re.IGNORECASE),
    re.compile(r"no attribute words recognised\b.*$", re.IGNORECASE),
    re.compile(r"\bnot a visual judgement\b", re.IGNORECASE),
    re.compile(r"^\s*(?:read from the picture|reason|because|since)\s*[:,-]?\s*", re.IGNORECASE),
    re.compile(r"\s*(?:->\s*)?\bp\s*(?:\(\s*yes\s*\)\s*[=:]?|[=:])\s*\d*\.?\d+", re.IGNORECASE),
    re.compile(r"\s+[01]\.\d+(?=\s*(?:;|->|$))"),  # a check's confidence ("red breast 0.88; ...")
)


def user_reply(answer: str, reason: str) -> str:
    """What the simulated user says: the judge's yes/no and, when it names something about the photo, its
    reason ("yes: the wings are red"). Deterministic; method boilerplate and numbers are stripped."""
    word = " ".join((answer or "").split()).lower() or "not sure"
    text = " ".join((reason or "").split())
    for pattern in _BOILERPLATE:
        text = pattern.sub("", text)
    text = re.sub(r"\s*;\s*(?=;|$)", "", text).strip(" \t;:,-.")
    text = re.sub(r"^(?:yes|no)\b[\s:,.-]*", "", text, flags=re.IGNORECASE)  # the answer word said twice
    if not re.search(r"[A-Za-z]{2}", text):
        return word
    return f"{word}: {text}"


def target_rank(session: DialogueSession, target_id: int, depth: int | None = None) -> int:
    """The target's 1-based rank in the session's current retrieval over `depth` photos (default: the whole
    pool, so a rank is never capped); depth + 1 only when a smaller depth was asked for and the target is
    beyond it."""
    depth = depth or session.pool_size()
    ranked = session.retrieve(depth)
    for position, (photo_id, _) in enumerate(ranked, start=1):
        if photo_id == target_id:
            return position
    return depth + 1


def plugir_ranks(engine, item: EvalItem, rounds: int, id_of: Mapping[str, int]) -> list[int]:
    """Ranks of the item's first relevant photo at rounds 0..rounds of a simulated dialogue run by `engine`
    (core.search.engine.SearchEngine: the same dialogue sessions as the web app)."""
    targets = [k for k, rel in item.relevant.items() if rel > 0 and k in id_of]
    if not targets:
        raise InputError(f"query {item.qid} has no relevant photo in the catalog", "ingest the benchmark's images")
    target_id = id_of[targets[0]]
    ids = tuple(id_of[k] for k in item.pool if k in id_of)
    session: DialogueSession = engine.dialogue(item.query, filters=Filters(ids=ids) if ids else None)
    depth = session.pool_size()
    target_photo = engine.corpus.photos([target_id])[0]
    image = engine.corpus.load_image(target_photo)
    judge = session.backends.judge
    ranks = [target_rank(session, target_id, depth)]
    for _ in range(rounds):
        question = session.next_question()
        reply = judge.ask(JudgeRequest(image=image, question=question.text, query=item.query))
        # a question the judge cannot check on the target, or answers inside the undecided band ("can't tell" on
        # the page): the simulated user is not sure
        unsure = getattr(reply, "abstained", False) or verdict(
            p_yes(reply.top_logprobs), session.settings.undecided_band) == CANNOT_TELL
        said = "not sure" if unsure else user_reply(reply.answer, reply.reason)
        session.answer(said, question=question.text)
        ranks.append(target_rank(session, target_id, depth))
    return ranks
