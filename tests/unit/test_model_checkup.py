"""core/search/model_checkup.py with fake backends: a real model's check runs once in the background after it
loads and a failure is named once per model, with what it means; stand-ins and models behind a server are not
checked; the completion event is waited on."""
from __future__ import annotations

from types import SimpleNamespace

from core.backends.base import JudgeAnswer
from core.config import Settings
from core.search.model_checkup import ModelCheckup

VLM = "transformers:/models/HuggingFaceTB/SmolVLM-256M-Instruct"


class BlindJudge:
    """The same p(yes) for every picture: the doctor's judge probe fails it as not usable."""

    model_id, is_standin = VLM, False

    def __init__(self):
        self.asked = 0

    def ask(self, request):
        self.asked += 1
        return JudgeAnswer("yes", {"yes": -0.3, "no": -1.4}, "looks yes")


class Captioner:
    model_id, is_standin = VLM, False

    def caption(self, image):
        return "a green picture"


def _backends(settings: Settings, **built):
    return SimpleNamespace(settings=settings, unusable={}, **built)


def test_a_failed_model_is_named_once_with_what_it_means():
    judge = BlindJudge()
    backends = _backends(Settings(judge=VLM, captioner=VLM), judge=judge, captioner=Captioner())
    checkup = ModelCheckup(backends)
    checkup.loaded("judge", judge)
    checkup.loaded("judge", judge)  # once per kind
    checkup.loaded("captioner", backends.captioner)
    assert checkup.done.wait(60)
    assert judge.asked == 2  # one probe: a picture that shows it and one that does not
    assert checkup.failed() == ["judge"] and checkup.results["captioner"].ok  # it has no English check to fail
    assert checkup.banner() == "SmolVLM-256M-Instruct answers like random weights: its checks are not used."
    assert backends.unusable == {"judge": checkup.banner()}
    assert checkup.version == 2


def test_stand_ins_and_models_behind_a_server_are_not_checked():
    standin = SimpleNamespace(model_id="clip", is_standin=True)
    served = BlindJudge()
    for settings, judge in ((Settings(judge="clip"), standin), (Settings(judge="openai"), served)):
        checkup = ModelCheckup(_backends(settings, judge=judge))
        checkup.loaded("judge", judge)
        checkup.loaded("generator", judge)  # its check tells nothing of the weights: never run
        assert checkup.done.is_set() and checkup.results == {} and checkup.banner() == ""
    assert served.asked == 0
