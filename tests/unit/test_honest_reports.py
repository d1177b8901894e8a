"""Honest reports (issue 20 item 7): the report opens with the models and what each stand-in or tiny model's
numbers can and cannot mean; an answer judge below the capability floor is "not a valid judge" and no accuracy
of it is printed; a rerank that moved no photo (every judge score tied) is scored exactly as its first stage,
and the report says "order unchanged" with no delta."""
from __future__ import annotations

import json
from types import SimpleNamespace as NS

import numpy as np

from core.backends.model_facts import llm_facts, model_facts
from core.config import Settings
from core.contracts.records import Photo
from core.evaluation.answers import answer_evaluator, judge_validity
from core.evaluation.caveats import model_caveats
from core.evaluation.engine_methods import engine_methods
from core.evaluation.items import EvalItem
from core.evaluation.metrics import score_rankings
from core.evaluation.report import write_report
from core.evaluation.runner import evaluate
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge, FakeLLM, FakeSearch

DIM = 8
N = 8
MODELS = {"embedder": "fieldguide-encoder@v3 (stand-in)", "judge": "fieldguide-judge@v2 (stand-in)",
          "llm": "rule-llm@v1 (stand-in)"}


def _engine(tmp_path, judge):
    rng = np.random.default_rng(1)
    vecs = (np.eye(DIM)[[i % DIM for i in range(N)]] + 0.05 * rng.standard_normal((N, DIM))).astype(np.float32)
    photos = [Photo(path=f"p{i}.png", id=i + 1, caption=f"a frog {i}") for i in range(N)]
    search = FakeSearch(photos, vecs, Settings(data_dir=str(tmp_path), k=N, rerank_k=N),
                        backends=FakeBackends(embedder=FakeEmbedder(DIM), judge=judge))
    return SearchEngine(search, search.backends)


def _items(engine):
    """Queries whose relevant photo the plain ranking puts low: a scorer that averaged the judge's tie group
    would credit an unchanged order with a gain."""
    items = []
    for q in range(3):
        order = [h.photo_id for h in engine.search(NS_request(f"frog {q}")).hits]
        relevant = {f"k{order[-1]}": 1, f"k{order[-2]}": 1}
        items.append(EvalItem(f"q{q}", f"frog {q}", pool=[f"k{i}" for i in range(1, N + 1)], relevant=relevant))
    return items


def NS_request(query):
    from core.contracts.search_request import SearchRequest

    return SearchRequest(query, k=N)


def test_a_rerank_that_ties_every_photo_scores_as_its_first_stage_and_shows_no_delta(tmp_path):
    engine = _engine(tmp_path, FakeJudge(lambda r: 0.5))  # every photo the same score: the order cannot move
    items = _items(engine)
    key_of = {i: f"k{i}" for i in range(1, N + 1)}
    id_of = {k: i for i, k in key_of.items()}
    methods = engine_methods(engine, ["baseline", "rerank-full"], id_of, key_of)
    out = methods["rerank-full"](items[0])
    assert out.order_unchanged and out.ranking == methods["baseline"](items[0]).ranking
    # what the old scoring did: the tied judge scores, averaged, credit the unchanged order with a gain
    tied = {k: 50.0 for k in out.ranking}
    old = score_rankings({"q0": out.ranking}, {"q0": items[0].relevant}, ["ndcg@10"], scores={"q0": tied})
    base = score_rankings({"q0": out.ranking}, {"q0": items[0].relevant}, ["ndcg@10"])
    assert old["q0"]["ndcg@10"] > base["q0"]["ndcg@10"] + 0.05
    result = evaluate(items, methods, "ndcg@10,ap@5")
    assert result.per_query["rerank-full"] == result.per_query["baseline"]
    assert result.unchanged == {"baseline": [], "rerank-full": ["q0", "q1", "q2"]}
    paths = write_report(tmp_path / "out", result, benchmark="inquire-rerank", baseline="baseline", models=MODELS)
    md = paths["report"].read_text(encoding="utf-8")
    assert "rerank-full (order unchanged: no delta)" in md
    assert "order unchanged on 3 of 3 queries" in md
    rows = [x for x in md.splitlines() if x.startswith("| rerank-full")]
    assert rows and not any("▲" in x or "▼" in x for x in rows)
    sig = json.loads(paths["metrics"].read_text(encoding="utf-8"))["summary"]["significance"]["rerank-full"]
    assert all(v["delta"] is None and v["order_unchanged"] for v in sig.values())


def test_a_rerank_that_moves_photos_is_scored_and_compared(tmp_path):
    engine = _engine(tmp_path, FakeJudge(lambda r: 0.1 + 0.1 * (r.photo.id % 8)))  # distinct scores: it reorders
    items = _items(engine)
    key_of = {i: f"k{i}" for i in range(1, N + 1)}
    methods = engine_methods(engine, ["baseline", "rerank-full"], {k: i for i, k in key_of.items()}, key_of)
    result = evaluate(items, methods, "ndcg@10")
    assert result.unchanged["rerank-full"] == []
    md = write_report(tmp_path / "out", result, baseline="baseline", models=MODELS)["report"].read_text("utf-8")
    assert "order unchanged on" not in md and "(order unchanged" not in md


def test_models_and_caveats_come_first(tmp_path):
    engine = _engine(tmp_path, FakeJudge(lambda r: 0.5))
    items = _items(engine)
    key_of = {i: f"k{i}" for i in range(1, N + 1)}
    result = evaluate(items, engine_methods(engine, ["baseline"], {k: i for i, k in key_of.items()}, key_of),
                      "ndcg@10")
    md = write_report(tmp_path / "out", result, benchmark="visual-rag", models=MODELS)["report"].read_text("utf-8")
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads[0] == "## Models, and what their numbers can mean"
    first = md.index("## Models")
    assert first < md.index("## Overall") and "## Models" not in md[first + 5:]
    for role in ("embedder", "judge", "llm"):
        line = next(x for x in md.splitlines() if x.startswith(f"- {role}: `") and "stand-in" in x and "can mean" in x)
        assert "cannot mean" in line
    assert md.index("cannot mean") < md.index("## Overall")


def test_a_tiny_llm_gets_its_caveat():
    tiny = FakeLLM()
    tiny.is_standin, tiny.model_id = False, "model.gguf"
    tiny.facts, tiny.display_name = llm_facts("model.gguf", 134_515_008), "model.gguf (134.5M parameters)"
    backends = NS(llm=tiny, describe=lambda: {"llm": {"model_id": "model.gguf", "standin": False}})
    lines = [c.line() for c in model_caveats(backends, {"llm": "model.gguf"})]
    assert len(lines) == 1 and "very small model" in lines[0] and "134.5M" in lines[0] and "cannot mean" in lines[0]


def test_the_capability_floor_is_a_per_model_fact():
    assert model_facts("llm", "HuggingFaceTB/SmolLM2-135M-Instruct").answer_judge is False
    assert model_facts("llm", "SmolLM2-1.7B-Instruct").answer_judge is False
    assert model_facts("llm", "gpt-4o").answer_judge is True
    assert model_facts("llm", "some-unknown-model").answer_judge is None
    assert llm_facts("model.gguf", 3_000_000_000).answer_judge is False  # a renamed file: the size decides
    assert llm_facts("model.gguf", 8_000_000_000).answer_judge is True


class TinyJudgeLLM(FakeLLM):
    """A language model that gives every answer full marks with the prompt's own words (as SmolLM2 did)."""

    def __init__(self):
        super().__init__(lambda system, user: '{"score": 1.0, "reason": "one short sentence"}')
        self.is_standin, self.model_id = False, "SmolLM2-135M-Instruct"
        self.facts = model_facts("llm", self.model_id)


def test_a_tiny_answer_judge_is_not_valid_and_its_accuracy_is_not_printed(tmp_path):
    valid, why = judge_validity(TinyJudgeLLM())
    assert not valid and "capability floor" in why
    engine = NS(backends=NS(llm=TinyJudgeLLM(), reader=None),
                answer=lambda q, ids, limit: {"text": f"The crest is white [{ids[0]}].", "cited_ids": ids[:1]})
    items = [EvalItem(f"q{i}", f"What colour is the crest {i}?", pool=["a", "b"], relevant={"a": 1},
                      extra={"answer": ["pale yellow", "cream"]}) for i in range(4)]
    result = evaluate(items, {"baseline": lambda it: ["a", "b"]}, "hit@1")
    result.photo_ids["baseline"] = {it.qid: [1, 2] for it in items}
    block = answer_evaluator(engine)(result)
    assert block["judge_valid"] is False and block["methods"]["baseline"]["accuracy"] is None
    assert all(r["score"] is None and r["judged_by"] == "not a valid judge" for r in block["per_question"])
    md = write_report(tmp_path, result, models={"llm": "SmolLM2-135M-Instruct"}, answers=block)["report"]
    text = md.read_text(encoding="utf-8")
    assert "not a valid judge" in text and "100.0" not in text
    assert text.index("not a valid judge") < text.index("## Overall")
    table = text[text.index("## Answer accuracy"):]
    assert "| baseline | not a valid judge | 4 | 0 |" in table


def test_each_stand_in_gets_its_own_caveat():
    from core.evaluation.caveats import standin_caveats

    lines = {c.role: c.line() for c in standin_caveats({"embedder": "hash-standin@v1/64 (stand-in)",
                                                        "judge": "clip-judge@v1/hash (stand-in)",
                                                        "llm": "gpt-4.1-mini"})}
    assert set(lines) == {"embedder", "judge"}  # a real model gets no stand-in caveat
    assert "close to chance" in lines["embedder"] and "statement and its negation" in lines["judge"]
