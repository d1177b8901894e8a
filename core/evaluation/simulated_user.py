"""PlugIR evaluation with a simulated user: the vision-language judge looks at the target photo and answers
each clarifying question; we record the target's 1-based rank after every round."""
from __future__ import annotations

from typing import Mapping

from core.backends.base import JudgeRequest
from core.errors import InputError
from core.evaluation.items import EvalItem
from core.methods.plugir import DialogueSession
from core.records import Filters


def target_rank(session: DialogueSession, target_id: int, depth: int) -> int:
    """The target's rank in the session's current retrieval, or depth + 1 when it is not in the top `depth`."""
    ranked = session._retrieve(depth)
    for position, (photo_id, _) in enumerate(ranked, start=1):
        if photo_id == target_id:
            return position
    return depth + 1


def plugir_ranks(search, item: EvalItem, rounds: int, id_of: Mapping[str, int]) -> list[int]:
    """Ranks of the item's first relevant photo at rounds 0..rounds of a simulated dialogue."""
    targets = [k for k, rel in item.relevant.items() if rel > 0 and k in id_of]
    if not targets:
        raise InputError(f"query {item.qid} has no relevant photo in the catalog", "ingest the benchmark's images")
    target_id = id_of[targets[0]]
    ids = tuple(id_of[k] for k in item.pool if k in id_of)
    session = DialogueSession(search, item.query, filters=Filters(ids=ids) if ids else None)
    depth = len(ids) if ids else max(1000, session.settings.plugir_candidates)
    target_photo = search.photos([target_id])[0]
    image = search.load_image(target_photo)
    judge = session.backends.judge
    ranks = [target_rank(session, target_id, depth)]
    for _ in range(rounds):
        question = session.next_question()
        reply = judge.ask(JudgeRequest(image=image, question=question.text, query=item.query))
        session.answer(reply.answer, question=question.text)
        ranks.append(target_rank(session, target_id, depth))
    return ranks
