"""`app.py eval` on a small file in the Visual-RAG layout: the images are ingested from --images, the
benchmark's relative paths are matched to catalog photos, a missing image is listed, not dropped silently."""
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.photos import colour_image

ROOT = Path(__file__).resolve().parents[2]


def test_visual_rag_layout_end_to_end(tmp_path):
    images = tmp_path / "inat"
    rows = []
    for q in range(3):
        folder = images / "train" / f"0{q}_Species_{q}"
        folder.mkdir(parents=True)
        labels = {}
        for i in range(6):
            colour_image(100 * q + i).save(folder / f"{i}.jpg")
            labels[f"train/0{q}_Species_{q}/{i}.jpg"] = int(i < 2)
        labels[f"train/0{q}_Species_{q}/gone.jpg"] = 1  # listed in the benchmark, absent on disk
        rows.append({"question": f"what colour is the crest of species {q}?", "answer": ["red"], "images": labels,
                     "sn": f"Species {q}", "suggested": "", "subset": "test", "y_rate": 0.3, "y_count": 3})
    data = tmp_path / "visual_rag.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECOLENS_")}
    env.update(ECOLENS_DATA_DIR=str(tmp_path / "data"), ECOLENS_EMBEDDER="hash", ECOLENS_GENERATOR="standin",
               ECOLENS_JUDGE="clip", CI="true")
    out = subprocess.run([sys.executable, str(ROOT / "app.py"), "eval", "--benchmark", "visual-rag",
                          "--data", str(data), "--images", str(images), "--methods", "baseline,visret",
                          "--permutations", "100", "--out", str(tmp_path / "report")], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert result["images"]["missing_count"] == 3 and len(result["images"]["missing"]) == 3
    assert set(result["metrics"]) == {"baseline", "visret"}
    assert all(not failures for failures in result["failures"].values())
    per_query = [json.loads(line) for line in (tmp_path / "report" / "per_query.jsonl").read_text().splitlines()]
    assert len(per_query) == 6 and all(0.0 <= r["metrics"]["hit@10"] <= 1.0 for r in per_query)
    report = (tmp_path / "report" / "report.md").read_text()
    assert "visual-rag" in report and "hash-standin@v1/64 (stand-in)" in report
