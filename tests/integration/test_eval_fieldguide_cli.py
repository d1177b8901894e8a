"""CI's smoke evaluation: a few field-guide queries, every method, through `python app.py eval`."""
import json

from tests.world_services import world_app

METHODS = ("baseline,rewrite,visret,rerank-direct,rerank-subq,rerank-context,rerank-full,visret+rerank-full,"
           "coverage,plugir")


def _world_app(tmp_path):
    """A small world ingested into tmp_path/data, and a function that runs `app.py` on it (stdout back)."""
    return world_app(tmp_path, ECOLENS_RERANK_K="10")


def test_eval_fieldguide_all_methods_writes_report(tmp_path):
    world, app = _world_app(tmp_path)
    out = json.loads(app("eval", "--benchmark", "fieldguide", "--data", str(world), "--images", str(world),
                         "--methods", METHODS, "--limit", "2", "--rounds", "1", "--permutations", "200",
                         "--out", str(tmp_path / "report")))
    report = tmp_path / "report"
    assert set(out["metrics"]) == set(METHODS.split(",")) - {"plugir"}
    for method, values in out["metrics"].items():
        assert 0.0 <= values["ndcg@10"] <= 1.0, method
    text = (report / "report.md").read_text()
    assert "rerank-full" in text and "plugir" in text.lower()
    assert list((report / "plots").glob("*.png"))
    assert out["images"]["missing_count"] == 0


def test_eval_reports_catalog_evidence_off_by_default_and_on_when_asked(tmp_path):
    """Benchmarks rank pictures alone: catalog facts as evidence are off unless --catalog-evidence is given, and
    the report says which was used."""
    world, app = _world_app(tmp_path)
    common = ("eval", "--benchmark", "fieldguide", "--data", str(world), "--images", str(world), "--methods",
              "rerank-full", "--limit", "1", "--permutations", "50")
    app(*common, "--out", str(tmp_path / "off"))
    app(*common, "--catalog-evidence", "--out", str(tmp_path / "on"))
    off = (tmp_path / "off" / "report.md").read_text()
    on = (tmp_path / "on" / "report.md").read_text()
    assert "- Catalog facts as evidence: off: every sub-question was answered from the picture" in off
    assert "- Catalog facts as evidence: on (--catalog-evidence)" in on
    assert json.loads((tmp_path / "off" / "metrics.json").read_text())["data"]["catalog_evidence"].startswith("off")
