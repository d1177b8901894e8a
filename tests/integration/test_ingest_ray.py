"""The Ray ingest engine on real SQLite + FAISS with the hash stand-in embedder: the same vectors as the local
engine, and a killed run that resumes to every photo exactly once. Each test starts a local Ray instance
(about 15-30 s on 2 cores)."""
import contextlib
import hashlib
import os
import shutil
import signal
import socket
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


# ---- issue 36, item 5: the default settings, a failure inside Ray, an existing cluster ----------------------

def _photos(root: Path, n: int = 6) -> Path:
    folder = root / "photos"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        colour_image(700 + i, 96).save(folder / f"p{i}.jpg", quality=90)
    return folder


def _default_env(data: Path, **extra: str) -> dict[str, str]:
    """The environment of a fresh install: no ECOLENS_* settings (the demo world's embedder, a plug-in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ECOLENS_", "RAY_ADDRESS"))}
    return {**env, "ECOLENS_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1", "CI": "true", **extra}


def test_ray_ingest_works_on_the_default_settings(tmp_path):
    """A fresh data directory and no settings: the actors know the demo world's embedder ('fieldguide', which a
    plug-in registers in the main process) and every photo is added."""
    folder = _photos(tmp_path)
    data = tmp_path / "data"
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "ingest", str(folder), "--engine", "ray"],
                          env=_default_env(data), cwd=ROOT, capture_output=True, text=True, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in said, said[-3000:]
    assert "6 added" in done.stdout and "engine: ray" in done.stdout, said[-2000:]
    assert build_services(load_settings(environ={}, data_dir=str(data))).catalog.count() == 6
    assert not _ray_processes(data)


def test_a_failure_inside_ray_is_ecolens_error_with_its_fix(tmp_path, monkeypatch):
    """A plug-in the Ray workers cannot import (as on a cluster whose workers lack this EcoLens): the check task
    says so at once as EcoLens's error and fix, never Ray's traceback; nothing is added."""
    from core.contracts.errors import BackendError
    from core.plugins import registry

    monkeypatch.setattr(registry, "_MODULES", [*registry.loaded_modules(), "tests.no_such_plugin"])
    services = build_services(_settings(tmp_path / "data", ingest_engine="ray", ingest_workers=1,
                                        ray_start_timeout_s=120))
    t0 = time.monotonic()
    with pytest.raises(BackendError) as failed:
        services.ingestor().run(_photos(tmp_path))
    assert time.monotonic() - t0 < 120
    assert "No module named 'tests.no_such_plugin'" in failed.value.message, failed.value.message
    assert "Traceback" not in failed.value.message and "--engine local" in failed.value.hint
    assert services.catalog.count() == 0
    assert not _ray_processes(tmp_path / "data")


def _head_node(tmp_path: Path, port: int) -> subprocess.Popen:
    """`ray start --head` on 127.0.0.1:`port` with 2 CPUs, in a process group of its own (stopped by the test,
    so no `ray stop`, which would end every Ray instance on this shared machine)."""
    ray_cli = Path(sys.executable).parent / "ray"
    env = _default_env(tmp_path / "unused", RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    return subprocess.Popen([str(ray_cli), "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
                             "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
                             "--temp-dir", f"/tmp/ecolens-rayhead-{port}", "--block"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _stop(head: subprocess.Popen, port: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(head.pid, signal.SIGTERM)
    try:
        head.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):  # Ray's own processes of that group, if any are left
        os.killpg(head.pid, signal.SIGKILL)
    head.wait(timeout=10)
    shutil.rmtree(f"/tmp/ecolens-rayhead-{port}", ignore_errors=True)


def _listening(port: int, head: subprocess.Popen, within_s: float = 120) -> None:
    end = time.monotonic() + within_s
    while time.monotonic() < end and head.poll() is None:
        with socket.socket() as s:
            s.settimeout(1.0)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"the Ray head node did not listen on {port} within {within_s} s")


def test_ray_ingest_joins_an_existing_cluster_with_ray_address(tmp_path):
    from tests.live_server import free_port

    port = free_port()
    head = _head_node(tmp_path, port)
    try:
        _listening(port, head)
        data = tmp_path / "data"
        env = _default_env(data, ECOLENS_RAY_ADDRESS=f"127.0.0.1:{port}", RAY_AUTH_MODE="disabled")
        done = subprocess.run([sys.executable, str(ROOT / "app.py"), "ingest", str(_photos(tmp_path)), "--engine",
                               "ray"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
        said = done.stdout + done.stderr
        assert done.returncode == 0 and "Traceback" not in said, said[-3000:]
        assert "6 added" in done.stdout and "engine: ray" in done.stdout, said[-2000:]
        tag = hashlib.sha256(str(data.resolve()).encode()).hexdigest()[:8]
        assert not Path(f"/tmp/ecolens-ray-{tag}").exists()  # no private instance: the cluster did the work
        assert head.poll() is None  # the cluster is left running for its owner
    finally:
        _stop(head, port)
