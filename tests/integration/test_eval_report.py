"""End to end without the engine: load a small Visual-RAG file, run Fake methods, write the report."""
import json

import pytest

from core.contracts.errors import BackendError, InputError
from core.evaluation.benchmarks import load_benchmark, prepare_items
from core.evaluation.report import write_report
from core.evaluation.runner import MethodOutput, evaluate, evaluate_dialogue, expand_metrics


def _write_visual_rag(tmp_path, n=12):
    rows = []
    for q in range(n):
        images = {f"sp{q}/{i}.jpg": int(i in (q % 5, 7)) for i in range(10)}
        rows.append({"question": f"What colour is feature {q}?", "answer": ["x"], "images": images,
                     "sn": f"Species {q}", "suggested": False, "subset": "birds" if q % 2 else "plants",
                     "y_rate": 0.2, "y_count": 2})
    p = tmp_path / "visual_rag.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    root = tmp_path / "images"
    for r in rows:
        for key in r["images"]:
            if key != "sp3/9.jpg":  # one photo is missing on disk
                (root / key).parent.mkdir(parents=True, exist_ok=True)
                (root / key).write_bytes(b"x")
    return p, root


class FakeOracle:
    """Puts the relevant images first (an upper bound) and reports one judge call per image."""

    def __call__(self, item):
        ranked = sorted(item.pool, key=lambda k: -item.relevant.get(k, 0))
        return MethodOutput(ranking=ranked, cost={"judge_calls": len(item.pool), "cache_hits": 1})


class FakePoolOrder:
    """Returns the pool as given (a weak baseline); fails on one query to exercise failure handling."""

    def __call__(self, item):
        if item.qid == "vr-5":
            raise BackendError("fake backend down", "start it")
        return list(reversed(item.pool)) + ["outside/pool.jpg"], {"llm_calls": 1}


def test_evaluate_and_report(tmp_path):
    data, root = _write_visual_rag(tmp_path)
    prepared = prepare_items(load_benchmark("visual-rag", data), root)
    assert prepared.check.missing == ["sp3/9.jpg"]
    metrics = expand_metrics(["hit", "ndcg_visret", "ap@10", "mrr"], ks=(1, 10))
    assert metrics == ["hit@1", "hit@10", "ndcg_visret@1", "ndcg_visret@10", "ap@10", "mrr"]
    seen = []
    result = evaluate(prepared.items, {"baseline": FakePoolOrder(), "oracle": FakeOracle()}, metrics,
                      progress=lambda m, d, t: seen.append((m, d, t)))
    assert seen[-1] == ("oracle", 12, 12)
    assert all(v == 1.0 for row in result.per_query["oracle"].values() for m, v in row.items()
               if m != "ap@10")
    assert result.failures["baseline"] == [{"qid": "vr-5", "error": "fake backend down (start it)"}]
    assert result.per_query["baseline"]["vr-5"]["hit@10"] == 0.0
    assert result.outside_pool["baseline"] == 11  # one foreign key per successful query
    assert result.cost_totals("oracle")["judge_calls"] == 12 * 10 - 1  # the missing photo left one pool

    dialogue = evaluate_dialogue(prepared.items[:3], {"fake-plugir": lambda it, r: [40, 12, 6, 2][: r + 1]}, rounds=3)
    paths = write_report(tmp_path / "out", result, benchmark="visual-rag", baseline="baseline",
                         models={"embedder": "fake-embedder", "judge": "fake-judge"},
                         data_notes=prepared.to_json(), dialogue=dialogue, n_permutations=2000)
    md = paths["report"].read_text(encoding="utf-8")
    assert "## Overall" in md and "oracle" in md and "▲" in md  # the oracle beats the baseline
    assert "### birds (6 queries)" in md and "### plants (6 queries)" in md
    assert "missing: 1" in md and "sp3/9.jpg" in md
    # the VisRet paper's rows were computed on all 391 queries: not shown beside 12
    assert "0.385" not in md and "this run evaluated 12 items, the paper 391" in md
    assert "fake-judge" in md and "failed on vr-5" in md and "BRI" in md
    metrics_json = json.loads(paths["metrics"].read_text(encoding="utf-8"))
    assert metrics_json["summary"]["overall"]["oracle"]["hit@10"] == 1.0
    assert metrics_json["dialogue"]["fake-plugir"]["hits@10"] == [0.0, 0.0, 1.0, 1.0]
    lines = paths["per_query"].read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * 12 + 3
    pngs = sorted(p.name for p in paths["plots"].glob("*.png"))
    assert "bar_hit_10.png" in pngs and "dialogue_hits_10.png" in pngs and "dialogue_bri.png" in pngs
    assert all((paths["plots"] / n).read_bytes()[:4] == b"\x89PNG" for n in pngs)


def test_inquire_rerank_references_and_ap_scale(tmp_path):
    from core.evaluation.items import EvalItem

    kinds = ["Appearance"] * 52 + ["Behavior"] * 59 + ["Context"] * 43  # the paper's 154 queries
    items = [EvalItem(qid=f"q{i}", query="q", kind=k, pool=["a", "b"], relevant={"a": 0, "b": 1})
             for i, k in enumerate(kinds)]
    result = evaluate(items, {"rerank-full": lambda it: ["b", "a"]}, ["ap@100"])
    md = write_report(tmp_path, result, benchmark="inquire-rerank")["report"].read_text(encoding="utf-8")
    assert "AP@100 (x100)" in md and "100.0" in md  # AP shown x 100, as INQUIRE's tables
    assert "66.9" in md and "64.0" in md  # the same set: the paper's rows stand beside ours
    assert "inquire-rerank-hard" not in md and "0.455" not in md  # never another benchmark's rows
    # the test split as released also holds 6 Species queries: then the rows are withheld, with the reason
    species = items + [EvalItem(qid=f"s{i}", query="q", kind="Species", pool=["a", "b"], relevant={"b": 1})
                       for i in range(6)]
    result = evaluate(species, {"rerank-full": lambda it: ["b", "a"]}, ["ap@100"])
    md = write_report(tmp_path / "all", result, benchmark="inquire-rerank")["report"].read_text(encoding="utf-8")
    assert "66.9" not in md and "includes queries of kind species" in md
    with pytest.raises(InputError, match="no evaluation items"):
        evaluate([], {"x": lambda it: []}, ["mrr"])
