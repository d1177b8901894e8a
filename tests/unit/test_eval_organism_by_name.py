"""Visual-RAG-ME items rank the organism the item names (sn[i] of entity_i), matched by name, also when the
question names the second organism first (as 32 of the 50 released rows do)."""
from __future__ import annotations

import json

import numpy as np

from core.config import Settings
from core.contracts.records import Photo
from core.evaluation.engine_methods import item_request
from core.evaluation.loaders import load_visual_rag_me
from core.methods.llm_tasks import Instruction
from core.methods.organisms import aliases, match_organism, mentions, rule_description
from core.methods.rules import instruction
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeEmbedder, FakeGenerator, FakeLLM, FakeSearch

DIM = 8
# the released layout: sn[0] is entity_1 (the carpenterworm moth), yet the question names the goat moth first
QUESTION = ("Which one has more white-ish color on its back, the larva of the goat moth (scientific name: Cossus "
            "cossus) or that of the carpenterworm moth (scientific name: Prionoxystus robiniae)?")
ROW = {"images": {"entity_1": {f"00855_Prionoxystus_robiniae/{i}.jpg": int(i < 2) for i in range(6)},
                  "entity_2": {f"00854_Cossus_cossus/{i}.jpg": int(i < 3) for i in range(6)}},
       "answer": ["The carpenterworm larva is whiter."], "question": QUESTION, "suggested": [], "subset": 5,
       "sn": ["Prionoxystus robiniae", "Cossus cossus"],
       "second_entity": "00854_Animalia_Arthropoda_Insecta_Lepidoptera_Cossidae_Cossus_cossus",
       "y_count": [2, 3], "y_rate": [0.33, 0.5]}
GOAT, CARPENTER = (200, 10, 10), (10, 200, 10)  # picture colours of the two organisms' drawings


def test_names_are_read_from_the_question():
    assert mentions(QUESTION) == [("goat moth", "Cossus cossus"), ("carpenterworm moth", "Prionoxystus robiniae")]
    assert aliases("Cossus cossus", QUESTION) == ["Cossus cossus", "goat moth"]
    instr = instruction(QUESTION)  # the offline rule reads the comparison in the question's order
    assert instr.kind == "comparison" and "goat moth" in instr.descriptions[0]
    assert match_organism("Prionoxystus robiniae", instr, QUESTION) == 1
    assert match_organism("Cossus cossus", instr, QUESTION) == 0
    # an LLM's descriptions that use only common names are matched through the question's bracketed names
    llm = Instruction("comparison", ["a carpenterworm moth caterpillar seen from above, back visible",
                                     "a goat moth caterpillar seen from above, back visible"], [], "llm")
    assert match_organism("Cossus cossus", llm, QUESTION) == 1
    assert match_organism("Prionoxystus robiniae", llm, QUESTION) == 0
    assert match_organism("Vanessa atalanta", llm, QUESTION) is None


def test_rule_description_for_a_named_organism_leaves_out_the_value():
    text = rule_description(QUESTION, "Prionoxystus robiniae")
    assert text.startswith("a carpenterworm moth (Prionoxystus robiniae)") and "back" in text
    assert "white" not in text and "goat" not in text


def corpus(tmp_path, llm=None):
    """Photo i has the unit vector e_(i mod DIM). The goat moth's drawing embeds as e_2, the carpenterworm's as
    e_3; the catalog keys are the benchmark's paths."""
    keys = list(ROW["images"]["entity_1"]) + list(ROW["images"]["entity_2"])
    rng = np.random.default_rng(0)
    vecs = np.eye(DIM)[[i % DIM for i in range(len(keys))]] + 0.05 * rng.standard_normal((len(keys), DIM))
    photos = [Photo(path=k, id=i + 1) for i, k in enumerate(keys)]
    emb = FakeEmbedder(DIM, images={GOAT: np.eye(DIM)[2], CARPENTER: np.eye(DIM)[3]})
    gen = FakeGenerator(by_prompt={"goat": GOAT, "carpenterworm": CARPENTER})
    s = Settings(data_dir=str(tmp_path), k=len(keys))
    backends = FakeBackends(embedder=emb, generator=gen, llm=llm or FakeLLM(is_standin=True))
    return FakeSearch(photos, vecs.astype(np.float32), s, backends=backends), {k: i + 1 for i, k in enumerate(keys)}


def test_entity_1_named_second_draws_and_ranks_its_own_organism(tmp_path):
    path = tmp_path / "visual-rag-me_final_v1.jsonl"
    path.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    e1, e2 = load_visual_rag_me(path)
    search, id_of = corpus(tmp_path)
    engine = SearchEngine(search, search.backends)
    req = item_request(e1, "visret", id_of)
    assert req.organism_name == "Prionoxystus robiniae"
    res = engine.search(req)
    v = res.stages["visret"]
    assert v["organism_match"] == "by name" and all("carpenterworm" in p for p in v["prompts"])
    assert {x["organism"] for x in v["visualizations"]} == {1}  # the second description: named second
    second = engine.search(item_request(e2, "visret", id_of)).stages["visret"]
    assert second["organism_match"] == "by name" and all("goat moth" in p for p in second["prompts"])
    rewrite = engine.search(item_request(e1, "rewrite", id_of)).stages["rewrite"]
    assert rewrite["organism_name"] == "Prionoxystus robiniae" and "carpenterworm" in rewrite["descriptions"][1]


def test_a_question_not_read_as_a_comparison_gets_a_description_of_the_named_organism(tmp_path):
    row = dict(ROW, question="Consider the back of the goat moth larva (scientific name: Cossus cossus) and the "
                             "carpenterworm moth larva (scientific name: Prionoxystus robiniae): which one is whiter?")
    path = tmp_path / "me.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    e1, _ = load_visual_rag_me(path)
    search, id_of = corpus(tmp_path)
    res = SearchEngine(search, search.backends).search(item_request(e1, "visret", id_of))
    v = res.stages["visret"]
    assert v["organism_match"] == "written for it" and v["instructions"][-1].startswith("a carpenterworm moth")
    assert all("carpenterworm" in p and "goat" not in p for p in v["prompts"])
    assert any("did not name Prionoxystus robiniae" in n for n in res.notices)


def test_the_llm_writes_the_named_organisms_description_when_asked(tmp_path):
    llm = FakeLLM({"This search is for: Prionoxystus robiniae":
                   json.dumps({"description": "a carpenterworm moth caterpillar, its back in view"}),
                   "Request:": json.dumps({"kind": "scene", "descriptions": ["two moth larvae"]})})
    row = dict(ROW, question="Consider the goat moth (scientific name: Cossus cossus) and the carpenterworm moth "
                             "(scientific name: Prionoxystus robiniae): whose larva has the whiter back?")
    path = tmp_path / "me.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    e1, _ = load_visual_rag_me(path)
    search, id_of = corpus(tmp_path, llm)
    v = SearchEngine(search, search.backends).search(item_request(e1, "visret", id_of)).stages["visret"]
    assert v["organism_match"] == "written for it"
    assert v["instructions"][-1] == "a carpenterworm moth caterpillar, its back in view"
