"""`app.py eval` on files in the layouts VisRet's authors release (visual-rag-me/data/visual-rag-me_final_v1.jsonl
and inquire-rerank-hard/data/inquire_rerank_hard_final.json, images under data/images/<species folder>/): a
Visual-RAG-ME row that names entity 2 first, a row with none of its images present (a failed item, never a
whole-corpus query), an empty --images folder (exit 2, every item listed), and a catalog of the benchmark's
own photos only (the synthetic world is never built into it)."""
import json
import os
import subprocess
import sys
from pathlib import Path

from core.evaluation.deviations import DEVIATIONS
from tests.photos import colour_image

ROOT = Path(__file__).resolve().parents[2]
GOAT = "00854_Animalia_Arthropoda_Insecta_Lepidoptera_Cossidae_Cossus_cossus"
CARPENTER = "00855_Animalia_Arthropoda_Insecta_Lepidoptera_Cossidae_Prionoxystus_robiniae"
THRUSH, FIELDFARE = "04288_Animalia_Turdus_viscivorus", "04289_Animalia_Turdus_pilaris"


def me_release(tmp_path: Path, with_images: bool = True) -> Path:
    """visual-rag-me/data/ with the JSONL and, for the first row only, its images under data/images/."""
    data = tmp_path / "visual-rag-me" / "data"
    (data / "images").mkdir(parents=True)
    rows = [
        {"images": {"entity_1": {f"{CARPENTER}/c{i}.jpg": int(i < 2) for i in range(5)},
                    "entity_2": {f"{GOAT}/g{i}.jpg": int(i < 3) for i in range(5)}},
         "answer": ["The carpenterworm moth's larva has the whiter back."],
         "question": "Which one has more white-ish color on its back, the larva of the goat moth (scientific name: "
                     "Cossus cossus) or that of the carpenterworm moth (scientific name: Prionoxystus robiniae)?",
         "suggested": [], "subset": 5, "sn": ["Prionoxystus robiniae", "Cossus cossus"], "second_entity": GOAT,
         "y_count": [2, 3], "y_rate": [0.4, 0.6]},
        {"images": {"entity_1": {f"{THRUSH}/t{i}.jpg": int(i == 0) for i in range(4)},
                    "entity_2": {f"{FIELDFARE}/f{i}.jpg": int(i == 1) for i in range(4)}},
         "answer": ["Mistle thrush"], "suggested": [], "subset": 5,
         "question": "Mistle Thrush (scientific name: Turdus viscivorus) and Fieldfare (Turdus pilaris) which one "
                     "has black dots on the underside of its tail feather?",
         "sn": ["Turdus viscivorus", "Turdus pilaris"], "second_entity": FIELDFARE, "y_count": [1, 1],
         "y_rate": [0.25, 0.25]},
    ]
    (data / "visual-rag-me_final_v1.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    if with_images:  # the second row's photos were never collected
        for n, key in enumerate(list(rows[0]["images"]["entity_1"]) + list(rows[0]["images"]["entity_2"])):
            (data / "images" / key).parent.mkdir(parents=True, exist_ok=True)
            colour_image(n).save(data / "images" / key)
    return data / "visual-rag-me_final_v1.jsonl"


def hard_release(tmp_path: Path) -> Path:
    data = tmp_path / "inquire-rerank-hard" / "data"
    entries = []
    for q in range(2):
        images = {f"0{q}_Species_{q}/{i:02d}.jpg": int(i in (3, 7)) for i in range(12)}
        entries.append({"query": f"A bird number {q} carrying a twig", "images": images})
        for n, key in enumerate(images):
            (data / "images" / key).parent.mkdir(parents=True, exist_ok=True)
            colour_image(100 * q + n).save(data / "images" / key)
    (data / "inquire_rerank_hard_final.json").write_text(json.dumps(entries, indent=4))
    return data / "inquire_rerank_hard_final.json"


def app(tmp_path, *args, ok=True, **settings):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    # the offline default embedder and judge are the field-guide stand-ins: the world must still not be built
    env.update(ECOLENS_DATA_DIR=str(tmp_path / "data"), ECOLENS_GENERATOR="standin", CI="true",
               **{f"ECOLENS_{k.upper()}": v for k, v in settings.items()})
    out = subprocess.run([sys.executable, str(ROOT / "app.py"), *args], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    if ok:
        assert out.returncode == 0, out.stderr[-3000:]
    return out


def test_visual_rag_me_release_layout(tmp_path):
    data = me_release(tmp_path)
    out = app(tmp_path, "eval", "--benchmark", "visual-rag-me", "--data", str(data), "--methods", "baseline,visret",
              "--permutations", "100", "--out", str(tmp_path / "report"))
    res = json.loads(out.stdout)
    # the second row has no image on disk: both of its items fail, are listed, and leave every mean
    assert res["items_evaluated"] == 2 and sorted(f["qid"] for f in res["failed_items"]) == ["vrme-2-e1", "vrme-2-e2"]
    assert all("none of its 4 images is present" in f["reason"] for f in res["failed_items"])
    per_query = [json.loads(x) for x in (tmp_path / "report" / "per_query.jsonl").read_text().splitlines()]
    assert {r["qid"] for r in per_query} == {"vrme-1-e1", "vrme-1-e2"}
    # each item's ranking stays inside its own organism's photos (entity_1 is named second in the question)
    for r in per_query:
        folder = CARPENTER if r["qid"].endswith("e1") else GOAT
        assert r["ranking"] and all(k.startswith(folder) for k in r["ranking"])
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Failed items: 2" in md and "vrme-2-e1" in md and "2 evaluated of 4" in md
    # a catalog of the benchmark's own ten photos; the synthetic world was never built
    assert "holds only the 10 photos" in md and not (tmp_path / "data" / "fieldguide").exists()
    assert "not shown, this run evaluated 2 items, the paper 100" in md and "0.605" not in md
    for d in DEVIATIONS:
        assert d.what in md


def test_empty_images_folder_exits_2_listing_every_item(tmp_path):
    data = me_release(tmp_path, with_images=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    out = app(tmp_path, "eval", "--benchmark", "visual-rag-me", "--data", str(data), "--images", str(empty),
              "--out", str(tmp_path / "report"), ok=False)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "nothing to evaluate: all 4 items failed" in out.stderr and "how to fix:" in out.stderr
    for qid in ("vrme-1-e1", "vrme-1-e2", "vrme-2-e1", "vrme-2-e2"):
        assert f"{qid}: none of its" in out.stderr
    # no images folder beside the file and no --images: exit 2, saying what is needed
    out = app(tmp_path, "eval", "--benchmark", "visual-rag-me", "--data", str(tmp_path / "elsewhere.jsonl"),
              "--out", str(tmp_path / "r2"), ok=False)
    assert out.returncode == 2 and "error:" in out.stderr


def test_inquire_rerank_hard_json_list(tmp_path):
    data = hard_release(tmp_path)
    out = app(tmp_path, "eval", "--benchmark", "inquire-rerank-hard", "--data", str(data.parent.parent),
              "--methods", "baseline", "--permutations", "100", "--out", str(tmp_path / "report"), embedder="hash")
    res = json.loads(out.stdout)
    assert res["items_evaluated"] == 2 and not res["failed_items"]
    assert set(res["metrics"]["baseline"]) == {"hit@1", "hit@10", "hit@30", "ndcg_visret@10", "ndcg_visret@30",
                                               "ap@100"}
    md = (tmp_path / "report" / "report.md").read_text()
    assert "inquire-rerank-hard" in md and "0.455" not in md and "the paper 59" in md
