"""Real backends set up as their authors intend, offline: open_clip's own low-precision mode (LayerNorm kept
in float32) on a tiny random model, and a Hugging Face model that is not cached failing at once with the fix
when the hub cannot be reached (no retries, no pile of warnings)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from core.backends import registry
from core.config import Settings
from tests.integration.test_real_backends import TINY_CLIP

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny_name(tmp_path_factory) -> str:
    open_clip = pytest.importorskip("open_clip")
    folder = tmp_path_factory.mktemp("clip_cfg_lp")
    (folder / "EcoTinyLP-ViT.json").write_text(json.dumps(TINY_CLIP))
    open_clip.add_model_config(folder / "EcoTinyLP-ViT.json")
    return "EcoTinyLP-ViT"


def test_open_clip_low_precision_keeps_layer_norm_in_float32(tiny_name):
    import torch

    torch.manual_seed(0)
    emb = registry.create_embedder(Settings(embedder=f"open_clip:{tiny_name}", device="cpu", dtype="bfloat16"))
    norms = [m for m in emb.model.modules() if isinstance(m, torch.nn.LayerNorm)]
    linears = [m for m in emb.model.modules() if isinstance(m, torch.nn.Linear)]
    assert norms and all(m.weight.dtype == torch.float32 for m in norms)  # open_clip's LayerNormFp32
    assert linears and all(m.weight.dtype == torch.bfloat16 for m in linears)
    assert emb.dtype == torch.bfloat16
    img = emb.embed_images([Image.new("RGB", (40, 30), (200, 30, 30))])
    txt = emb.embed_texts(["a red square"])
    assert img.dtype == np.float32 and np.isfinite(img).all() and np.isfinite(txt).all()
    full = registry.create_embedder(Settings(embedder=f"open_clip:{tiny_name}", device="cpu", dtype="auto"))
    assert all(m.weight.dtype == torch.float32 for m in full.model.modules() if isinstance(m, torch.nn.Linear))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: connections are refused


PROBE = """
import logging, sys
logging.basicConfig(level=logging.WARNING)
from core.backends import registry
from core.contracts.errors import BackendError
from core.config import Settings
try:
    registry.create_embedder(Settings(embedder=sys.argv[1], device="cpu"))
except BackendError as exc:
    print("MESSAGE", exc.message)
    print("HINT", exc.hint)
"""


@pytest.mark.parametrize("spec", ["open_clip:hf-hub:nobody/no-such-clip", "open_clip:ViT-B-32/laion2b_s34b_b79k"])
def test_uncached_hub_model_without_network_fails_at_once_with_the_fix(spec, tmp_path):
    pytest.importorskip("open_clip")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_ENDPOINT=f"http://127.0.0.1:{_closed_port()}",
               NO_PROXY="*", HTTPS_PROXY="", https_proxy="")
    done = subprocess.run([sys.executable, "-c", PROBE, spec], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "MESSAGE The model" in out and "not in the local Hugging Face cache" in out
    assert "cannot be reached" in out and "HF_HUB_OFFLINE=1" in out and "hf download" in out
    assert "Retrying" not in out  # huggingface_hub never started its retry loop
    assert out.count("WARNING") <= 2, out
