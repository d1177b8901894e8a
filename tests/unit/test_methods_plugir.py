"""The PlugIR dialogue session on an in-memory corpus."""
from __future__ import annotations

import json

import numpy as np

from core.methods.plugir import DialogueSession
from core.records import Photo
from core.settings import Settings
from tests.fakes import FakeBackends, FakeEmbedder, FakeLLM, FakeSearch

DIM = 8


def make(tmp_path, llm=None, n=40):
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    parts = ["red wings", "blue wings", "perching", "flying", "on a flower"]
    photos = [Photo(path=f"{i}.png", id=i + 1, common_name="bird",
                    caption=f"{parts[i % 5]}, {parts[(i // 5) % 5]}") for i in range(n)]
    s = Settings(data_dir=str(tmp_path), k=5, plugir_candidates=30, plugir_clusters=4, plugir_questions=5)
    backends = FakeBackends(embedder=FakeEmbedder(DIM), llm=llm or FakeLLM(is_standin=True))
    return FakeSearch(photos, vecs, s, backends=backends)


def test_session_asks_grounded_questions_and_re_retrieves(tmp_path):
    session = DialogueSession(make(tmp_path), "a small bird")
    q = session.next_question()
    assert q.text.endswith("?") and q.n_candidates == 30 and 1 <= len(q.candidates) <= 4
    assert len({c["cluster"] for c in q.candidates}) == len(q.candidates)
    assert all(set(c) >= {"id", "caption", "entropy", "cluster"} for c in q.candidates)
    assert q.text in q.kept and len(q.proposed) == 5
    hits = session.answer("red wings")
    assert len(hits) == 5 and session.caption == "a small bird, red wings"
    q2 = session.next_question()
    assert q2.round == 1 and q2.n_candidates == 27
    session.answer(marked=[hits[0].photo_id])
    assert session.relevant == [hits[0].photo_id] and session.turns[-1][1].startswith("like these photos")
    assert len(session.to_json()["history"]) == 3


def test_session_uses_llm_questioner_and_kl_choice(tmp_path):
    llm = FakeLLM({
        "clarifying questions": json.dumps({"questions": ["Is it flying?", "Are the wings red?",
                                                          "Is it on a flower?"]}),
        "try to answer": json.dumps({"answers": ["uncertain", "uncertain", "no"]}),
        "concise caption": "a small bird that flies"})
    session = DialogueSession(make(tmp_path, llm), "a small bird")
    q = session.next_question()
    assert q.proposed == ["Is it flying?", "Are the wings red?", "Is it on a flower?"]
    assert q.kept == ["Is it flying?", "Are the wings red?"] and len(q.kl) == 2
    assert q.text == q.kept[int(np.argmin(q.kl))]
    assert "Retrieval candidates" in llm.calls[0][1].content
    session.answer("yes")
    assert session.caption == "a small bird that flies"
