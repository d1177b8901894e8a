"""Training the field-guide encoder on a tiny configuration, loading it, and using the committed weights
through the registry (embedder, judge) on rendered pictures."""
from __future__ import annotations

import random

import numpy as np
import pytest

from core.backends.base import Embedder, Judge, JudgeRequest
from core.contracts.errors import BackendError
from fieldguide.encoder import ASSET_DIR, CONFIG_NAME, WEIGHTS_NAME, FieldGuideEmbedder
from fieldguide.render import render
from fieldguide.training import TrainConfig, train
from fieldguide.world import sample_observations

HAVE_WEIGHTS = (ASSET_DIR / WEIGHTS_NAME).exists() and (ASSET_DIR / CONFIG_NAME).exists() and \
    (ASSET_DIR / "judge.pt").exists()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("fg-encoder")
    info = train(out, TrainConfig(per_species=2, steps=3, batch=16, dim=32, width=8))
    return out, info


def test_tiny_training_writes_loadable_weights(tiny):
    out, info = tiny
    assert info["steps_done"] == 3 and info["seed"] == 1234 and info["vocab"]
    emb = FieldGuideEmbedder(out)
    assert isinstance(emb, Embedder) and emb.is_standin and emb.dim == 32
    pics = [render(o.scene) for o in sample_observations(seed=1, per_species=1)[:3]]
    x = emb.embed_images(pics)
    assert x.shape == (3, 32) and x.dtype == np.float32
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    t = emb.embed_texts(["red crest, blue wings", "blue crest, red wings", "red crest blue wings zzzqx"])
    assert t.shape == (3, 32)
    assert np.allclose(t[0], t[1], atol=1e-6) and np.allclose(t[0], t[2], atol=1e-6)  # a bag of concepts
    assert emb.count_tokens("one two three") == 3


def test_training_is_repeatable_for_a_seed(tiny, tmp_path):
    import torch

    out, _ = tiny
    train(tmp_path, TrainConfig(per_species=2, steps=3, batch=16, dim=32, width=8))
    a = torch.load(out / WEIGHTS_NAME, weights_only=True)
    b = torch.load(tmp_path / WEIGHTS_NAME, weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_long_text_is_truncated_not_rejected(tiny):
    emb = FieldGuideEmbedder(tiny[0])
    long = " ".join(["crest"] * 40 + ["belly"] * 10)
    assert emb.count_tokens(long) == 50 > emb.max_text_tokens
    assert np.allclose(emb.embed_texts([long])[0], emb.embed_texts(["crest"])[0], atol=1e-6)


def test_missing_weights_raise_backend_error_with_hint(tmp_path):
    with pytest.raises(BackendError) as err:
        FieldGuideEmbedder(tmp_path)
    assert "train_fieldguide_encoder" in err.value.hint


@pytest.mark.skipif(not HAVE_WEIGHTS, reason="committed field-guide weights not present")
def test_registry_builds_embedder_and_judge_from_committed_weights():
    from core.backends.registry import create_embedder, create_judge
    from core.config import Settings

    s = Settings()
    emb = create_embedder(s)
    assert emb.model_id.startswith("fieldguide-dual-encoder@") and emb.is_standin
    judge = create_judge(s, emb)
    assert isinstance(judge, Judge) and judge.model_id.startswith("fieldguide-judge@v2:") and judge.is_standin


@pytest.mark.skipif(not HAVE_WEIGHTS, reason="committed field-guide weights not present")
def test_judge_reads_attributes_from_pixels_better_than_chance():
    from fieldguide.judge import FieldGuideJudge
    from fieldguide.species import SPECIES

    judge = FieldGuideJudge(FieldGuideEmbedder())
    rng = random.Random(0)
    right = total = 0
    for o in sample_observations(seed=11, per_species=2):  # pictures the encoder never saw
        img = render(o.scene)
        other = rng.choice([s for s in SPECIES if s is not o.species])
        wrong_habitat = rng.choice([h for h in ("water", "grass", "sky", "bark", "sand") if h != o.scene.habitat])
        for question, truth in ((f"Is this a {o.species.common_name}?", True),
                                (f"Is this a {other.common_name}?", False),
                                (f"Is it photographed against {o.scene.habitat}?", True),
                                (f"Is it photographed against {wrong_habitat}?", False)):
            a = judge.ask(JudgeRequest(image=img, question=question))
            assert a.answer in ("yes", "no") and set(a.top_logprobs) == {"Yes", "No"}
            assert abs(np.exp(a.top_logprobs["Yes"]) + np.exp(a.top_logprobs["No"]) - 1) < 1e-6
            right += (a.answer == "yes") == truth
            total += 1
    assert right / total > 0.7


@pytest.mark.skipif(not HAVE_WEIGHTS, reason="committed field-guide weights not present")
def test_judge_does_not_check_words_none_of_its_heads_reads():
    """No guess from similarity any more: a question outside the judge's heads is not checked, and says why."""
    from fieldguide.judge import FieldGuideJudge

    judge = FieldGuideJudge(FieldGuideEmbedder())
    img = render(sample_observations(seed=2, per_species=1)[0].scene)
    a = judge.ask(JudgeRequest(image=img, question="Does it look content?"))
    assert a.abstained and a.answer == "not checked" and a.unchecked == ("content",) and not a.top_logprobs
    nothing = judge.ask(JudgeRequest(image=img, question="Is the whole organism clearly visible?"))
    assert nothing.abstained and "names nothing the photo checker reads" in nothing.reason


@pytest.mark.skipif(not HAVE_WEIGHTS, reason="committed field-guide weights not present")
def test_captioner_names_what_it_reads():
    from core.backends.base import Captioner
    from fieldguide.captioner import FieldGuideCaptioner

    cap = FieldGuideCaptioner.from_settings(None)
    assert isinstance(cap, Captioner) and cap.is_standin
    o = sample_observations(seed=5, per_species=1)[-1]  # a flower: easy to name
    note = cap.caption(render(o.scene))
    assert note.startswith("Read from the picture:")
    assert o.species.common_name in note or o.species.plan in note
