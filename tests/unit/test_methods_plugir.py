"""The PlugIR dialogue session on an in-memory corpus."""
from __future__ import annotations

import json

import numpy as np

from core.config import Settings
from core.contracts.records import Photo
from core.methods.plugir import DialogueSession
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeEmbedder, FakeLLM, FakeSearch
from tests.photos import world_book, world_books

DIM = 8


def make(tmp_path, llm=None, n=40):
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    parts = ["red wings", "blue wings", "perching", "flying", "on a flower"]
    photos = [Photo(path=f"{i}.png", id=i + 1, common_name="bird",
                    caption=f"{parts[i % 5]}, {parts[(i // 5) % 5]}") for i in range(n)]
    s = Settings(data_dir=str(tmp_path), k=5, plugir_candidates=30, plugir_candidate_share=0.75,
                 plugir_candidate_floor=10, plugir_clusters=4, plugir_questions=5)
    backends = FakeBackends(embedder=FakeEmbedder(DIM), llm=llm or FakeLLM(is_standin=True))
    return FakeSearch(photos, vecs, s, backends=backends)


def test_session_asks_grounded_questions_and_re_retrieves(tmp_path):
    session = DialogueSession(make(tmp_path), "a small bird", rules=world_books())
    q = session.next_question()
    assert q.text.endswith("?") and q.n_candidates == 30 and 1 <= len(q.candidates) <= 4
    assert len({c["cluster"] for c in q.candidates}) == len(q.candidates)
    assert all(set(c) >= {"id", "caption", "entropy", "cluster"} for c in q.candidates)
    assert q.text in q.kept and len(q.proposed) == 5
    hits = session.answer("red wings")
    assert len(hits) == 5 and session.caption == "a small bird, with red wings"  # the answer in the world's words
    q2 = session.next_question()
    assert q2.round == 1 and q2.n_candidates == 27
    turns, caption = list(session.turns), session.caption
    session.answer(marked=[hits[0].photo_id])
    assert session.relevant == [hits[0].photo_id]
    assert session.turns == turns and session.caption == caption  # a marked photo is feedback, not pasted text
    assert session.marked_ranks()[0]["id"] == hits[0].photo_id
    assert len(session.to_json()["history"]) == 3


def test_session_uses_llm_questioner_and_kl_choice(tmp_path):
    llm = FakeLLM({
        "clarifying questions": json.dumps({"questions": ["Is it flying?", "Are the wings red?",
                                                          "Is it on a flower?"]}),
        "try to answer": json.dumps({"answers": ["uncertain", "uncertain", "no"]}),
        "concise caption": "a small bird that flies"})
    session = DialogueSession(make(tmp_path, llm), "a small bird", rules=world_books())
    q = session.next_question()
    assert q.proposed == ["Is it flying?", "Are the wings red?", "Is it on a flower?"]
    assert q.kept == ["Is it flying?", "Are the wings red?"] and len(q.kl) == 2
    assert q.text == q.kept[int(np.argmin(q.kl))]
    assert "Retrieval candidates" in llm.calls[0][1].content
    session.answer("yes")
    assert session.caption == "a small bird that flies"


def test_filter_falls_back_to_new_rule_questions_not_the_redundant_ones(tmp_path):
    proposed = ["Is it a bird?", "Is it small?"]
    llm = FakeLLM({"clarifying questions": json.dumps({"questions": proposed}),
                   "try to answer": json.dumps({"answers": ["yes", "yes"]})})  # both already answered
    session = DialogueSession(make(tmp_path, llm), "a small bird", rules=world_books())
    session.turns.append(("Is the subject seen from the side?", "yes"))  # asked before: never asked again
    q = session.next_question()
    assert q.proposed == proposed and q.kept and not set(q.kept) & set(proposed)
    assert "Is the subject seen from the side?" not in q.kept and q.text in q.kept
    # said as a note (how the dialogue went), not as a failure
    assert any("already answer every proposed question" in n for n in session.notes) and q.fallback
    assert not any("already answer every proposed question" in n for n in session.notices)


def test_filter_drops_questions_that_were_already_asked():
    from core.methods.llm_tasks import filter_questions

    llm = FakeLLM({"try to answer": json.dumps({"answers": ["uncertain", "uncertain"]})})
    kept = filter_questions(llm, "a bird", [("Is it flying?", "no")], ["Is it flying?", "Is it red?"], [])
    assert kept == ["Is it red?"]


def test_captions_stay_aligned_with_ids_when_the_catalog_lacks_one(tmp_path):
    search = make(tmp_path)
    gone = 7
    del search._photos[gone]  # still in the index, no longer in the catalog
    session = DialogueSession(search, "a small bird", rules=world_books())
    caps = session._captions([3, gone, 9])
    assert caps == [search._photos[3].caption, "", search._photos[9].caption]
    assert any("not in the catalog" in n for n in session.notices)
    session.next_question()  # entropies are computed over aligned captions and vectors


def test_marking_an_unknown_photo_is_an_input_error_and_changes_nothing(tmp_path):
    import pytest

    from core.contracts.errors import InputError

    session = DialogueSession(make(tmp_path), "a small bird", rules=world_books())
    with pytest.raises(InputError, match="photo id 999 is not in the index"):
        session.answer(marked=[999])
    assert session.relevant == [] and session.turns == []


def test_simulated_user_answers_with_the_judges_reason(tmp_path):
    from core.evaluation.items import EvalItem
    from core.evaluation.simulated_user import plugir_ranks
    from tests.fakes import FakeJudge

    dialogues = []

    def reformulation(messages):
        dialogues.append(messages[-1].content)
        return "a small bird with red wings"

    search = make(tmp_path, FakeLLM({"concise caption": reformulation}, is_standin=False))
    search.backends.judge = FakeJudge(lambda r: 0.9, reason=lambda r, p: "Yes - the wings are red.")
    key_of = {f"k{p}": p for p in search._photos}
    item = EvalItem(qid="q1", query="a small bird", pool=list(key_of), relevant={"k5": 1})
    ranks = plugir_ranks(SearchEngine(search, search.backends), item, 2, key_of)
    assert len(ranks) == 3 and all(r >= 1 for r in ranks)
    assert dialogues and all("A: yes: the wings are red" in d for d in dialogues)


def test_user_reply_strips_judge_boilerplate():
    from core.evaluation.simulated_user import user_reply

    assert user_reply("yes", "The wings are red.") == "yes: The wings are red"
    assert user_reply("no", "approximation by image-text similarity: 'a' vs 'b' gives p(yes)=0.31; "
                            "not a visual judgement") == "no"
    assert user_reply("yes", "read from the picture: red wings 0.91 -> p(yes) 0.91") == "yes: red wings"
    assert user_reply("no", "") == "no" and user_reply("yes", "yes") == "yes"
    from core.methods.rules import reformulate

    turns = [("Are the wings red?", "yes: a red patch on the wing"), ("Is it flying?", "no: it sits on a twig")]
    assert reformulate("a bird", turns, world_book()) == "a bird, with red wings"  # the confirmed fact, not the reason


def test_the_generic_path_asks_nothing_the_named_group_cannot_have(tmp_path):
    """A real-looking collection outside any world: what is named comes from the catalog's taxonomy and group
    words, and a question about wings for a frog is dropped, whoever wrote it (the model or the rule)."""
    rng = np.random.default_rng(2)
    frog = dict(common_name="Green Frog", scientific_name="Lithobates clamitans", kingdom="Animalia",
                class_name="Amphibia", order="Anura")
    robin = dict(common_name="American Robin", scientific_name="Turdus migratorius", kingdom="Animalia",
                 class_name="Aves", order="Passeriformes")
    photos = [Photo(path=f"{i}.jpg", id=i + 1, caption=["blue wings, on a rock", "in water, on a rock"][i % 2],
                    **(robin if i % 2 == 0 else frog)) for i in range(30)]
    llm = FakeLLM({"clarifying questions": json.dumps({"questions": ["Are its wings blue?", "Is it in water?"]}),
                   "try to answer": json.dumps({"answers": ["uncertain", "uncertain"]}),
                   "concise caption": "a frog"})
    s = Settings(data_dir=str(tmp_path), k=5, plugir_candidate_floor=30, plugir_clusters=4, plugir_questions=5)
    search = FakeSearch(photos, rng.standard_normal((30, DIM)).astype(np.float32), s,
                        backends=FakeBackends(embedder=FakeEmbedder(DIM), llm=llm))
    for description in ("a frog on a rock", "a Green Frog"):
        q = DialogueSession(search, description).next_question()
        reasons = {d["question"]: d["reason"] for d in q.dropped}
        assert reasons["Are its wings blue?"] == "not for what is named (no wings in Amphibia)", description
        assert q.text == "Is it in water?"
    q = DialogueSession(search, "an animal on a rock").next_question()  # nothing named: nothing ruled out
    assert "Are its wings blue?" not in {d["question"] for d in q.dropped if d["reason"].startswith("not for")}
    search.backends.llm = FakeLLM(is_standin=True)  # the offline rule's questions, from the candidates' notes
    session = DialogueSession(search, "a frog on a rock")
    for _ in range(3):
        q = session.next_question()
        assert "wing" not in q.text, q.text
        session.answer("not sure")
