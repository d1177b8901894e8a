"""Damaged FAISS files on real SQLite + FAISS: a truncated file, random bytes and flipped bits are detected,
set aside, repaired (from stored vectors, or by embedding the photos again) and reported to the user."""
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from app import build_services
from core.config import load_settings
from core.contracts.search_request import SearchRequest
from tests.photos import colour_image, make_photo_folder

ROOT = Path(__file__).resolve().parents[2]
N = 24


def _settings(tmp_path, **kw):
    return load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0, **kw)


def _ingested(tmp_path, **kw):
    folder = make_photo_folder(tmp_path / "photos", good=N, broken=0)
    engine = build_services(_settings(tmp_path, **kw))
    assert engine.ingestor().run(folder).added == N
    vs = engine.catalog.vector_sets()[0]
    return engine, vs, engine.index_store.path_for(vs)


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _random(path: Path) -> None:
    path.write_bytes(np.random.default_rng(3).integers(0, 256, path.stat().st_size, dtype=np.uint8).tobytes())


def _flip_exponent(path: Path, engine, photo_id: int = 5) -> None:
    """Flip the top exponent bit of one stored float of photo `photo_id`: the score becomes ~1e37."""
    value = float(engine.corpus.index.vectors([photo_id])[0][3])
    data = bytearray(path.read_bytes())
    at = bytes(data).find(struct.pack("<f", value))
    assert at > 0
    data[at + 3] ^= 0x40
    path.write_bytes(bytes(data))


def _first_hit_score(engine) -> float:
    """Search by photo p0005's own file: a sound index gives it back first with cosine 1."""
    engine.corpus.reload()
    image = Image.open(Path(engine.settings.data_dir).parent / "photos" / "p0005.jpg").convert("RGB")
    result = engine.engine.search(SearchRequest(examples=[image], k=3))
    return result.hits[0].score if result.hits else float("nan")


@pytest.mark.parametrize("damage", ["truncated", "random", "flipped"])
def test_damaged_flat_index_is_detected_set_aside_and_reembedded(tmp_path, damage):
    engine, vs, path = _ingested(tmp_path)
    {"truncated": _truncate, "random": _random, "flipped": lambda p: _flip_exponent(p, engine)}[damage](path)
    fresh = build_services(_settings(tmp_path))
    result = fresh.engine.search(SearchRequest(examples=[colour_image(5)], k=3))  # the web app's path: detected at open
    assert any("damaged" in n and "vectors-1.faiss" in n for n in result.notices), result.notices
    assert all(abs(h.score) <= 1.0 + 1e-5 for h in result.hits)  # never garbage scores like 2.4e37
    assert list(path.parent.glob("vectors-1.faiss.damaged-*"))  # set aside, not deleted
    # the repair command embeds the photos again from their files
    env = dict(os.environ, ECOLENS_DATA_DIR=str(tmp_path / "data"), ECOLENS_EMBEDDER="hash", CI="true")
    check = subprocess.run([sys.executable, str(ROOT / "app.py"), "repair", "--check"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 1 and "PROBLEM" in check.stdout, check.stdout + check.stderr
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "repair"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"re-embedded {N} photo(s)" in done.stdout and "[ok]" in done.stdout.split("after:")[1]
    healed = build_services(_settings(tmp_path))
    assert len(healed.corpus.index) == N and _first_hit_score(healed) == pytest.approx(1.0, abs=1e-5)
    assert healed.catalog.indexed_ids(vs.id) == set(int(i) for i in healed.corpus.index.ids())


def test_flipped_bits_without_a_checksum_file_are_caught_by_the_vector_check(tmp_path):
    engine, vs, path = _ingested(tmp_path)
    Path(str(path) + ".check").unlink()  # an index written before checksums existed
    _flip_exponent(path, engine)
    fresh = build_services(_settings(tmp_path))
    fresh.corpus.index
    assert any("not unit length" in n for n in fresh.corpus.startup_notices), fresh.corpus.startup_notices


def test_an_ingest_repairs_automatically_and_says_so(tmp_path):
    engine, vs, path = _ingested(tmp_path)
    _random(path)
    report = build_services(_settings(tmp_path)).ingestor().run(tmp_path / "photos")
    assert report.reembedded == N and report.added == 0
    assert any("damaged" in n for n in report.notices) and any("moved to" in n for n in report.notices)
    assert _first_hit_score(build_services(_settings(tmp_path))) == pytest.approx(1.0, abs=1e-5)


def test_flat_copy_is_rebuilt_from_the_hnsw_twin_without_reembedding(tmp_path):
    engine, vs, path = _ingested(tmp_path, index_type="hnsw")
    before = engine.corpus.index.vectors([3, 7])
    _truncate(path)
    fresh = build_services(_settings(tmp_path, index_type="hnsw"))
    index = fresh.corpus.index
    assert any("rebuilt from the hnsw index" in n for n in fresh.corpus.startup_notices)
    assert len(index) == N and np.abs(index.vectors([3, 7]) - before).max() <= 1e-6


def test_damaged_approximate_index_falls_back_to_exact_and_is_rebuilt(tmp_path):
    engine, vs, path = _ingested(tmp_path, index_type="hnsw")
    _random(Path(str(path) + ".approx"))
    fresh = build_services(_settings(tmp_path, index_type="hnsw"))
    assert _first_hit_score(fresh) == pytest.approx(1.0, abs=1e-5)  # served exactly from the flat copy
    assert any("exact flat index until the approximate index is rebuilt" in n for n in fresh.corpus.startup_notices)
    report = fresh.ingestor().run(tmp_path / "photos")
    assert report.index_kind == "hnsw" and report.reembedded == 0
    again = build_services(_settings(tmp_path, index_type="hnsw"))
    assert again.corpus.index.approx_kind == "hnsw" and not again.corpus.startup_notices


def test_healthy_indexes_pass_the_check(tmp_path):
    _ingested(tmp_path)
    env = dict(os.environ, ECOLENS_DATA_DIR=str(tmp_path / "data"), ECOLENS_EMBEDDER="hash", CI="true")
    check = subprocess.run([sys.executable, str(ROOT / "app.py"), "repair", "--check", "--json"], env=env,
                           capture_output=True, text=True, timeout=120)
    import json

    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout)["indexes"][0]["ok"] is True


@pytest.mark.parametrize("damage", ["truncated", "random", "flipped"])
def test_a_running_engine_notices_its_index_damaged_on_disk_and_writes_it_again_from_memory(tmp_path, damage):
    """The index file damaged under a running engine: the next search checks it against its checksum record,
    says so (a notice and a log line), sets the file aside and writes the sound copy it has loaded back;
    the results stay sound and the file on disk is whole again."""
    from core.vectors.integrity import read_checked

    services, vs, path = _ingested(tmp_path)
    before = _first_hit_score(services)  # loads the index into this running engine
    {"truncated": _truncate, "random": _random, "flipped": lambda p: _flip_exponent(p, services)}[damage](path)
    result = services.engine.search(SearchRequest(examples=[colour_image(5)], k=3))
    assert any("vectors-1.faiss was damaged" in n for n in result.notices), result.notices
    assert any("written again from the copy this server had loaded (24 photos)" in n for n in result.notices)
    assert all(abs(h.score) <= 1.0 + 1e-5 for h in result.hits)
    assert list(path.parent.glob("vectors-1.faiss.damaged-*"))  # set aside, not deleted
    index, damage_found = read_checked(path, vs.dim)
    assert damage_found is None and index.ntotal == N  # sound on disk again
    again = services.engine.search(SearchRequest(examples=[colour_image(5)], k=3))
    assert not any("damaged" in n for n in again.notices)  # said once
    assert before == pytest.approx(1.0, abs=1e-5)


def test_damage_found_while_an_ingest_runs_is_reported_and_the_loaded_index_is_searched(tmp_path):
    import fcntl

    services, vs, path = _ingested(tmp_path)
    services.engine.search(SearchRequest(examples=[colour_image(5)], k=3))
    _random(path)
    with open(tmp_path / "data" / "ingest.lock", "w") as held:  # another process's ingest holds the lock
        fcntl.flock(held, fcntl.LOCK_EX)
        result = services.engine.search(SearchRequest(examples=[colour_image(5)], k=3))
        fcntl.flock(held, fcntl.LOCK_UN)
    assert any("vectors-1.faiss is damaged" in n and "python app.py repair" in n for n in result.notices)
    assert any(f"the photos known before ({N}) are searched" in n for n in result.notices), result.notices
    assert len(result.hits) == 3 and all(abs(h.score) <= 1.0 + 1e-5 for h in result.hits)
