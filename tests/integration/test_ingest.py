"""Ingest on real SQLite + real FAISS with the hash stand-in embedder."""
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
from tests.photos import make_photo_folder

ROOT = Path(__file__).resolve().parents[2]


def _settings(tmp_path, **kw):
    base = dict(data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0, batch_size=16,
                max_image_pixels=4_000_000)
    base.update(kw)
    return load_settings(environ={}, **base)


def test_200_photos_with_10_broken(tmp_path):
    folder = make_photo_folder(tmp_path / "photos", good=190, broken=10)
    (folder / "notes.txt").write_text("not a photo")
    engine = build_services(_settings(tmp_path))
    report = engine.ingestor().run(folder)
    assert report.added == 190
    assert len(report.skipped) == 10
    assert all(reason for _, reason in report.skipped)
    assert {Path(n).name.split(".")[0] for n, _ in report.skipped} == {f"broken{j:03d}" for j in range(10)}
    assert report.ignored == [str(folder / "notes.txt")]
    engine.corpus.reload()
    ids = engine.corpus.index.ids()
    assert len(ids) == 190 and len(set(ids)) == 190
    # a second run adds nothing
    again = build_services(_settings(tmp_path)).ingestor().run(folder)
    assert again.added == 0 and again.already == 190


def test_incremental_and_duplicates(tmp_path):
    folder = make_photo_folder(tmp_path / "photos", good=20, broken=0)
    engine = build_services(_settings(tmp_path))
    engine.ingestor().run(folder)
    make_photo_folder(folder, good=5, broken=0, start=20)  # five new photos
    (folder / "copy.jpg").write_bytes((folder / "p0000.jpg").read_bytes())  # same content, new name
    report = engine.ingestor().run(folder)
    assert report.added == 5 and report.already == 20 + 1
    assert engine.catalog.count() == 25


def test_duplicates_within_one_run(tmp_path):
    folder = make_photo_folder(tmp_path / "photos", good=4, broken=0)
    (folder / "twin.jpg").write_bytes((folder / "p0000.jpg").read_bytes())
    report = build_services(_settings(tmp_path)).ingestor().run(folder)
    assert report.added == 4 and report.duplicates == 1


def test_changing_the_embedder_reembeds_into_a_new_vector_set(tmp_path):
    folder = make_photo_folder(tmp_path / "photos", good=6, broken=0)
    build_services(_settings(tmp_path)).ingestor().run(folder)
    from core.backends.hash_embedder import HashEmbedder

    engine = build_services(_settings(tmp_path))
    engine.backends._embedder = HashEmbedder(dim=32)  # another model id and dimension
    report = engine.ingestor().run(folder)
    assert report.added == 0 and report.reembedded == 6
    sets = {vs.model_id: vs.count for vs in engine.catalog.vector_sets()}
    assert sets == {"hash-standin@v1/64": 6, "hash-standin@v1/32": 6}


def test_index_and_catalog_are_reconciled_at_start(tmp_path):
    folder = make_photo_folder(tmp_path / "photos", good=10, broken=0)
    engine = build_services(_settings(tmp_path))
    engine.ingestor().run(folder)
    vs = engine.catalog.vector_sets()[0]
    engine.catalog.unmark_indexed(vs.id, [1, 2])  # a crash between index save and catalog commit
    index, rec = engine.index_store.open(vs, engine.catalog)
    assert rec.marked == [1, 2] and engine.catalog.indexed_ids(vs.id) == set(range(1, 11))
    index.remove([3])  # the index lost a vector
    engine.index_store.save(vs, index)
    _, rec = engine.index_store.open(vs, engine.catalog)
    assert rec.unmarked == [3]
    report = engine.ingestor().run(folder)
    assert report.reembedded == 1 and report.added == 0


def test_killed_run_resumes_with_each_photo_exactly_once(tmp_path):
    folder = make_photo_folder(tmp_path / "photos", good=150, broken=0)
    env = dict(os.environ, ECOLENS_DATA_DIR=str(tmp_path / "data"), ECOLENS_EMBEDDER="hash",
               ECOLENS_BATCH_SIZE="4", ECOLENS_CHECKPOINT_S="0", CI="true")
    slow = ("import sys, time; sys.path.insert(0, %r); import core.backends.hash_embedder as h; "
            "fast = h.HashEmbedder.embed_images; "
            "h.HashEmbedder.embed_images = lambda self, ims: (time.sleep(0.2), fast(self, ims))[1]; "
            "import app; sys.exit(app.main(['ingest', %r]))") % (str(ROOT), str(folder))
    proc = subprocess.Popen([sys.executable, "-c", slow], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = tmp_path / "data" / "ecolens.sqlite"
    deadline = time.time() + 60
    engine = None
    while time.time() < deadline:  # kill it once some, but not all, photos are in
        time.sleep(0.3)
        if db.exists():
            engine = engine or build_services(_settings(tmp_path))
            n = engine.catalog.count()
            if 20 <= n < 150:
                break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert engine is not None and engine.catalog.count() < 150, "the run finished before it could be killed"
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "ingest", str(folder), "--json"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    final = build_services(_settings(tmp_path))
    assert final.catalog.count() == 150
    ids = final.corpus.index.ids()
    assert len(ids) == 150 and len(np.unique(ids)) == 150
    vs = final.catalog.vector_sets()[0]
    assert final.catalog.indexed_ids(vs.id) == set(int(i) for i in ids)


def test_two_processes_opening_a_new_data_dir_at_once(tmp_path):
    """All run the migrations at once; the migration lock makes them wait instead of all creating the tables,
    and the ingest lock lets one ingest write while the others are refused with a message."""
    env = dict(os.environ, ECOLENS_DATA_DIR=str(tmp_path / "data"), ECOLENS_EMBEDDER="hash", CI="true")
    (tmp_path / "empty").mkdir()
    procs = [subprocess.Popen([sys.executable, str(ROOT / "app.py"), "ingest", str(tmp_path / "empty")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [p.communicate(timeout=120) for p in procs]
    errors = [err for _, err in results]
    assert not any("Traceback" in err for err in errors), errors  # no race in the migrations
    assert any(p.returncode == 0 for p in procs)
    for p, err in zip(procs, errors):  # the others were told that an ingest is already running
        assert p.returncode == 0 or (p.returncode == 2 and "Another ingest is running" in err), err


def test_a_second_ingest_at_the_same_time_is_refused_with_a_message(tmp_path):
    import fcntl

    folder = make_photo_folder(tmp_path / "photos", good=3, broken=0)
    settings = _settings(tmp_path)
    settings.path().mkdir(parents=True)
    with open(settings.path("ingest.lock"), "w") as held:  # as if another process were ingesting
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        from core.contracts.errors import InputError

        with pytest.raises(InputError, match="Another ingest is running"):
            build_services(settings).ingestor().run(folder)
    assert build_services(settings).ingestor().run(folder).added == 3  # once it is free, it works
