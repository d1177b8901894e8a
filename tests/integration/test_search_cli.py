"""The search command end to end through the CLI: JSON shape, filters, --image, user errors."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.photos import write_corpus

ROOT = Path(__file__).resolve().parents[2]


def _run(args, data_dir, **extra_env):
    env = dict(os.environ, ECOLENS_DATA_DIR=str(data_dir), ECOLENS_EMBEDDER="hash", CI="true", **extra_env)
    env.pop("ECOLENS_CONFIG", None)
    return subprocess.run([sys.executable, str(ROOT / "app.py"), *args], env=env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def _json(args, data_dir):
    out = _run(args, data_dir)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A small iNaturalist-style CSV corpus with two taxa, dates and places, ingested once."""
    root = tmp_path_factory.mktemp("corpus")

    def row(i):
        bird = i % 2 == 0
        return {"scientific_name": "Turdus migratorius" if bird else "Rana aurora",
                "common_name": "American Robin" if bird else "Red-legged Frog",
                "class": "Aves" if bird else "Amphibia", "genus": "Turdus" if bird else "Rana",
                "observed_on": f"2023-{(i % 12) + 1:02d}-15", "latitude": 40 + i, "longitude": -120 + i,
                "license": "CC0" if i < 12 else "CC-BY", "rights_holder": f"observer{i}",
                "caption": "", "inat_id": str(5000 + i)}
    csv_path = write_corpus(root, 24, row)
    data = tmp_path_factory.mktemp("data")
    out = _run(["ingest", str(csv_path)], data)
    assert out.returncode == 0, out.stderr
    assert "24 added" in out.stdout
    return root, data


def test_search_json_object(corpus):
    _, data = corpus
    out = _run(["search", "a robin on a branch", "--k", "5", "--json"], data)
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    assert obj["query"] == "a robin on a branch" and obj["method"] == "baseline"
    assert [r["rank"] for r in obj["results"]] == [1, 2, 3, 4, 5]
    first = obj["results"][0]
    assert {"id", "path", "score", "taxon"} <= set(first)
    scores = [r["score"] for r in obj["results"]]
    assert scores == sorted(scores, reverse=True)
    assert {"search", "total"} <= set(obj["timings_ms"])
    assert obj["backends"]["embedder"] == {"model_id": "hash-standin@v1/64", "standin": True}


def test_filters_taxon_dates_bbox_licence(corpus):
    _, data = corpus
    out = _json(["search", "frog", "--taxon", "amphibia", "--k", "50", "--json"], data)
    assert len(out["results"]) == 12 and {r["taxon"] for r in out["results"]} == {"Rana aurora"}
    out = _json(["search", "x", "--date-from", "2023-03-01", "--date-to", "2023-04-30", "--k", "50",
                           "--json"], data)
    assert out["results"] and all(r["observed_on"][:7] in ("2023-03", "2023-04") for r in out["results"])
    out = _json(["search", "x", "--bbox", "-119.5,40,-115,60", "--k", "50", "--json"], data)
    assert sorted(r["longitude"] for r in out["results"]) == [-119, -118, -117, -116, -115]
    out = _json(["search", "x", "--license", "cc-by", "--taxon", "Turdus", "--k", "50", "--json"], data)
    assert len(out["results"]) == 6 and out["pool_size"] == 6


def test_search_by_example_photo(corpus):
    root, data = corpus
    out = _json(["search", "--image", str(root / "img" / "7.png"), "--k", "3", "--json"], data)
    assert out["results"][0]["path"].endswith("img/7.png")  # the photo itself ranks first
    assert out["results"][0]["score"] == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("args,words", [
    (["search", ""], "The query is empty"),
    (["search", "x", "--taxon", "Unicornis"], "No photo in the catalog has the taxon"),
    (["search", "x", "--bbox", "1,2,3"], "not four numbers"),
    (["search", "x", "--bbox", "0,80,10,20"], "west,south,east,north"),
    (["search", "x", "--date-from", "May 3"], "YYYY-MM-DD"),
    (["search", "--image", "/nonexistent.jpg"], "does not exist"),
    (["ingest", "/nonexistent/folder"], "does not exist"),
    (["ingest", "/nonexistent/package"], "a Camtrap DP package (its folder, datapackage.json or .zip)"),
    (["search", "x", "--k", "0"], "outside 1 to 1000"),
])
def test_user_errors_are_messages_not_tracebacks(corpus, args, words):
    _, data = corpus
    out = _run(args, data)
    assert out.returncode == 2
    assert words in out.stderr and "Traceback" not in out.stderr
    assert "how to fix" in out.stderr


def test_config_prints_effective_settings_masked(tmp_path):
    out = _run(["config"], tmp_path, ECOLENS_OPENAI_API_KEY="sk-very-secret", ECOLENS_K="9")
    obj = json.loads(out.stdout)
    assert obj["k"] == 9 and obj["openai_api_key"] == "***" and "sk-very-secret" not in out.stdout


def test_bad_setting_fails_at_start_listing_valid_ones(tmp_path):
    out = _run(["config"], tmp_path, ECOLENS_TOPK="9")
    assert out.returncode == 2 and "TOPK".lower() in out.stderr and "valid settings" in out.stderr


def test_every_command_carries_the_stand_in_note_without_breaking_json(corpus):
    """The stand-in note (the web app's banner) is in the notices of JSON output, or on stderr; stdout stays
    machine-readable."""
    root, data = corpus
    csv_path = next(root.glob("*.csv"))
    plain = _run(["ingest", str(csv_path)], data)
    assert plain.returncode == 0 and "note: Searching 24 of your photos. YOUR PHOTOS, STAND-IN MODELS" in plain.stderr
    assert "STAND-IN" not in plain.stdout
    as_json = _json(["ingest", str(csv_path), "--json"], data)
    assert as_json["notices"][0].startswith("Searching 24 of your photos. YOUR PHOTOS, STAND-IN MODELS")
    found = _json(["search", "a robin", "--k", "2", "--json"], data)
    assert sum("STAND-IN MODELS" in n for n in found["notices"]) == 1
    config = _run(["config"], data)
    assert config.returncode == 0 and json.loads(config.stdout) and "note: " in config.stderr
    assert "Searching 24 of your photos. YOUR PHOTOS, STAND-IN MODELS" in config.stderr


def test_a_stand_in_embedders_scores_are_called_so_in_json_and_text(corpus):
    """With the hash stand-in (this corpus's embedder) `search --json` says what its numbers are in
    stages.score (standin, and a meaning saying they mean nothing about the photo, the page's words) and the
    text output writes each score as a stand-in score after a note saying so."""
    _, data = corpus
    found = _json(["search", "a robin on a branch", "--k", "3", "--json"], data)
    ranking = found["stages"]["score"]
    assert found["stages"]["standin_similarity"] == "hash" and ranking["standin"] == "hash"
    assert "stand-in scores" in ranking["meaning"] and "means nothing about what a photo shows" in ranking["meaning"]
    text = _run(["search", "a robin on a branch", "--k", "3"], data)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert sum(line.startswith("note: scores are stand-in scores, ") for line in lines) == 1
    results = [line for line in lines if line.lstrip()[:2].rstrip(".").isdigit()]
    assert len(results) == 3 and all("] stand-in " in line for line in results), lines
