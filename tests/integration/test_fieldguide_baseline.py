"""Baseline retrieval with the committed field-guide encoder beats a random ranking on a small world."""
from __future__ import annotations

import pytest

from fieldguide.encoder import ASSET_DIR, CONFIG_NAME, WEIGHTS_NAME, FieldGuideEmbedder
from fieldguide.evaluate import evaluate_baseline, ndcg_at_k, random_ndcg_at_k
from fieldguide.world import build_world


def test_ndcg_definitions():
    assert ndcg_at_k([1, 1, 0], 2, 10) == pytest.approx(1.0)
    assert ndcg_at_k([0, 1], 1, 10) == pytest.approx(1 / 1.5849625, rel=1e-6)
    assert ndcg_at_k([0, 0], 0, 10) == 0.0
    assert random_ndcg_at_k(10, 10, 10) == pytest.approx(1.0)


@pytest.mark.skipif(not (ASSET_DIR / WEIGHTS_NAME).exists() or not (ASSET_DIR / CONFIG_NAME).exists(),
                    reason="committed field-guide weights not present")
def test_baseline_beats_random_on_small_world(tmp_path):
    build_world(tmp_path, seed=0, per_species=10)
    report = evaluate_baseline(tmp_path, FieldGuideEmbedder())
    whole = report["whole_world"]["all"]
    assert whole["baseline"] >= 2 * whole["random"]
    assert report["benchmark_pools"]["all"]["baseline"] > report["benchmark_pools"]["all"]["random"]
