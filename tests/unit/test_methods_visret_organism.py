"""Comparisons of two organisms: each organism ranked on its own when the request names it (Visual-RAG-ME
scoring), the fused view otherwise; VisRet's budget failures reported per picture."""
from __future__ import annotations

import json

import numpy as np
import pytest

from core.config import Settings
from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.contracts.search_request import SearchRequest
from core.evaluation.engine_methods import item_request, organism_of
from core.evaluation.loaders import load_visual_rag_me
from core.methods.rules import instruction
from core.search.engine import SearchEngine
from tests.fakes import FakeBackends, FakeEmbedder, FakeGenerator, FakeSearch

DIM = 8
QUERY = "What is the difference between the red frog and the blue beetle?"
FROG, BEETLE = (10, 200, 30), (40, 50, 220)  # picture colours of the two organisms' visualizations


def corpus(tmp_path, n=30, **settings):
    """Photo i has the unit vector e_(i mod DIM) (ids 1..n). A frog picture embeds as e_2, a beetle one as e_3."""
    rng = np.random.default_rng(0)
    vecs = np.eye(DIM)[[i % DIM for i in range(n)]] + 0.05 * rng.standard_normal((n, DIM))
    photos = [Photo(path=f"p{i}.png", id=i + 1, caption=f"photo {i}") for i in range(n)]
    descriptions = instruction(QUERY).descriptions
    emb = FakeEmbedder(DIM, texts={descriptions[0]: np.eye(DIM)[2], descriptions[1]: np.eye(DIM)[3]},
                       images={FROG: np.eye(DIM)[2], BEETLE: np.eye(DIM)[3]})
    gen = FakeGenerator(by_prompt={"frog": FROG, "beetle": BEETLE})
    s = Settings(data_dir=str(tmp_path), k=n, **settings)
    return FakeSearch(photos, vecs.astype(np.float32), s, backends=FakeBackends(embedder=emb, generator=gen))


def own_ranking(search, axis: int) -> list[int]:
    return [i for i, _ in search.rank_vector(np.eye(DIM)[axis].astype(np.float32), 1000, None)]


@pytest.mark.parametrize("method", ["visret", "rewrite"])
def test_named_organism_is_ranked_on_its_own(tmp_path, method):
    search = corpus(tmp_path)
    pipe = SearchEngine(search, search.backends)
    for organism, axis in ((0, 2), (1, 3)):
        res = pipe.search(SearchRequest(QUERY, method=method, m=1, organism=organism))
        ids = [h.photo_id for h in res.hits]
        # the whole list (30 > 20: never truncated to the stage's display length) is the organism's own ranking
        assert ids == own_ranking(search, axis), (method, organism)
    fused = pipe.search(SearchRequest(QUERY, method=method, m=1))  # the UI's combined view is unchanged
    assert {h.photo_id for h in fused.hits[:2]} == {own_ranking(search, 2)[0], own_ranking(search, 3)[0]}


def test_visret_with_organism_only_visualizes_that_organism(tmp_path):
    search = corpus(tmp_path)
    res = SearchEngine(search, search.backends).search(SearchRequest(QUERY, method="visret", m=2, organism=1))
    v = res.stages["visret"]
    assert v["organism"] == 1 and len(v["per_organism"]) == 1
    assert {x["organism"] for x in v["visualizations"]} == {1} and all("beetle" in p for p in v["prompts"])


def test_organism_on_a_single_instruction_uses_it_with_a_notice(tmp_path):
    search = corpus(tmp_path)
    res = SearchEngine(search, search.backends).search(SearchRequest("a red frog", method="rewrite", organism=1))
    assert res.hits and any("not read as a comparison" in n for n in res.notices)
    with pytest.raises(InputError, match="organism=2"):
        SearchEngine(search, search.backends).search(SearchRequest(QUERY, method="visret", organism=2))


def test_eval_requests_name_the_visual_rag_me_organism(tmp_path):
    row = {"question": QUERY, "images": {"entity_1": {"a/1.jpg": 1, "a/2.jpg": 0}, "entity_2": {"b/1.jpg": 1}},
           "sn": ["Rana aurora", "Carabus sp."], "second_entity": "blue beetle", "y_count": [1, 1], "y_rate": [1, 1]}
    path = tmp_path / "me.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    items = load_visual_rag_me(path)
    assert [it.qid[-3:] for it in items] == ["-e1", "-e2"] and [organism_of(it) for it in items] == [0, 1]
    id_of = {"a/1.jpg": 1, "a/2.jpg": 2, "b/1.jpg": 3}
    first, second = (item_request(it, "visret", id_of) for it in items)
    assert (first.organism, first.filters.ids) == (0, (1, 2)) and (second.organism, second.filters.ids) == (1, (3,))
    from core.evaluation.items import EvalItem

    plain = EvalItem(qid="q7", query="a frog", pool=["a/1.jpg"], relevant={"a/1.jpg": 1})
    assert item_request(plain, "baseline", id_of).organism is None


def test_eval_item_scores_its_own_organism_end_to_end(tmp_path):
    """An '-e2' item run through the evaluation's request gets the second organism's list, not the fusion."""
    search = corpus(tmp_path)
    from core.evaluation.items import EvalItem

    keys = {f"k{i}": i for i in range(1, 31)}
    item = EvalItem(qid="vrme-1-e2", query=QUERY, kind="entity_2", pool=list(keys), relevant={"k4": 1})
    res = SearchEngine(search, search.backends).search(item_request(item, "visret", keys))
    assert [h.photo_id for h in res.hits] == own_ranking(search, 3)


def test_visret_budget_failures_are_reported_per_picture(tmp_path):
    search = corpus(tmp_path, max_generated=1)
    events = []
    res = SearchEngine(search, search.backends).search(SearchRequest("a red frog", method="visret", m=3),
                                                       on_event=events.append)
    v = res.stages["visret"]
    assert len(v["visualizations"]) == 1 and [f["error"] for f in v["failed"]] == ["budget", "budget"]
    failed_events = [e for e in events if e.kind == "visualization" and not e.ok]
    assert [e.seed for e in failed_events] == [1, 2] and all("budget" in e.error for e in failed_events)
    dropped = [n for n in res.notices if "failed and was dropped" in n]
    assert len(dropped) == 2 and "seed 1" in dropped[0] and "seed 2" in dropped[1]


def test_a_hung_generator_is_dropped_after_the_timeout_and_search_falls_back(tmp_path):
    import threading
    import time

    search = corpus(tmp_path, backend_timeout_s=0.2)
    release = threading.Event()
    slow = search.backends.generator

    class HungGenerator:
        is_standin, model_id = True, "hung-generator"

        def generate(self, prompt, *, seed, size=224):
            release.wait(5)  # a backend that never answers in time
            return slow.generate(prompt, seed=seed, size=size)

    search.backends.generator = HungGenerator()
    t0 = time.perf_counter()
    res = SearchEngine(search, search.backends).search(SearchRequest("a red frog", method="visret", m=2))
    release.set()
    assert time.perf_counter() - t0 < 3  # two pictures x 0.2 s, not two x 5 s
    v = res.stages["visret"]
    assert not v["visualizations"] and len(v["failed"]) == 2 and "did not answer within" in v["failed"][0]["error"]
    assert v["fallback"] and res.hits  # the rewrite baseline answered instead
