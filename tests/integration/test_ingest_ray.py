"""The Ray ingest engine on real SQLite + FAISS with the hash stand-in embedder: the same vectors as the local
engine, and a killed run that resumes to every photo exactly once. Each test starts a local Ray instance
(about 15-30 s on 2 cores)."""
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from app import build_services
from core.config import load_settings
from tests.photos import colour_image, make_photo_folder

pytest.importorskip("ray")
pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _settings(data: Path, **kw):
    base = dict(data_dir=str(data), embedder="hash", checkpoint_s=0.0, batch_size=8, max_image_pixels=4_000_000)
    base.update(kw)
    return load_settings(environ={}, **base)


def _vectors_by_hash(engine) -> dict[str, np.ndarray]:
    index = engine.corpus.index
    photos = engine.catalog.get_photos(index.ids())
    return {p.sha256: index.vectors([p.id])[0] for p in photos}


def _ray_processes(data: Path) -> list[str]:
    tag = hashlib.sha256(str(data.resolve()).encode()).hexdigest()[:8]
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if f"ecolens-ray-{tag}" in line]


def test_ray_and_local_engines_store_the_same_vectors(tmp_path):
    folder = make_photo_folder(tmp_path / "photos", good=30, broken=3)
    (folder / "twin.jpg").write_bytes((folder / "p0000.jpg").read_bytes())
    for i in range(2):  # large JPEGs take the reduced-decode path
        colour_image(500 + i, 1100).save(folder / f"big{i}.jpg", quality=90)
    local = build_services(_settings(tmp_path / "a"))
    rep_local = local.ingestor().run(folder)
    ray_engine = build_services(_settings(tmp_path / "b", ingest_engine="ray", ingest_workers=1))
    rep_ray = ray_engine.ingestor().run(folder)
    assert rep_ray.engine == "ray" and rep_local.engine == "local"
    assert rep_ray.added == rep_local.added == 32
    assert rep_ray.duplicates == rep_local.duplicates == 1
    assert sorted(n for n, _ in rep_ray.skipped) == sorted(n for n, _ in rep_local.skipped)
    a, b = _vectors_by_hash(local), _vectors_by_hash(ray_engine)
    assert set(a) == set(b) and len(a) == 32
    assert max(float(np.abs(a[h] - b[h]).max()) for h in a) <= 1e-5
    big = [p for p in ray_engine.catalog.all_photos() if Path(p.path).name.startswith("big")]
    assert {(p.width, p.height) for p in big} == {(1100, 1100)}  # the original size, not the reduced decode
    assert not _ray_processes(tmp_path / "b")  # Ray was shut down
    again = ray_engine.ingestor().run(folder)  # incremental: nothing new, Ray not even started
    assert again.added == 0 and again.already == 33


def test_killed_ray_ingest_resumes_with_each_photo_exactly_once(tmp_path):
    folder = make_photo_folder(tmp_path / "photos", good=80, broken=0)
    data = tmp_path / "data"
    env = dict(os.environ, ECOLENS_DATA_DIR=str(data), ECOLENS_EMBEDDER="hash", ECOLENS_BATCH_SIZE="4",
               ECOLENS_CHECKPOINT_S="0", ECOLENS_INGEST_ENGINE="ray", ECOLENS_INGEST_WORKERS="1", CI="true")
    slow = ("import sys, time; sys.path.insert(0, %r); import core.ingest.ingestor as ing; add = ing._Committer.add; "
            "ing._Committer.add = lambda self, b: (time.sleep(0.3), add(self, b))[1]; "
            "import app; sys.exit(app.main(['ingest', %r]))") % (str(ROOT), str(folder))
    proc = subprocess.Popen([sys.executable, "-c", slow], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = data / "ecolens.sqlite"
    deadline = time.time() + 300
    engine, n = None, 0
    while time.time() < deadline and proc.poll() is None:  # kill it once some, but not all, photos are in
        time.sleep(0.3)
        if db.exists():
            engine = engine or build_services(_settings(data))
            n = engine.catalog.count()
            if 12 <= n < 80:
                break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert engine is not None and n < 80, "the run finished before it could be killed"
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "ingest", str(folder), "--json"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    final = build_services(_settings(data))
    assert final.catalog.count() == 80
    ids = final.corpus.index.ids()
    assert len(ids) == 80 and len(np.unique(ids)) == 80
    vs = final.catalog.vector_sets()[0]
    assert final.catalog.indexed_ids(vs.id) == set(int(i) for i in ids)
    assert len({p.sha256 for p in final.catalog.all_photos()}) == 80
    for _ in range(40):  # the killed driver's Ray processes end once they notice it is gone
        if not _ray_processes(data):
            break
        time.sleep(0.5)
    assert not _ray_processes(data), _ray_processes(data)


def test_workers_flag_is_checked(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "ingest", str(tmp_path), "--workers", "-3"],
                          env=dict(os.environ, ECOLENS_DATA_DIR=str(tmp_path / "d"), ECOLENS_EMBEDDER="hash"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--workers" in done.stderr and "Traceback" not in done.stderr
