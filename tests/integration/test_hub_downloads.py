"""What a hub dataset and a hub model bring besides their photos and weights, with the fake hub on 127.0.0.1
(tests/fake_hub.py, HF_ENDPOINT): precomputed vectors beside the dataset used instead of the image encoder when
they are the embedder's model's (and named, with the photos embedded, when they are not); the dataset card's
licence on the banner (else the photos' own licence values, saying so); and a model file whose download was
killed half-way continued with a range request at the next start, then loaded from the cache with no network.

As in test_hub_profile.py, every command runs in a child process whose environment clears the HF_HUB_OFFLINE /
TRANSFORMERS_OFFLINE that test.sh sets; only the embedder is a hub model here (explicit stand-ins beat the
profile's judge, LLM, captioner and generator), so each test downloads one tiny open_clip model."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("open_clip")

from tests.fake_hub import FakeHub
from tests.fake_hub import child_env as _env
from tests.hub_repos import TINY_CLIP, dataset_files, image_ids, tiny_open_clip_repo, vector_parquet

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
BIOCLIP = "open_clip:hf-hub:imageomics/bioclip"
WEIGHTS = "open_clip_model.safetensors"
STANDINS = {"models": "hub-cpu", "judge": "clip", "llm": "rule", "captioner": "metadata", "generator": "standin"}
MATCHING, OTHER = "tests/inquire-with-vectors", "tests/inquire-other-vectors"

# the app's own entry point, with the open_clip embedder's image passes counted (a counting fake on the real path)
COUNTED = """
import sys
from core.backends import openclip_embedder as oe
calls = []
for name in ("embed_images", "encode_preprocessed"):
    def counted(self, batch, _orig=getattr(oe.OpenClipEmbedder, name)):
        calls.append(len(batch))
        return _orig(self, batch)
    setattr(oe.OpenClipEmbedder, name, counted)
import app
code = app.main(sys.argv[1:])
print("IMAGES-EMBEDDED", sum(calls), file=sys.stderr)
sys.exit(code)
"""


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    server = FakeHub()
    server.add("model", "imageomics/bioclip", tiny_open_clip_repo(tmp_path_factory.mktemp("clip")))
    files = dataset_files()
    dim = TINY_CLIP["embed_dim"]
    server.add("dataset", MATCHING, {**files, "vectors/validation.parquet": vector_parquet(BIOCLIP, dim, image_ids()),
                                     "vectors/test.parquet": vector_parquet(BIOCLIP, dim, image_ids(2))})
    server.add("dataset", OTHER, {k: v for k, v in files.items() if k != "README.md"}
               | {"vectors/validation.parquet": vector_parquet("open_clip:ViT-B-32/openai", 512, image_ids())})
    server.start()
    yield server
    server.stop()


def _search(hub, data: Path, repo: str) -> tuple[dict, str]:
    env = _env(hub.url, data, corpus=f"hf://datasets/{repo}:validation", **STANDINS)
    run = subprocess.run([sys.executable, "-c", COUNTED, "search", "a heron eating a fish", "--json"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout), run.stderr


def _embedded(err: str) -> int:
    return int(err.rsplit("IMAGES-EMBEDDED", 1)[1].split()[0])


def test_precomputed_vectors_of_the_embedders_model_replace_the_image_encoder(hub, tmp_path):
    out, err = _search(hub, tmp_path / "data", MATCHING)
    assert _embedded(err) == 0  # not one photo went through the image encoder
    assert len(out["results"]) == 12
    assert any(n.startswith("12 photos took their vectors from the precomputed file validation.parquet beside the "
                            f"dataset (made by {BIOCLIP})") for n in out["notices"]), out["notices"]
    folder = tmp_path / "data/hub/datasets" / MATCHING / "main"
    record = json.loads((folder / "complete.json").read_text())
    assert [v["path"] for v in record["vectors"]] == ["vectors/validation.parquet"]  # the split's only
    assert not (folder / "vectors/test.parquet").exists()
    # the banner names the dataset card's licence
    assert out["notices"][0].startswith("12 photos from inquire-with-vectors (validation split), under CC BY-NC 4.0 "
                                        "(the dataset card's licence"), out["notices"][0]


def test_vectors_of_another_model_are_named_and_the_photos_embedded(hub, tmp_path):
    out, err = _search(hub, tmp_path / "data", OTHER)
    assert _embedded(err) == 12
    note = next(n for n in out["notices"] if n.startswith("the precomputed vectors validation.parquet"))
    assert f"they were made by open_clip:ViT-B-32/openai, the embedder is {BIOCLIP}" in note
    assert "the photos are embedded here instead" in note
    log = (tmp_path / "data" / "logs" / "ecolens.log").read_text()
    assert "precomputed vectors validation.parquet beside the dataset were not used" in log
    # no card in this repository: the photos' own licence values, saying where they came from
    assert out["notices"][0].startswith("12 photos from inquire-other-vectors (validation split), licences cc-by, "
                                        "cc-by-nc (from the photos' licence column, as the dataset card names none")


# --- a model file resumed after a kill -------------------------------------------------------------------
# huggingface_hub's http_get writes every DOWNLOAD_CHUNK_SIZE (10 MB) bytes; here every 64 kB, so that a kill
# half-way through the tiny model's 13 MB leaves a part to continue from
FETCH_MODELS = """
import json, sys
from huggingface_hub import constants
constants.DOWNLOAD_CHUNK_SIZE = 65536
from core.config import Settings
from core.search import space
from core.backends import model_fetch
settings = Settings(data_dir=sys.argv[1], **json.loads(sys.argv[2]))
space.use_model_cache(settings)
print("NOTICES", model_fetch.fetch(settings, lambda what, done, total: print("P", what, done, total, flush=True)),
      flush=True)
"""
LOAD = """
import json, sys
from core.config import Settings
from core.search import space
from core.backends.registry import Backends
settings = Settings(data_dir=sys.argv[1], **json.loads(sys.argv[2]))
space.use_model_cache(settings)
emb = Backends(settings).embedder
print("LOADED", emb.model_id, emb.embed_texts(["a heron"]).shape[1], flush=True)
"""


def _script(code: str, env: dict, data: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, str(data), json.dumps(STANDINS)], cwd=ROOT, env=env,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_model_download_resumes_after_a_kill_and_the_model_loads(hub, tmp_path):
    data = tmp_path / "data"
    weights = hub.repos[("model", "imageomics/bioclip")][WEIGHTS]
    hub.rate, hub.log[:] = 1_000_000.0, []  # bytes a second: 13 MB take 13 s, killed after a third
    start = hub.sent
    first = _script(FETCH_MODELS, _env(hub.url, data), data)
    deadline = time.monotonic() + 120
    while hub.sent - start < len(weights) // 3 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.05)
    assert first.poll() is None, first.communicate()
    first.kill()
    first.communicate()
    hub.rate = None
    cache = data / "models" / "models--imageomics--bioclip"
    parts = list(cache.glob("blobs/*.part"))
    assert parts and parts[0].stat().st_size > 0  # the part the next start continues from
    assert not (cache / "refs" / "main").exists()  # no snapshot yet: the model counts as missing
    second = _script(FETCH_MODELS, _env(hub.url, data), data)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err[-3000:]
    ranges = [r for method, path, r in hub.log if method == "GET" and path.endswith(WEIGHTS) and r]
    assert ranges and int(ranges[-1].split("=")[1].rstrip("-")) > 0  # resumed, not started again
    lines = [line.split() for line in out.splitlines() if line.startswith("P ")]
    total = sum(len(b) for p, b in hub.repos[("model", "imageomics/bioclip")].items())
    assert lines[-1][-2:] == [str(total), str(total)] and lines[0][1:3] == ["downloading", "bioclip"]
    assert "downloaded imageomics/bioclip" in out
    snapshot = next((cache / "snapshots").iterdir())
    assert (cache / "refs" / "main").read_text() == snapshot.name
    assert hashlib.sha256((snapshot / WEIGHTS).read_bytes()).hexdigest() == hashlib.sha256(weights).hexdigest()
    assert (snapshot / WEIGHTS).is_symlink() and not list(cache.glob("blobs/*.part"))
    # the model loads from the cache as the backends read it, with no network at all
    offline = _env(None, data)
    offline["HF_HUB_OFFLINE"] = "1"
    load = _script(LOAD, offline, data)
    out, err = load.communicate(timeout=300)
    assert load.returncode == 0, err[-3000:]
    assert f"LOADED {BIOCLIP}#" in out and out.split()[-1] == str(TINY_CLIP["embed_dim"])
