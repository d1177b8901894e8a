"""The doctor's probes on fakes: what counts as working for each backend kind."""
from __future__ import annotations

import json

from core.backends.base import JudgeAnswer
from core.doctor import check_up, probe
from core.contracts.errors import BackendError
from core.contracts.settings import Settings
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


def test_every_backend_gets_a_row_in_order():
    rows = check_up(_Bundle(embedder=FakeEmbedder(dim=16)))
    assert [r.backend for r in rows] == ["embedder", "llm", "judge", "generator", "captioner"]
    assert rows[0].ok and rows[0].detail.startswith("dimension 16")


def test_judge_must_see_images_and_return_logprobs():
    blind = probe(_Bundle(judge=BlindJudge()), "judge")
    assert not blind.ok and "does not see the images" in blind.detail and "vision-language" in blind.fix
    assert not probe(_Bundle(judge=NoLogprobsJudge()), "judge").ok
    seeing = FakeJudge(rule=lambda r: 0.9 if r.image.getpixel((0, 0))[0] > 100 else 0.1)
    seeing.is_standin = False
    row = probe(_Bundle(judge=seeing), "judge")
    assert row.ok and "0.90" in row.detail and "0.10" in row.detail


def test_llm_must_answer_the_json_task():
    good = FakeLLM(default=json.dumps({"questions": ["Is there a heron in the photo?", "Is it eating a fish?"]}))
    assert probe(_Bundle(llm=good), "llm").ok
    prose = probe(_Bundle(llm=FakeLLM(default="Sure! Here are some questions.")), "llm")
    assert not prose.ok and "not JSON" in prose.detail
    down = probe(_Bundle(llm=FakeLLM({"": BackendError("server down", "start it")})), "llm")
    assert not down.ok and down.detail == "server down" and down.fix == "start it"
