"""RRF, confidence, Pareto, Rocchio and PlugIR's retrieval-context arithmetic on data with known answers."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from core.methods.confidence import p_yes
from core.methods.feedback import rocchio
from core.methods.pareto import alpha_grid_front, beta_max, dominates, grid_steps, pareto_front, uncovered
from core.methods.retrieval_context import candidate_count, caption_entropies, cluster, kl_select, representatives
from core.methods.rrf import rrf


# ---- RRF ----------------------------------------------------------------------------------------------------
def test_rrf_scores_and_order():
    fused = rrf([[1, 2, 3], [2, 1, 4]], lam=1.0)
    scores = dict(fused)
    assert scores[1] == pytest.approx(1 / 2 + 1 / 3) and scores[2] == pytest.approx(1 / 3 + 1 / 2)
    assert scores[3] == pytest.approx(1 / 4) and scores[4] == pytest.approx(1 / 4)
    # 1 and 2 tie on score and best rank (1) -> smaller id first; 3 and 4 tie, both best rank 3 -> id
    assert [i for i, _ in fused] == [1, 2, 3, 4]


def test_rrf_tie_broken_by_best_single_rank_before_id():
    # 9: ranks 2 and 2 -> 2/3 ; 5: ranks 1 and 5 -> 1/2 + 1/6 = 2/3 : same score, 5 has the better best rank
    fused = rrf([[5, 9, 1, 2, 3], [1, 9, 2, 3, 5]], lam=1.0)
    order = [i for i, _ in fused]
    assert dict(fused)[5] == pytest.approx(dict(fused)[9])
    assert order.index(5) < order.index(9)
    fused2 = rrf([[9, 5], [5, 9]])
    assert [i for i, _ in fused2] == [5, 9]  # equal score, equal best rank -> smaller id


def test_rrf_lambda_and_single_list_keeps_order():
    assert [i for i, _ in rrf([[7, 3, 5]], lam=60)] == [7, 3, 5]
    assert dict(rrf([[7]], lam=60))[7] == pytest.approx(1 / 61)


# ---- confidence ---------------------------------------------------------------------------------------------
def test_confidence_both_present():
    assert p_yes({"Yes": math.log(0.6), "No": math.log(0.2)}) == pytest.approx(0.75)


def test_confidence_yes_only_no_only_neither():
    assert p_yes({"Yes": -0.1, "Maybe": -3}) == 1.0
    assert p_yes({"No": -0.1, "Maybe": -3}) == 0.0
    assert p_yes({"Maybe": -0.1}) == 0.0
    assert p_yes({}) == 0.0


def test_confidence_merges_case_and_whitespace_variants():
    top = {"Yes": math.log(0.3), " yes": math.log(0.1), "YES": math.log(0.1), "No": math.log(0.25),
           "no\n": math.log(0.25)}
    assert p_yes(top) == pytest.approx(0.5)


# ---- Pareto -------------------------------------------------------------------------------------------------
def brute_force_front(sat: np.ndarray, dense: np.ndarray) -> set[int]:
    out = set()
    for i in range(len(sat)):
        if not sat[i].any():
            continue
        if any(dominates(sat[j], sat[i]) for j in range(len(sat)) if sat[j].any()):
            continue
        same = [j for j in range(len(sat)) if np.array_equal(sat[j], sat[i])]
        best = max(same, key=lambda j: (dense[j], -j))
        if best == i:
            out.add(i)
    return out


@pytest.mark.parametrize("seed", range(25))
def test_pareto_equals_brute_force_on_random_instances(seed):
    rng = np.random.default_rng(seed)
    n_img, n_sub = int(rng.integers(1, 30)), int(rng.integers(1, 6))
    sat = (rng.random((n_img, n_sub)) < rng.uniform(0.1, 0.7)).astype(np.int8)
    dense = np.round(rng.random(n_img), 2)  # rounding creates dense ties
    assert set(pareto_front(sat, dense)) == brute_force_front(sat, dense)


@pytest.mark.parametrize("seed", range(25))
def test_alpha_grid_equals_the_pareto_set_below_beta_max(seed):
    """Theorem 3.2: for 0 < beta < beta_max the union of the grid's argmaxes is the Pareto set."""
    rng = np.random.default_rng(100 + seed)
    n_img, n_sub = int(rng.integers(1, 40)), int(rng.integers(1, 6))
    sat = (rng.random((n_img, n_sub)) < rng.uniform(0.1, 0.7)).astype(np.int8)
    dense = np.round(rng.uniform(-0.2, 0.6, n_img), 2)
    bound = beta_max(n_sub, dense)
    for beta in (bound * 0.01, bound * 0.99):
        assert alpha_grid_front(sat, dense, beta) == pareto_front(sat, dense), (seed, beta)


def test_alpha_grid_above_beta_max_lets_the_dense_score_outweigh_a_part():
    # row 1 covers both parts; row 0 covers one with a far better dense score; row 2 covers the other
    sat = np.array([[1, 0], [1, 1], [0, 1]])
    dense = np.array([0.9, 0.1, 0.1])
    assert pareto_front(sat, dense) == [1] and grid_steps(2) == 3
    assert alpha_grid_front(sat, dense, beta_max(2, dense) / 2) == [1]
    assert alpha_grid_front(sat, dense, 10.0) == [0]  # beta far too large: the dense term decides alone


def test_pareto_known_example_and_uncovered():
    sat = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 0], [1, 1, 0], [0, 0, 0]])
    dense = np.array([0.9, 0.2, 0.99, 0.5, 0.1])
    assert pareto_front(sat, dense) == [3]  # dominates row 0; beats row 1 on dense; rows 2, 4 not candidates
    assert uncovered(sat) == [2]
    sat2 = np.array([[1, 0], [0, 1]])
    assert pareto_front(sat2, np.array([0.1, 0.3])) == [1, 0]


# ---- Rocchio ------------------------------------------------------------------------------------------------
def test_rocchio_moves_towards_relevant_and_away_from_nonrelevant():
    q = np.array([1.0, 0.0, 0.0], np.float32)
    rel = np.array([[0.0, 1.0, 0.0]], np.float32)
    non = np.array([[0.0, 0.0, 1.0]], np.float32)
    out = rocchio(q, rel, non, alpha=1.0, beta=0.75, gamma=0.15)
    expected = np.array([1.0, 0.75, -0.15])
    assert np.allclose(out, expected / np.linalg.norm(expected), atol=1e-6)
    assert np.linalg.norm(out) == pytest.approx(1.0)
    assert out @ rel[0] > q @ rel[0] and out @ non[0] < q @ non[0]
    assert np.allclose(rocchio(q, None, None), q)


# ---- PlugIR arithmetic --------------------------------------------------------------------------------------
def test_lowest_entropy_representative_per_cluster():
    # captions 0,1,2 (cluster 0) and 3,4 (cluster 1); caption 1 points at one image only -> lowest entropy
    sim = np.array([[0.5, 0.5, 0.5, 0.5, 0.5],
                    [0.0, 0.9, 0.0, 0.0, 0.0],
                    [0.3, 0.3, 0.0, 0.0, 0.0],
                    [0.2, 0.2, 0.2, 0.2, 0.2],
                    [0.0, 0.0, 0.0, 0.8, 0.1]])
    h = caption_entropies(sim, scale=10.0)
    assert h[0] == pytest.approx(math.log(5)) and h[3] == pytest.approx(math.log(5))
    assert h[1] < h[2] < h[0]
    labels = np.array([0, 0, 0, 1, 1])
    assert representatives(h, labels) == [1, 4]
    assert representatives(np.array([1.0, 1.0, 2.0]), np.array([5, 5, 2])) == [0, 2]  # tie -> earlier


def test_kl_choice_prefers_question_that_keeps_the_distribution():
    images = np.eye(3)
    caption = np.array([1.0, 0.0, 0.0])
    questions = np.array([[0.0, 1.0, 0.0],   # moves all mass to image 1: large KL
                          [0.9, 0.1, 0.0],   # close to the caption: small KL
                          [0.0, 0.0, 1.0]])
    best, kls = kl_select(caption, questions, images, scale=5.0)
    assert best == 1 and kls[1] < kls[0] and kls[1] < kls[2]
    assert kl_select(caption, np.array([caption]), images)[1][0] == pytest.approx(0.0, abs=1e-12)


def test_cluster_is_seeded_and_separates_obvious_groups():
    rng = np.random.default_rng(0)
    a = rng.normal([1, 0, 0], 0.01, (10, 3))
    b = rng.normal([0, 1, 0], 0.01, (10, 3))
    x = np.vstack([a, b]).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    labels = cluster(x, 2, seed=0)
    assert len(set(labels[:10])) == 1 and len(set(labels[10:])) == 1 and labels[0] != labels[10]
    assert np.array_equal(labels, cluster(x, 2, seed=0))
    assert list(cluster(x[:3], 10)) == [0, 1, 2]


def test_candidate_schedule_is_a_share_of_the_pool_with_a_floor_and_shrinks():
    counts = [candidate_count(t, 50_000) for t in range(12)]  # about 1% of 50k: the paper's 500, 450, ..., 50
    assert counts[:3] == [500, 450, 400] and counts[9] == 50 and counts[11] == 50
    assert all(a >= b for a, b in itertools.pairwise(counts))
    assert candidate_count(0, 120) == 50 and candidate_count(3, 120) == 50  # the floor, on a small pool
    assert candidate_count(0, 30) == 30  # never more than the pool
    assert candidate_count(0, 10_000_000) == 500 and candidate_count(0, 10_000_000, cap=2000) == 2000
    assert [candidate_count(t, 20_000, share=0.01, floor=20) for t in (0, 1, 9, 10)] == [200, 180, 20, 20]
