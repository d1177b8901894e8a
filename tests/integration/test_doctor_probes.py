"""`doctor` on real backends that answer but cannot be used: an open_clip checkpoint of random weights (loaded
as a trained one, so it is not labelled a stand-in) fails the colour probe with the reason and the fix, for
every random start; the demo world's judge and encoder pass their probes."""
from __future__ import annotations

import json

import pytest

from core.backends import registry
from core.config import Settings
from core.doctor import PASS_MATCHES, probe
from tests.integration.test_real_backends import TINY_CLIP


class _Bundle:
    """What `probe` needs of the registry: the settings and the backend by kind."""

    def __init__(self, settings: Settings, **backends):
        self.settings = settings
        self.__dict__.update(backends)


@pytest.fixture(scope="module")
def tiny_arch(tmp_path_factory) -> str:
    open_clip = pytest.importorskip("open_clip")
    folder = tmp_path_factory.mktemp("clip_cfg")
    (folder / "EcoDoctorTiny-ViT.json").write_text(json.dumps(TINY_CLIP))
    open_clip.add_model_config(folder / "EcoDoctorTiny-ViT.json")
    return "EcoDoctorTiny-ViT"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_random_weight_open_clip_checkpoint_is_not_usable(tiny_arch, tmp_path, seed):
    import open_clip
    import torch

    torch.manual_seed(seed)
    model = open_clip.create_model(tiny_arch, pretrained=None)
    ckpt = tmp_path / f"random-{seed}.pt"
    torch.save(model.state_dict(), ckpt)
    spec = f"open_clip:{tiny_arch}@{ckpt}"
    settings = Settings(embedder=spec, device="cpu", dtype="auto", batch_size=4)
    embedder = registry.create_embedder(settings)
    assert not embedder.is_standin  # a checkpoint file is taken for trained weights: only the probe can tell
    row = probe(_Bundle(settings, embedder=embedder), "embedder")
    assert not row.ok, row.detail
    assert row.detail.startswith("not usable") and "random weights" in row.detail
    matched = int(row.detail.split("text: ")[1].split("/")[0])
    assert matched < PASS_MATCHES and "open_clip:ARCH/TAG" in row.fix


def test_the_demo_worlds_encoder_and_judge_pass_their_probes():
    from fieldguide.encoder import ASSET_DIR

    if not (ASSET_DIR / "encoder.pt").exists():
        pytest.skip("committed field-guide weights not present")
    settings = Settings(embedder="fieldguide", judge="fieldguide")
    embedder = registry.create_embedder(settings)
    from fieldguide.judge import FieldGuideJudge

    rows = [probe(_Bundle(settings, embedder=embedder), "embedder"),
            probe(_Bundle(settings, judge=FieldGuideJudge(embedder)), "judge")]
    assert all(r.ok for r in rows), [r.detail for r in rows]
    assert "crest" in rows[1].detail
