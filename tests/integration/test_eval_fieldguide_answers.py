"""`app.py eval --benchmark fieldguide --answers` reports answer accuracy (photo reader + judge, offline
stand-ins named as such), and `--methods plugir` alone runs the dialogue evaluation."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_answers_and_plugir_alone(tmp_path):
    from fieldguide.world import build_world

    world = tmp_path / "world"
    csv_path = build_world(world, seed=0, per_species=3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(tmp_path / "data"), CI="true")

    def app(*args):
        out = subprocess.run([sys.executable, str(ROOT / "app.py"), *args], env=env, cwd=ROOT, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout

    app("ingest", str(csv_path))
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
