"""ClipJudge: statement rules, the softmax confidence, and the judge over a fake embedder."""
from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from core.backends import registry
from core.backends.base import Judge, JudgeRequest, l2_normalise
from core.backends.clip_judge import ClipJudge, statement_pair, yes_probability
from core.config import Settings


class FakeEmbedder:
    """Red pictures sit near texts that mention 'with no'/'without'; others near the rest."""

    model_id = "fake-embedder@1"
    dim = 2
    is_standin = True
    max_text_tokens = 77

    def embed_images(self, images):
        rows = [[1.0, 0.2] if im.getpixel((0, 0))[0] > 128 else [0.2, 1.0] for im in images]
        return l2_normalise(np.array(rows))

    def embed_texts(self, texts):
        rows = [[1.0, 0.0] if (" no " in t or "without" in t) else [0.0, 1.0] for t in texts]
        return l2_normalise(np.array(rows))

    def count_tokens(self, text):
        return len(text.split())


@pytest.mark.parametrize("question,pos,neg", [
    ("Is there a nest in the photo?", "a photo with a nest", "a photo with no nest"),
    ("Are there any eggs?", "a photo with eggs", "a photo with no eggs"),
    ("Does the photo show a bird feeding its chicks?", "a photo of a bird feeding its chicks",
     "a photo without a bird feeding its chicks"),
    ("Do the flowers have five petals?", "a photo of the flowers with five petals",
     "a photo of the flowers without five petals"),
    ("Is the bird flying?", "a photo of the bird flying", "a photo without the bird flying"),
    ("white plumage", "a photo of white plumage", "a photo without white plumage"),
])
def test_statement_pair(question, pos, neg):
    assert statement_pair(question) == (pos, neg)


def test_yes_probability_is_a_two_way_softmax():
    img, pos, neg = np.array([1.0, 0.0]), np.array([0.6, 0.8]), np.array([0.8, 0.6])
    p = yes_probability(img, pos, neg, temperature=100.0)
    assert p == pytest.approx(1.0 / (1.0 + math.exp(100.0 * (0.8 - 0.6))))
    assert yes_probability(img, pos, pos) == pytest.approx(0.5)


def test_clip_judge_answers_and_reports_logprobs():
    judge = registry.create_judge(Settings(judge="clip"), FakeEmbedder())
    assert isinstance(judge, ClipJudge) and isinstance(judge, Judge) and judge.is_standin
    assert judge.model_id == "clip-judge@v1/fake-embedder@1"
    green = judge.ask(JudgeRequest(image=Image.new("RGB", (4, 4), (0, 200, 0)), question="Is there a nest?"))
    red = judge.ask(JudgeRequest(image=Image.new("RGB", (4, 4), (200, 0, 0)), question="Is there a nest?"))
    assert green.answer == "yes" and red.answer == "no"
    for ans in (green, red):
        assert set(ans.top_logprobs) == {"Yes", "No"}
        total = math.exp(ans.top_logprobs["Yes"]) + math.exp(ans.top_logprobs["No"])
        assert total == pytest.approx(1.0)
        assert "approximation" in ans.reason
    assert math.exp(green.top_logprobs["Yes"]) > 0.99


def test_clip_judge_abstains_on_sounds_and_time_of_day_and_names_them():
    judge = ClipJudge(FakeEmbedder(), 0.1)
    green = Image.new("RGB", (4, 4), (0, 200, 0))
    a = judge.ask(JudgeRequest(image=green, question="Is the frog calling at night?"))
    assert a.abstained and a.answer == "not checked" and a.unchecked == ("calling", "at night")
    assert a.top_logprobs == {} and "calling, at night" in a.reason
    assert judge.unseen("a bird singing at dawn in the rain") == ["singing", "at dawn"]
    assert not judge.ask(JudgeRequest(image=green, question="Is there a nest?")).abstained


def test_clip_judge_abstains_inside_its_undecided_band():
    class Even(FakeEmbedder):
        def embed_texts(self, texts):  # the statement and its negation equally close to every picture
            return l2_normalise(np.array([[1.0, 1.0] for _ in texts]))

    a = ClipJudge(Even(), 0.1).ask(JudgeRequest(image=Image.new("RGB", (4, 4), (0, 200, 0)),
                                                question="Is there a nest?"))
    assert a.abstained and a.unchecked == () and "p(yes)=0.50" in a.reason


def test_clip_judge_band_is_the_setting_and_part_of_its_cache_key():
    from core.config import load_settings

    settings = load_settings(environ={}, undecided_band=0.25)
    judge = ClipJudge.from_settings(settings, "clip", FakeEmbedder())
    assert judge.band == 0.25 and judge.prompt_id != ClipJudge(FakeEmbedder(), 0.1).prompt_id
