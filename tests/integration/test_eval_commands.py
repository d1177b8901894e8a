"""The eval / eval-run command functions that app.py wires into its CLI, on real files in tmp_path."""
import argparse
import json

import pytest

from cli.eval_args import add_eval_arguments, add_eval_run_arguments
from core.contracts.errors import InputError
from core.evaluation.commands import parse_methods, run_benchmark, run_eval_run


def _parser(add):
    p = argparse.ArgumentParser()
    add(p)
    return p


def test_eval_run_trec_and_dialogue(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq1 0 b 0\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("q1 Q0 b 1 2.0 t\nq1 Q0 a 2 1.0 t\n", encoding="utf-8")
    p = _parser(add_eval_run_arguments)
    res, text = run_eval_run(p.parse_args(["--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"),
                                           "--metrics", "mrr,hit@1", "--json"]))
    assert res["metrics"] == {"mrr": 0.5, "hit@1": 0.0} and "mrr" in text
    json.dumps(res)  # printable as JSON
    (tmp_path / "d.csv").write_text("qid,round,rank\nq1,0,12\nq1,1,3\n", encoding="utf-8")
    res, text = run_eval_run(p.parse_args(["--dialogue", str(tmp_path / "d.csv"), "--ks", "10"]))
    assert res["hits@10"] == [0.0, 1.0] and "BRI" in text
    with pytest.raises(InputError, match="needs --qrels and --run"):
        run_eval_run(p.parse_args(["--qrels", str(tmp_path / "q.txt")]))


def test_run_benchmark_writes_report(tmp_path):
    rows = [{"question": f"q{i}", "answer": [], "images": {f"s{i}/a.jpg": 1, f"s{i}/b.jpg": 0}, "sn": "x",
             "suggested": False, "subset": "s", "y_rate": 0.5, "y_count": 1} for i in range(4)]
    (tmp_path / "vr.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    args = _parser(add_eval_arguments).parse_args(
        ["--benchmark", "visual-rag", "--data", str(tmp_path / "vr.jsonl"), "--out", str(tmp_path / "out"),
         "--methods", "baseline,visret", "--metrics", "hit@1,ndcg_visret@2", "--permutations", "500"])
    methods = {m: (lambda it, rev=(m == "baseline"): sorted(it.pool, reverse=rev)) for m in
               parse_methods(args.methods, ["baseline", "rewrite", "visret"])}
    out = run_benchmark(args, methods, models={"embedder": "fake"})
    assert out["metrics"]["visret"]["hit@1"] == 1.0 and out["metrics"]["baseline"]["hit@1"] == 0.0
    assert out["images"] is None  # no --images given: nothing checked
    assert (tmp_path / "out" / "report.md").is_file() and (tmp_path / "out" / "plots" / "bar_hit_1.png").is_file()
    with pytest.raises(InputError, match="unknown method"):
        parse_methods("baseline,magic", ["baseline"])


def test_fieldguide_world_files_load_and_report(tmp_path):
    # the real field-guide world (small): its benchmark files are read by the benchmarks' own readers
    from fieldguide.world import build_world

    build_world(tmp_path / "world", seed=0, per_species=3)
    args = _parser(add_eval_arguments).parse_args(
        ["--benchmark", "fieldguide", "--data", str(tmp_path / "world"), "--images", str(tmp_path / "world"),
         "--out", str(tmp_path / "out"), "--metrics", "hit@1,ndcg_visret@10,ap@100", "--permutations", "200",
         "--limit", "4"])
    oracle = {"oracle": lambda it: sorted(it.pool or it.relevant, key=lambda k: -it.relevant.get(k, 0)),
              "pool-order": lambda it: list(it.pool)}
    out = run_benchmark(args, oracle)
    assert out["images"]["missing_count"] == 0 and out["images"]["checked"] > 0
    assert out["metrics"]["oracle"]["ndcg_visret@10"] == 1.0
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    for kind in ("feature", "comparison", "behaviour", "many_part"):
        assert f"### {kind} (" in md
