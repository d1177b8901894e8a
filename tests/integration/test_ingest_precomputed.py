"""A parquet of precomputed embeddings (clip-retrieval / INQUIRE style) ingested without the embedder touching
the photos, then searched; model and dimension mismatches are refused with a clear message."""
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app import build_services
from core.backends.hash_embedder import HashEmbedder
from core.config import load_settings
from core.contracts.errors import InputError
from core.contracts.search_request import SearchRequest
from tests.photos import colour_image

ROOT = Path(__file__).resolve().parents[2]
SPECIES = ["Rana aurora", "Ardea herodias", "Danaus plexippus"]


def _settings(tmp_path):
    return load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0)


def _write(tmp_path, n=12, *, model="hash-standin@v1/64", dim=64, url_rows=2) -> Path:
    """Photos on disk plus a few URLs; vectors made 'elsewhere' (here: by the hash embedder itself)."""
    (tmp_path / "img").mkdir(parents=True, exist_ok=True)
    emb = HashEmbedder(dim=64)
    rows = []
    for i in range(n):
        img = colour_image(i)
        img.save(tmp_path / "img" / f"{i}.png")
        vec = emb.embed_images([img])[0] * 3.0  # not unit length: ingest normalises
        rows.append({"image_path": f"img/{i}.png", "embedding": vec[:dim].tolist() + [0.0] * max(0, dim - 64),
                     "scientific_name": SPECIES[i % 3], "observed_on": f"2023-05-{i + 1:02d}", "latitude": 40.0 + i,
                     "longitude": -3.0, "license": "cc0", "clip_score": 0.25})
    for j in range(url_rows):
        rows.append({"image_path": f"https://example.org/photos/{j}.jpg", "embedding": rows[j]["embedding"],
                     "scientific_name": "Bufo bufo", "observed_on": "2023-06-01", "latitude": 50.0,
                     "longitude": 1.0, "license": "cc-by", "clip_score": 0.2})
    table = pa.Table.from_pylist(rows)
    if model:
        table = table.replace_schema_metadata({b"model_id": model.encode()})
    path = tmp_path / "vectors.parquet"
    pq.write_table(table, path)
    return path


def test_precomputed_parquet_is_ingested_and_searched(tmp_path):
    path = _write(tmp_path)
    engine = build_services(_settings(tmp_path))
    report = engine.ingestor().run(path)
    assert report.kind == "precomputed" and report.added == 14 and not report.skipped
    photos = {Path(p.path).name: p for p in engine.catalog.all_photos()}
    assert photos["3.png"].scientific_name == SPECIES[0] and photos["3.png"].width == 64
    assert photos["3.png"].extra["clip_score"] == 0.25
    assert photos["0.jpg"].path == "https://example.org/photos/0.jpg"  # a URL keeps its reference
    engine.corpus.reload()
    # query by example: photo 5's own picture finds photo 5 first (the stored vector is its embedding)
    result = engine.engine.search(SearchRequest(examples=[colour_image(5)], k=3))
    assert Path(result.hits[0].photo.path).name == "5.png" and result.hits[0].score == pytest.approx(1.0, abs=1e-5)
    from core.contracts.records import Filters

    filtered = engine.engine.search(SearchRequest("frog", k=20, filters=Filters(taxon="Rana aurora")))
    assert {h.photo.scientific_name for h in filtered.hits} == {"Rana aurora"} and len(filtered.hits) == 4
    # a second run adds nothing; a folder ingest of the same files recognises them by content
    assert engine.ingestor().run(path).already == 14
    assert engine.ingestor().run(tmp_path / "img").already == 12


def test_model_and_dimension_must_match_the_vector_set(tmp_path):
    engine = build_services(_settings(tmp_path))
    with pytest.raises(InputError, match="were made by open_clip:ViT-B-32") as exc:
        engine.ingestor().run(_write(tmp_path / "m", model="open_clip:ViT-B-32/laion2b_s34b_b79k"))
    assert "embedder" in exc.value.hint
    with pytest.raises(InputError, match="dimension 512, the vector set has 64"):
        engine.ingestor().run(_write(tmp_path / "d", dim=512))
    with pytest.raises(InputError, match="does not say which model"):
        engine.ingestor().run(_write(tmp_path / "n", model=""))
    assert engine.catalog.count() == 0  # nothing was written by the refused files
    report = engine.ingestor().run(_write(tmp_path / "n", model=""), model="hash-standin@v1/64")
    assert report.added == 14


def test_cli_reports_a_model_mismatch_without_a_traceback(tmp_path):
    path = _write(tmp_path, model="open_clip:ViT-L-14/openai")
    env = dict(os.environ, ECOLENS_DATA_DIR=str(tmp_path / "data"), ECOLENS_EMBEDDER="hash")
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "ingest", str(path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "error:" in done.stderr and "how to fix:" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_large_precomputed_file_is_read_in_flat_memory_into_a_compressed_index(tmp_path, monkeypatch):
    """Reading a parquet of many row groups batch by batch holds a bounded amount of Arrow memory, not the
    file (pyarrow's pre-buffering kept every row group read: the 1M-photo ingest's memory grew with the file);
    with ivfpq, no flat copy and the float16 store, the index is trained first and every vector lands in the
    store, re-scored searches find each photo by its own vector."""
    import numpy as np

    import core.ingest.precomputed as precomputed

    monkeypatch.setattr(precomputed, "ROWS_PER_BATCH", 4096)  # the file spans many batches (the memory held is
    # about one batch's, whatever the file's size)
    rng = np.random.default_rng(0)
    n, dim, group = 60_000, 64, 2_000
    x = rng.standard_normal((n, dim)).astype(np.float16)
    table = pa.table({"url": [f"https://example.org/p/{i}.jpg" for i in range(n)],
                      "embedding": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), dim)})
    path = tmp_path / "many.parquet"
    pq.write_table(table.replace_schema_metadata({b"model_id": b"hash-standin@v1/64"}), path, row_group_size=group)
    settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", index_type="ivfpq",
                             index_flat_copy=False, index_float16_file=True, index_pq_m=8, index_nlist=16,
                             checkpoint_s=0.0)
    services = build_services(settings)
    del table
    arrow_peak, before = [], pa.total_allocated_bytes()
    report = services.ingestor().run(path, lambda done, total: arrow_peak.append(pa.total_allocated_bytes()))
    assert report.added == n and report.index_kind == "ivfpq"
    held = max(arrow_peak) - before
    assert held < 0.75 * x.nbytes, (held, x.nbytes)  # held 3.6 MB of a 7.7 MB file; pre-buffered 11.4 MB
    index = services.corpus.index
    assert index.flat is None and len(index.store) == n
    # opened for searching, the float16 store is read into the file cache in the background (core.vectors.warm_up)
    warm = services.corpus.warm_up
    assert warm is not None and warm.done.wait(30)
    assert warm.read == index.store.path.stat().st_size and warm.error is None
    q = x[[5, 17_000]].astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    _, ids = index.search(q, 1)
    assert ids[:, 0].tolist() == [6, 17_001]


def _url_vectors(tmp_path, n: int, dim: int = 64, seed: int = 0) -> Path:
    import numpy as np

    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    table = pa.table({"url": [f"https://example.org/p/{i}.jpg" for i in range(n)],
                      "scientific_name": [SPECIES[i % 3] for i in range(n)],
                      "latitude": [float(i % 80) for i in range(n)], "longitude": [float(i % 170) for i in range(n)],
                      "embedding": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), dim)})
    path = tmp_path / "urls.parquet"
    pq.write_table(table.replace_schema_metadata({b"model_id": b"hash-standin@v1/64"}), path, row_group_size=500)
    return path


def _each_photo_once(settings, n: int) -> None:
    import numpy as np

    final = build_services(settings)
    assert final.catalog.count() == n
    ids = final.corpus.index.ids()
    assert len(ids) == n and len(np.unique(ids)) == n
    vs = final.catalog.vector_sets()[0]
    assert final.catalog.indexed_ids(vs.id) == set(int(i) for i in ids)


def test_a_failed_index_add_stops_the_ingest_and_the_next_run_adds_each_photo_once(tmp_path, monkeypatch):
    """The vectors are added on a thread of their own: its error reaches the caller (no hang, no silent
    loss), and what the failed run wrote is finished by the next run exactly once."""
    import core.ingest.precomputed as precomputed
    from core.vectors.index import VectorIndex

    monkeypatch.setattr(precomputed, "ROWS_PER_BATCH", 100)
    path, settings = _url_vectors(tmp_path, 1000), _settings(tmp_path)
    real_add, calls = VectorIndex.add, []

    def failing_add(self, ids, vectors):
        calls.append(len(ids))
        if len(calls) == 4:
            raise RuntimeError("the disk is full")
        return real_add(self, ids, vectors)

    monkeypatch.setattr(VectorIndex, "add", failing_add)
    with pytest.raises(RuntimeError, match="the disk is full"):
        build_services(settings).ingestor().run(path)
    assert 4 <= len(calls) < 10
    monkeypatch.setattr(VectorIndex, "add", real_add)
    report = build_services(settings).ingestor().run(path)
    assert report.added + report.reembedded + report.already == 1000 and report.reembedded >= 100
    _each_photo_once(settings, 1000)


def test_a_killed_precomputed_ingest_resumes_with_each_photo_exactly_once(tmp_path):
    import signal
    import time

    n = 3000
    path = _url_vectors(tmp_path, n)
    env = dict(os.environ, ECOLENS_DATA_DIR=str(tmp_path / "data"), ECOLENS_EMBEDDER="hash",
               ECOLENS_CHECKPOINT_S="0", CI="true")
    slow = ("import sys, time; sys.path.insert(0, %r); import core.ingest.precomputed as p; p.ROWS_PER_BATCH = 50; "
            "import core.vectors.index as v; add = v.VectorIndex.add; "
            "v.VectorIndex.add = lambda self, ids, x: (time.sleep(0.1), add(self, ids, x))[1]; "
            "import app; sys.exit(app.main(['ingest', %r]))") % (str(ROOT), str(path))
    proc = subprocess.Popen([sys.executable, "-c", slow], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    db, deadline, engine = tmp_path / "data" / "ecolens.sqlite", time.time() + 90, None
    while time.time() < deadline and proc.poll() is None:  # kill it once some, but not all, photos are in
        time.sleep(0.2)
        if db.exists():
            engine = engine or build_services(_settings(tmp_path))
            if 300 <= engine.catalog.count() < n - 300:
                break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert engine is not None and engine.catalog.count() < n, "the run finished before it could be killed"
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "ingest", str(path), "--json"], env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    _each_photo_once(_settings(tmp_path), n)
