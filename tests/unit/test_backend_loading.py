"""Backends load once, under a lock; a failed load is remembered for the process and reported once; every
model is configured from its facts (steps, guidance, size, precision, context)."""
from __future__ import annotations

import logging
import threading
import time
import types

import pytest
from PIL import Image

from core.backends import registry
from core.backends.model_facts import model_facts
from core.config import Settings
from core.contracts.errors import BackendError

CALLS: list[str] = []
ALL_ASKING = threading.Event()  # set when the last thread of the concurrency test is about to ask


def broken_llm(settings, spec):
    CALLS.append(spec)
    raise BackendError("the test LLM cannot load", "install the test LLM")


def slow_llm(settings, spec):
    CALLS.append(spec)
    ALL_ASKING.wait(10)  # the load still runs when the last thread comes to ask for the backend
    return types.SimpleNamespace(model_id="slow", is_standin=True)


@pytest.fixture
def test_llms(monkeypatch):
    CALLS.clear()
    monkeypatch.setitem(registry.LLMS, "broken", f"{__name__}:broken_llm")
    monkeypatch.setitem(registry.LLMS, "slow", f"{__name__}:slow_llm")
    monkeypatch.setattr(registry, "_FAILED_LOADS", {})


def test_a_failed_load_is_remembered_and_logged_once(test_llms, caplog):
    settings = Settings(llm="broken", data_dir="/nonexistent-a")
    with caplog.at_level(logging.ERROR, logger="core.backends.registry"):
        for backends in (registry.Backends(settings), registry.Backends(settings)):
            for _ in range(3):
                with pytest.raises(BackendError) as err:
                    backends.llm
                assert err.value.message == "the test LLM cannot load" and "install the test LLM" in err.value.hint
    assert CALLS == ["broken"]  # loaded once in the process, not once per use
    assert len([r for r in caplog.records if "not retried" in r.getMessage()]) == 1
    assert registry.failed_load("llm", settings) is not None
    assert registry.failed_load("llm", Settings(llm="broken", data_dir="/other")) is None  # other settings: own try


def test_concurrent_first_use_loads_once(test_llms):
    backends = registry.Backends(Settings(llm="slow"))
    seen, asking = [], []
    lock = threading.Lock()
    ALL_ASKING.clear()

    def use() -> None:
        with lock:
            asking.append(1)
            if len(asking) == 4:
                ALL_ASKING.set()
        seen.append(backends.llm)

    threads = [threading.Thread(target=use) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert CALLS == ["slow"] and len({id(b) for b in seen}) == 1


@pytest.mark.parametrize("name, steps, guidance, side", [
    ("stabilityai/sdxl-turbo", 1, 0.0, 512),
    ("/models/sd-turbo", 1, 0.0, 512),
    ("stable-diffusion-v1-5/stable-diffusion-v1-5", 25, 7.5, 512),
    ("stabilityai/stable-diffusion-2-1", 25, 7.5, 768),
    ("stabilityai/stable-diffusion-2-1-base", 25, 7.5, 512),
    ("stabilityai/stable-diffusion-xl-base-1.0", 30, 5.0, 1024),
    ("black-forest-labs/FLUX.1-schnell", 4, 0.0, 1024),
])
def test_generator_facts_for_the_recommended_models(name, steps, guidance, side):
    facts = model_facts("generator", name)
    assert (facts.steps, facts.guidance, facts.native_size) == (steps, guidance, side) and facts.matched != "default"


def test_other_facts_and_defaults():
    assert model_facts("generator", "someone/unknown-model").matched == "default"
    assert model_facts("embedder", "hf-hub:imageomics/bioclip-2").context_tokens == 77
    assert model_facts("embedder", "ViT-L-14-336/openai").native_size == 336
    assert model_facts("llm", "SmolLM2-135M-Instruct-Q8_0.gguf").note  # the tiny-model caveat
    assert model_facts("llm", "gpt-4.1-mini").note == "" and model_facts("llm", "gpt-4.1-mini").context_tokens > 10**6


class FakePipeline:
    """A diffusers-like pipeline: records each call's arguments, draws a flat picture of the asked size."""

    def __init__(self, sample_size=None, scale=8):
        self.calls: list[dict] = []
        self.unet = types.SimpleNamespace(config=types.SimpleNamespace(sample_size=sample_size))
        self.vae_scale_factor = scale
        self.active = 0

    def to(self, device):
        return self

    def __call__(self, prompt, *, height, width, **kwargs):
        self.active += 1
        assert self.active == 1, "two pictures drawn at once"
        time.sleep(0.01)
        self.calls.append(dict(kwargs, height=height, width=width))
        self.active -= 1
        return types.SimpleNamespace(images=[Image.new("RGB", (width, height), (10, 200, 30))])


def test_diffusers_generator_draws_as_the_model_needs():
    pytest.importorskip("torch")
    from core.backends.diffusers_generator import DiffusersGenerator

    turbo = FakePipeline()
    out = DiffusersGenerator("stabilityai/sdxl-turbo", pipeline=turbo, device="cpu").generate("a fern", seed=1,
                                                                                             size=224)
    assert turbo.calls[0]["num_inference_steps"] == 1 and turbo.calls[0]["guidance_scale"] == 0.0
    assert (turbo.calls[0]["height"], turbo.calls[0]["width"]) == (512, 512) and out.image.size == (224, 224)
    sd = FakePipeline()
    DiffusersGenerator("runwayml/stable-diffusion-v1-5", pipeline=sd, device="cpu").generate("a fern", seed=1, size=224)
    assert sd.calls[0]["num_inference_steps"] == 12 and sd.calls[0]["guidance_scale"] == 7.5  # capped on the CPU
    own = FakePipeline(sample_size=96, scale=8)  # an unknown model: its own config says 768 px
    DiffusersGenerator("me/my-model", pipeline=own, device="cpu").generate("a fern", seed=1, size=224)
    assert own.calls[0]["height"] == 768


def test_diffusers_pipeline_is_never_called_from_two_threads_at_once():
    pytest.importorskip("torch")
    from core.backends.diffusers_generator import DiffusersGenerator

    pipe = FakePipeline()
    gen = DiffusersGenerator("stabilityai/sd-turbo", pipeline=pipe, device="cpu")
    threads = [threading.Thread(target=gen.generate, args=("a fern",), kwargs={"seed": i, "size": 64})
               for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(pipe.calls) == 6  # FakePipeline asserts that no two calls overlapped


def test_diffusers_failed_load_is_not_retried_per_picture(monkeypatch, caplog):
    pytest.importorskip("diffusers")
    from core.backends.diffusers_generator import DiffusersGenerator

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    gen = DiffusersGenerator("nobody/not-a-cached-model", device="cpu")
    with caplog.at_level(logging.ERROR, logger="core.backends.diffusers_generator"):
        messages = []
        for seed in range(3):
            with pytest.raises(BackendError) as err:
                gen.generate("a fern", seed=seed, size=64)
            messages.append(err.value.message)
    assert len(set(messages)) == 1 and "not in the local Hugging Face cache" in messages[0]
    assert "HF_HUB_OFFLINE" in err.value.hint and "hf download nobody/not-a-cached-model" in err.value.hint
    assert len([r for r in caplog.records if "not retried" in r.getMessage()]) == 1


def test_open_clip_precision_names():
    from core.backends.torch_device import precision_for

    assert precision_for("auto", "cpu", "fp16") == "fp32"
    assert precision_for("auto", "cuda", None) == "fp16" and precision_for("auto", "cuda", "bf16") == "bf16"
    assert precision_for("auto", "mps", "bf16") == "fp16"
    assert precision_for("bfloat16", "cpu", None) == "bf16" and precision_for("float32", "cuda", "fp16") == "fp32"


def test_a_missing_models_fix_names_its_cache_folder_and_where_to_copy_it(monkeypatch, tmp_path):
    """With a real profile the cache is the data directory's models folder (HF_HUB_CACHE): the fix says to
    copy the model's models--OWNER--NAME folder there, not 'to HF_HOME'."""
    from core.backends import hf_hub

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hint = hf_hub.missing_model_error("HuggingFaceTB/SmolVLM-256M-Instruct", "judge", "judge=transformers:/x").hint
    assert "copy its folder models--HuggingFaceTB--SmolVLM-256M-Instruct" in hint
    assert f"into {tmp_path / 'models'} here" in hint and "HF_HOME here" not in hint
