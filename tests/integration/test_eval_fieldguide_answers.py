"""`app.py eval --benchmark fieldguide --answers` reports answer accuracy (photo reader + judge, offline
stand-ins named as such), and `--methods plugir` alone runs the dialogue evaluation."""
import json

from tests.world_services import world_app


def test_answers_and_plugir_alone(tmp_path):
    world, app = world_app(tmp_path)
    res = json.loads(app("eval", "--benchmark", "fieldguide", "--data", str(world), "--methods", "baseline",
                         "--answers", "--limit", "2", "--permutations", "100", "--out", str(tmp_path / "answers")))
    assert 0.0 <= res["answer_accuracy"]["baseline"] <= 1.0
    report = json.loads((tmp_path / "answers" / "metrics.json").read_text())["answers"]
    # feature questions (2) and comparison rows (2, one answer per row): many-part and behaviour have no answer
    assert report["methods"]["baseline"]["n"] == 4 and report["reader"] == "fieldguide-reader@v1 (stand-in)"
    assert "stand-in" in report["judge"]
    for row in report["per_question"]:
        assert row["answer_source"] == "photos" and row["cited_ids"] and 0.0 <= row["score"] <= 1.0
    md = (tmp_path / "answers" / "report.md").read_text()
    assert "## Answer accuracy" in md and "keyword-overlap judge (offline stand-in" in md
    # a feature question whose answer names the right colour scores 1
    assert any(r["score"] == 1.0 and r["reference"][0] in r["answer"] for r in report["per_question"])

    res = json.loads(app("eval", "--benchmark", "fieldguide", "--data", str(world), "--methods", "plugir",
                         "--limit", "1", "--rounds", "1", "--out", str(tmp_path / "plugir")))
    assert res["metrics"] == {} and set(res["dialogue"]) == {"plugir"}
    assert "BRI" in (tmp_path / "plugir" / "report.md").read_text()
