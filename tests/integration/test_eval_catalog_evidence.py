"""`eval` ranks pictures alone unless asked: catalog facts as evidence are off by default (the field-guide
benchmark's questions are then all answered by the judge) and the report says which was used; --catalog-evidence
turns them on and the report says so."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_eval_reports_catalog_evidence_off_by_default_and_on_when_asked(tmp_path):
    from fieldguide.world import build_world

    world = tmp_path / "world"
    csv_path = build_world(world, seed=0, per_species=3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(tmp_path / "data"), ECOLENS_RERANK_K="10", CI="true")

    def app(*args):
        out = subprocess.run([sys.executable, str(ROOT / "app.py"), *args], env=env, cwd=ROOT, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout

    app("ingest", str(csv_path))
    common = ("eval", "--benchmark", "fieldguide", "--data", str(world), "--images", str(world), "--methods",
              "rerank-full", "--limit", "1", "--permutations", "50")
    json.loads(app(*common, "--out", str(tmp_path / "off")))
    json.loads(app(*common, "--catalog-evidence", "--out", str(tmp_path / "on")))
    off = (tmp_path / "off" / "report.md").read_text()
    on = (tmp_path / "on" / "report.md").read_text()
    assert "- Catalog facts as evidence: off: every sub-question was answered from the picture" in off
    assert "- Catalog facts as evidence: on (--catalog-evidence)" in on
    off_json = json.loads((tmp_path / "off" / "metrics.json").read_text())
    assert off_json["data"]["catalog_evidence"].startswith("off")
