"""A dialogue that listens: 'no' is a negative constraint, 'not sure' changes nothing and is not asked again,
no question repeats in meaning, questions split the current candidates, marked photos feed back as photos."""
from __future__ import annotations

import json

import numpy as np

from core.config import Settings
from core.contracts.records import Photo
from core.methods.constraints import question_key
from core.methods.plugir import DialogueSession
from fieldguide.facts import question_facts, scene_facts
from fieldguide.world import sample_observations
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge, FakeLLM, FakeSearch
from tests.photos import world_books

DIM = 16


def world_search(tmp_path, llm=None, plans=("bird",), per_species=8):
    """World notes as captions (birds only by default), random vectors; the fake judge answers from each photo's
    ground truth (what a perfect vision-language judge would see)."""
    obs = [o for o in sample_observations(seed=3, per_species=per_species) if o.species.plan in plans]
    photos = [Photo(path=o.path, id=i + 1, common_name=o.species.common_name,
                    scientific_name=o.species.scientific_name, caption=o.caption,
                    extra={"facts": sorted(scene_facts(o.species, o.scene))}) for i, o in enumerate(obs)]
    vecs = np.random.default_rng(0).standard_normal((len(photos), DIM)).astype(np.float32)

    def truth(request) -> float:
        facts = {f for f in question_facts(request.question) if not f.startswith("part:")}
        return 0.95 if facts and facts <= set(request.photo.extra["facts"]) else 0.05

    s = Settings(data_dir=str(tmp_path), k=6, plugir_candidate_floor=20, plugir_clusters=5, plugir_questions=5,
                 plugir_check_depth=len(photos))
    backends = FakeBackends(embedder=FakeEmbedder(DIM), llm=llm or FakeLLM(is_standin=True),
                            judge=FakeJudge(truth))
    return FakeSearch(photos, vecs, s, backends=backends)


def _has(photo, question: str) -> bool:
    facts = {f for f in question_facts(question) if not f.startswith("part:")}
    return bool(facts) and facts <= set(photo.extra["facts"])


def top(session) -> list[int]:
    return [h.photo_id for h in session.hits()]


def test_three_noes_change_the_candidates_each_turn_and_no_question_repeats(tmp_path):
    search = world_search(tmp_path)
    session = DialogueSession(search, "a bird", rules=world_books())
    asked, keys = [], []
    before = top(session)
    for _ in range(3):
        q = session.next_question()
        assert q.text not in asked and q.key not in keys and q.facts and q.suggestions == ["yes", "no", "not sure"]
        asked.append(q.text)
        keys.append(q.key)
        session.answer("no")
        after = top(session)
        assert after != before, q.text  # the "no" moved candidates that have the attribute down
        # photos that contradict more answers come later; the first one contradicts none
        broken = [sum(_has(search._photos[i], c.question) != c.wanted for c in session.constraints)
                  for i, _ in session.retrieve(len(search._photos))]
        assert broken == sorted(broken) and broken[0] == 0, (q.text, broken)
        before = after
    assert [c.wanted for c in session.constraints] == [False, False, False]
    assert all(c.checked == len(search._photos) and c.contradicting > 0 for c in session.constraints)
    assert session.caption == "a bird"  # a "no" is a constraint on the candidates, not words in the description
    assert len({question_key(t, session.book) for t, _ in session.turns}) == 3


def test_not_sure_changes_nothing_and_is_never_asked_again(tmp_path):
    session = DialogueSession(world_search(tmp_path), "a bird", rules=world_books())
    q = session.next_question()
    ranked, caption = list(session.ranked), session.caption
    session.answer("not sure")
    assert session.ranked == ranked and session.caption == caption and session.constraints == []
    assert session.skipped == [q.text] and q.key in session.asked_keys
    for _ in range(4):
        assert session.next_question().key != q.key
        session.answer("not sure")


def test_paraphrases_and_questions_that_do_not_split_are_not_asked(tmp_path):
    proposals = ["Is this an underside view?", "Is it in bud?", "Is it seen from below?", "Is it perched?"]
    llm = FakeLLM({"clarifying questions": json.dumps({"questions": proposals}),
                   "try to answer": json.dumps({"answers": ["uncertain"] * 3}),
                   "concise caption": "a bird"}, is_standin=False)
    session = DialogueSession(world_search(tmp_path, llm), "a bird", rules=world_books())
    session.turns.append(("Is it seen from below?", "no"))
    session.asked_keys.append(question_key("Is it seen from below?", session.book))
    q = session.next_question()
    reasons = {d["question"]: d["reason"] for d in q.dropped}
    assert reasons["Is this an underside view?"].startswith("asked before")  # same meaning, other words
    assert "Is it seen from below?" not in q.kept  # the same wording: the questioner's parser drops it (3 left)
    assert not any("offline rule" in n for n in session.notices + session.notes)  # the model's questions were used
    assert reasons["Is it in bud?"] == "not for what is named (birds are never in bud)"  # from the world's data
    assert q.text == "Is it perched?"


def test_yes_keeps_the_candidates_that_have_it_on_top(tmp_path):
    search = world_search(tmp_path)
    session = DialogueSession(search, "a bird", rules=world_books())
    q = session.next_question()
    session.answer("yes")
    facts = {f for f in q.facts if not f.startswith("part:")}
    having = sum(facts <= set(p.extra["facts"]) for p in search._photos.values())
    shown = [search._photos[i] for i in top(session)[:min(having, 6)]]
    assert all(facts <= set(p.extra["facts"]) for p in shown)
    assert session.constraints[0].wanted is True and session.caption != "a bird"


def test_marked_photos_feed_back_as_photos_with_their_ranks(tmp_path):
    search = world_search(tmp_path)
    session = DialogueSession(search, "a bird", rules=world_books())
    session.next_question()
    first = top(session)
    chosen = [first[2], first[4]]
    session.answer(marked=chosen)
    assert session.turns == [] and session.caption == "a bird" and session.pending is not None
    marks = session.marked_ranks()
    assert [m["id"] for m in marks] == chosen
    assert all(m["rank"] is None or 1 <= m["rank"] <= 6 for m in marks)
    assert top(session) != first  # the query moved towards the marked photos
    assert session.history[-1]["marked"] == chosen


def test_a_failing_judge_is_reported_and_the_embedding_ranking_stays(tmp_path):
    search = world_search(tmp_path)
    search.backends.judge = FakeJudge(fail=True)
    session = DialogueSession(search, "a bird", rules=world_books())
    session.next_question()
    ranked = list(session.ranked)
    session.answer("no")
    assert session.ranked == ranked
    assert any("judge failed" in n for n in session.notices)
