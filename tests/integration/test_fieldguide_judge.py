"""The field-guide judge network: tiny training run (loadable, repeatable), and the committed weights answer
from the pixels with calibrated confidence on pictures they never saw."""
from __future__ import annotations

import json

import numpy as np
import pytest

from core.backends.base import Judge, JudgeRequest
from core.contracts.errors import BackendError
from fieldguide.encoder import ASSET_DIR
from fieldguide.judge_net import CONFIG_NAME, WEIGHTS_NAME, JudgeReader
from fieldguide.judge_training import JudgeTrainConfig, draw, train_judge
from fieldguide.render import render

HAVE_WEIGHTS = (ASSET_DIR / WEIGHTS_NAME).exists() and (ASSET_DIR / CONFIG_NAME).exists()
TINY = dict(per_species=3, calibration_per_species=2, test_per_species=2, epochs=1, batch=16, width=4, hidden=16)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("fg-judge")
    return out, train_judge(out, JudgeTrainConfig(**TINY))


def test_tiny_training_writes_weights_and_a_sidecar(tiny):
    out, info = tiny
    side = json.loads((out / CONFIG_NAME).read_text())
    assert side == info and side["seed"] == 4321 and side["config"]["epochs"] == 1
    assert set(side["timings_s"]) >= {"draw", "train", "test", "total", "cpu"}
    assert set(side["temperatures"]) >= {"species", "behaviour", "colour:crest"}
    assert "all" in side["metrics_test"] and 0 <= side["metrics_test"]["all"]["ece"] <= 1
    reader = JudgeReader(out)
    probs = reader.attribute_probs([render(s) for _, s in draw("x", 1)[:2]])
    assert len(probs) == 2 and abs(sum(probs[0]["species"].values()) - 1) < 1e-5


def test_training_is_repeatable_for_a_seed(tiny, tmp_path):
    import torch

    train_judge(tmp_path, JudgeTrainConfig(**TINY))
    a = torch.load(tiny[0] / WEIGHTS_NAME, weights_only=True)
    b = torch.load(tmp_path / WEIGHTS_NAME, weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_missing_judge_weights_raise_backend_error_with_hint(tmp_path):
    with pytest.raises(BackendError) as err:
        JudgeReader(tmp_path)
    assert "train_fieldguide_judge" in err.value.hint


@pytest.mark.skipif(not HAVE_WEIGHTS, reason="committed field-guide judge weights not present")
def test_committed_judge_is_accurate_and_calibrated_on_unseen_pictures():
    from fieldguide.judge import FieldGuideJudge
    from fieldguide.judge_eval import evaluate_judge

    judge = FieldGuideJudge(reader=JudgeReader())
    assert isinstance(judge, Judge) and judge.is_standin
    items = draw("fieldguide-judge-test-suite:1", 12)  # 144 pictures no training run drew
    m = evaluate_judge(judge, [(sp, s, render(s)) for sp, s in items], seed=1)
    assert m["species (telling part visible)"]["accuracy"] >= 0.9
    assert m["species (telling part hidden)"]["mean_abs_p_minus_half"] <= 0.15  # it says "can't tell"
    assert m["behaviour"]["accuracy"] >= 0.8 and m["all"]["accuracy"] >= 0.9
    assert m["all"]["ece"] <= 0.08


@pytest.mark.skipif(not HAVE_WEIGHTS, reason="committed field-guide judge weights not present")
def test_judge_answers_a_look_alike_by_the_telling_part():
    import random

    from fieldguide.judge import FieldGuideJudge
    from fieldguide.scene import sample_scene
    from fieldguide.species import by_name

    judge = FieldGuideJudge(reader=JudgeReader())
    rng = random.Random(5)
    gold = by_name("Gold-crested Tuftling")
    side = next(s for s in (sample_scene(gold, rng) for _ in range(50)) if s.view == "side" and s.count == 1)
    top = next(s for s in (sample_scene(gold, rng) for _ in range(50)) if s.view == "top")
    ask = lambda s, q: float(np.exp(judge.ask(JudgeRequest(image=render(s), question=q)).top_logprobs["Yes"]))  # noqa: E731
    assert ask(side, "Is this a Gold-crested Tuftling?") > 0.8 > 0.2 > ask(side, "Is this an Ember-crested Tuftling?")
    assert 0.3 < ask(top, "Is this a Gold-crested Tuftling?") < 0.7  # the crest is hidden from above
