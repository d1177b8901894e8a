"""The doctor's probes on fakes: what counts as working for each backend kind."""
from __future__ import annotations

import json

import numpy as np

from core.backends.base import JudgeAnswer
from core.config import Settings
from core.contracts.errors import BackendError
from core.doctor import CHANCE_LIMIT, PASS_MATCHES, PROBE_COLOURS, chance_of, check_up, probe
from tests.fakes import FakeBackends, FakeEmbedder, FakeJudge, FakeLLM, logprobs_for


class _Bundle(FakeBackends):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.settings = Settings()


class BlindJudge:
    """A real-looking judge that does not see the image: the same answer for every picture."""

    model_id, is_standin = "blind", False

    def ask(self, request):
        return JudgeAnswer("yes", logprobs_for(0.7))


class NoLogprobsJudge(BlindJudge):
    def ask(self, request):
        return JudgeAnswer("yes", {})


class SeeingEmbedder(FakeEmbedder):
    """Sees colour: a picture's vector is the one-hot of the probe colour nearest its mean, a text's the
    one-hot of the colour it names (what a trained CLIP model does with these pictures)."""

    def __init__(self, dim: int = 16):
        super().__init__(dim)
        self.names = list(PROBE_COLOURS)

    def _hot(self, i: int) -> np.ndarray:
        v = np.zeros(self.dim, np.float32)
        v[i] = 1.0
        return v

    def embed_texts(self, texts):
        return np.stack([self._hot(next((i for i, c in enumerate(self.names) if c in t), len(self.names)))
                         for t in texts])

    def embed_images(self, images):
        colours = np.asarray(list(PROBE_COLOURS.values()), np.float32)
        means = [np.asarray(im.convert("RGB"), np.float32).reshape(-1, 3).mean(0) for im in images]
        return np.stack([self._hot(int(np.linalg.norm(colours - m, axis=1).argmin())) for m in means])


def test_every_backend_gets_a_row_in_order():
    rows = check_up(_Bundle(embedder=SeeingEmbedder(dim=16)))
    assert [r.backend for r in rows] == ["embedder", "llm", "judge", "generator", "captioner"]
    assert rows[0].ok and rows[0].detail.startswith("dimension 16") and "8/8" in rows[0].detail


def test_the_embedder_probe_is_passed_by_guessing_less_than_one_time_in_a_hundred():
    n = len(PROBE_COLOURS)
    assert n >= 6 and chance_of(PASS_MATCHES, n) < CHANCE_LIMIT <= chance_of(PASS_MATCHES - 1, n)
    # guessing, simulated: each picture's closest text drawn at random
    rng = np.random.default_rng(1)
    passes = sum((rng.integers(0, n, n) == np.arange(n)).sum() >= PASS_MATCHES for _ in range(20000))
    assert passes / 20000 < CHANCE_LIMIT


def test_an_embedder_that_does_not_see_colours_is_not_usable_even_as_a_stand_in():
    """Vectors seeded by the pixels (what random weights amount to): the verdict names chance and the fix, and
    is the same on every run (the probe pictures come from a fixed seed)."""
    rows = [probe(_Bundle(embedder=FakeEmbedder(dim=16)), "embedder") for _ in range(2)]
    assert not rows[0].ok and rows[0].detail.startswith("not usable") and "random weights" in rows[0].detail
    assert "open_clip:" in rows[0].fix and rows[0].detail == rows[1].detail


def test_judge_must_see_images_and_return_logprobs():
    blind = probe(_Bundle(judge=BlindJudge()), "judge")
    assert not blind.ok and "does not see the images" in blind.detail and "vision-language" in blind.fix
    assert "blind judge" in blind.detail and blind.detail.startswith("not usable")
    standin = BlindJudge()
    standin.is_standin = True  # a stand-in that cannot see is not usable either
    assert not probe(_Bundle(judge=standin), "judge").ok
    backwards = FakeJudge(rule=lambda r: 0.1 if r.image.getpixel((0, 0))[0] > 100 else 0.9)
    row = probe(_Bundle(judge=backwards), "judge")
    assert not row.ok and "right way round" in row.detail
    assert not probe(_Bundle(judge=NoLogprobsJudge()), "judge").ok
    seeing = FakeJudge(rule=lambda r: 0.9 if r.image.getpixel((0, 0))[0] > 100 else 0.1)
    seeing.is_standin = False
    row = probe(_Bundle(judge=seeing), "judge")
    assert row.ok and "0.90" in row.detail and "0.10" in row.detail


def test_a_judge_with_its_own_probe_case_is_asked_that():
    """A judge made for one world's pictures brings its own case (the demo world's look-alike birds)."""
    from fieldguide.judge import FieldGuideJudge

    question, with_it, without = FieldGuideJudge.probe_case()
    asked = FakeJudge(rule=lambda r: 0.8 if r.image is with_it and r.question == question else 0.2)
    asked.probe_case = lambda: (question, with_it, without)
    row = probe(_Bundle(judge=asked), "judge")
    assert row.ok and question in row.detail and "0.80" in row.detail and "0.20" in row.detail


def test_llm_must_answer_the_json_task():
    good = FakeLLM(default=json.dumps({"questions": ["Is there a heron in the photo?", "Is it eating a fish?"]}))
    assert probe(_Bundle(llm=good), "llm").ok
    prose = probe(_Bundle(llm=FakeLLM(default="Sure! Here are some questions.")), "llm")
    assert not prose.ok and "not JSON" in prose.detail
    down = probe(_Bundle(llm=FakeLLM({"": BackendError("server down", "start it")})), "llm")
    assert not down.ok and down.detail == "server down" and down.fix == "start it"
