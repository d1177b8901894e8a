"""`doctor` on in-process transformers models of random weights: a random LLM's JSON still parses (xgrammar
holds it to the schema) and a random captioner still writes words, so the doctor also asks each to score an
English sentence against its words backwards and against guessing (core/backends/fluency.py). A random tiny
Llama and a random tiny SmolVLM fail, naming the model; the same tiny Llama trained here on the sentence for
a moment passes; a backend without the check (a server's model, a stand-in) is probed as before. The table
shows a hub model's whole name."""
from __future__ import annotations

import math

import pytest

pytest.importorskip("transformers")
pytest.importorskip("xgrammar")

from core import doctor
from core.backends import fluency as fl
from core.backends import vlm_loading
from core.backends.registry import Backends
from core.backends.transformers_llm import TransformersLLM
from core.config import Settings
from tests.tiny_llm import folder, llm  # noqa: F401  (the module's tiny Llama fixtures)


class _Bundle:
    """What `doctor.probe` needs of the registry: the settings and the backend by kind."""

    def __init__(self, settings: Settings, **backends):
        self.settings = settings
        self.__dict__.update(backends)


def _trained(folder) -> TransformersLLM:
    """The tiny Llama after a moment's training on the probe sentence: it has learnt the order of its tokens."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    ids = torch.tensor([tokenizer(fl.SENTENCE, add_special_tokens=False)["input_ids"]])
    torch.manual_seed(0)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.03)
    model.train()
    for _ in range(120):
        optimiser.zero_grad()
        model(input_ids=ids, labels=ids).loss.backward()
        optimiser.step()
    return TransformersLLM(str(folder), model, tokenizer)


def test_a_random_model_reads_the_sentence_no_better_than_guessing(llm):
    got = llm.fluency()
    assert got.guessing == pytest.approx(-math.log(llm.model.config.vocab_size))
    assert abs(got.gap) < fl.MIN_GAP and got.forwards - got.guessing < fl.MIN_GAP
    assert not got.reads_english and got.tokens >= 4


def test_the_same_model_trained_reads_it(folder):
    llm = _trained(folder)
    got = llm.fluency()
    assert got.reads_english, got.said()
    assert doctor.reads_english(llm, "llm", "").startswith("; reads English (log-probability a token")


def test_doctor_flags_a_random_llm_naming_the_model(llm):
    row = doctor.probe(_Bundle(Settings(llm=f"transformers:{llm.spec}"), llm=llm), "llm")
    assert not row.ok and not row.standin
    assert row.detail.startswith(f"not usable: the model transformers:{llm.spec} does not read English")
    assert "ECOLENS_MODELS=standin" in row.fix and "llm=transformers:MODEL" in row.fix


def test_doctor_flags_a_random_captioner_naming_the_model(tmp_path):
    pytest.importorskip("num2words")
    from tests.tiny_vlm import build_tiny_smolvlm

    vlm_loading.forget_models()
    try:
        for name, kw in (("random", {"seed": 1}), ("yes-no", {"yes_no": True})):  # near guessing; far below it
            model = build_tiny_smolvlm(tmp_path / name, **kw)
            settings = Settings(captioner=f"transformers:{model}", device="cpu")
            captioner = Backends(settings).captioner
            captioner.max_tokens = 4
            row = doctor.probe(_Bundle(settings, captioner=captioner), "captioner")
            assert not row.ok, row.detail
            assert row.detail.startswith(f"not usable: the model transformers-captioner:{model} does not read English")
    finally:
        vlm_loading.forget_models()


def test_a_backend_without_the_check_is_probed_as_before():
    class Served:  # a server's model: no fluency()
        model_id = "openai:some-model"

    assert doctor.reads_english(Served(), "llm", "answered") == ""


def test_a_check_that_cannot_run_gives_no_verdict():
    """A model whose text part cannot be run without an image is not called unusable for it."""
    class NeedsAnImage:
        model_id = "transformers-captioner:some/vlm"

        def fluency(self):
            raise ValueError("pixel_values are required")

    said = doctor.reads_english(NeedsAnImage(), "captioner", "caption: 'a bird'")
    assert said.startswith("; the English-sentence check could not run (ValueError: pixel_values are required")


def test_the_table_shows_a_hub_models_whole_name():
    from cli.doctor import _table

    name = "transformers:HuggingFaceTB/SmolVLM-256M-Instruct"
    row = doctor.ProbeResult("judge", name, False, False, name, "not usable: blind", "fix it", 0.5)
    assert name in _table([row])
