"""Offline stand-in backends and the registry: RuleLLM, StandinGenerator, MetadataCaptioner."""
from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from PIL import Image

from core.backends import registry
from core.backends.base import LLM, Captioner, ChatMessage, ImageGenerator
from core.backends.metadata_captioner import MetadataCaptioner
from core.backends.rule_llm import RuleLLM
from core.backends.standin_generator import StandinGenerator
from core.config import Settings
from core.contracts.errors import ConfigError, EcoLensError
from core.contracts.records import Photo


def test_rule_llm_is_a_standin_that_answers_empty():
    llm = registry.create_llm(Settings(llm="rule"))
    assert isinstance(llm, RuleLLM) and isinstance(llm, LLM)
    assert llm.is_standin and llm.model_id == "rule-llm@v1"
    assert llm.chat([ChatMessage("user", "hello")], json_schema={"type": "object"}) == ""


def test_standin_generator_is_deterministic_in_prompt_and_seed():
    gen = registry.create_generator(Settings(generator="standin"))
    assert isinstance(gen, StandinGenerator) and isinstance(gen, ImageGenerator) and gen.is_standin
    a = gen.generate("a heron on one leg", seed=3, size=64)
    b = gen.generate("a heron on one leg", seed=3, size=64)
    c = gen.generate("a heron on one leg", seed=4, size=64)
    d = gen.generate("a heron on two legs", seed=3, size=64)
    assert a.image.size == (64, 64) and a.image.mode == "RGB"
    assert np.array_equal(np.asarray(a.image), np.asarray(b.image))
    assert not np.array_equal(np.asarray(a.image), np.asarray(c.image))
    assert not np.array_equal(np.asarray(a.image), np.asarray(d.image))
    assert a.ignored_words == ["a", "heron", "on", "one", "leg"]
    assert a.model_id == "standin-generator@v1" and a.seed == 3


def test_metadata_captioner_uses_names_date_place_and_note():
    cap = registry.create_captioner(Settings(captioner="metadata"))
    assert isinstance(cap, MetadataCaptioner) and isinstance(cap, Captioner) and cap.is_standin
    photo = Photo(path="x.jpg", common_name="American robin", scientific_name="Turdus migratorius",
                  observed_on=date(2021, 5, 3), latitude=42.36, longitude=-71.06, caption="on a lawn")
    text = cap.caption(Image.new("RGB", (8, 8)), photo)
    assert text == ("Photo of American robin (Turdus migratorius), taken on 3 May 2021 near "
                    "42.36°N, 71.06°W. Observer's note: on a lawn.")


def test_metadata_captioner_without_names_or_photo():
    cap = MetadataCaptioner()
    assert cap.caption(Image.new("RGB", (30, 20))) == "Photo of 30x20 pixels with no catalog information."
    assert "family Turdidae" in cap.caption(Image.new("RGB", (8, 8)), Photo(path="p", family="Turdidae"))
    assert cap.caption(Image.new("RGB", (8, 8)), Photo(path="p")) == "Photo of an unidentified subject."


@pytest.mark.parametrize("setting,create", [
    ("embedder", registry.create_embedder), ("llm", registry.create_llm),
    ("generator", registry.create_generator), ("captioner", registry.create_captioner)])
def test_registry_unknown_name_lists_valid_names(setting, create):
    with pytest.raises(ConfigError) as err:
        create(Settings(**{setting: "nonsense"}))
    for name in registry.list_backends()[setting]:
        assert name in err.value.hint
    assert setting in err.value.hint


@pytest.mark.parametrize("setting,value,create", [
    ("generator", "diffusers:", registry.create_generator), ("generator", "openai:", registry.create_generator),
    ("embedder", "open_clip:", registry.create_embedder)])
def test_registry_prefix_without_spec_is_an_error(setting, value, create):
    with pytest.raises(EcoLensError) as err:
        create(Settings(**{setting: value}, openai_api_key="x"))
    assert value in str(err.value) or "needs a model" in str(err.value)


def test_backends_describe_reports_standins():
    b = registry.Backends(Settings(llm="rule", generator="standin", captioner="metadata"))
    _ = b.llm, b.generator, b.captioner
    assert b.describe() == {
        "llm": {"model_id": "rule-llm@v1", "standin": True},
        "generator": {"model_id": "standin-generator@v1", "standin": True},
        "captioner": {"model_id": "metadata-captioner@v1", "standin": True}}
