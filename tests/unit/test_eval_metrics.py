"""Every metric against values worked out by hand from its definition (methods.md section 6)."""
import math

import pytest

from core.contracts.errors import InputError
from core.evaluation.metrics import (
    ap_at_k,
    hit_at_k,
    mean_metrics,
    mrr,
    ndcg_at_k,
    ndcg_visret_at_k,
    parse_metric,
    parse_metrics,
    recall_at_k,
    score_rankings,
    score_with_ranx,
)

# One query used throughout: five retrieved keys; b and d relevant; f relevant but never retrieved;
# a judged not relevant. So the pool holds N_pos = 3 positives.
RANKING = ["a", "b", "c", "d", "e"]
REL = {"a": 0, "b": 1, "d": 1, "f": 1}
L2_3 = 1 / math.log2(3)  # 0.630930  discount at position 2
L2_5 = 1 / math.log2(5)  # 0.430677  discount at position 4
L2_6 = 1 / math.log2(6)  # 0.386853  discount at position 5


def test_hit_at_k_is_any_relevant_in_top_k():
    assert hit_at_k(RANKING, REL, 1) == 0.0  # a is not relevant
    assert hit_at_k(RANKING, REL, 2) == 1.0  # b at position 2


def test_true_recall_divides_by_all_relevant():
    assert recall_at_k(RANKING, REL, 2) == pytest.approx(1 / 3)  # b of {b, d, f}
    assert recall_at_k(RANKING, REL, 5) == pytest.approx(2 / 3)  # b, d of {b, d, f}


def test_standard_ndcg_uses_pool_positives_for_the_ideal():
    # DCG = 1/log2(3) + 1/log2(5) = 0.630930 + 0.430677 = 1.061606
    # IDCG (3 positives in the pool) = 1 + 1/log2(3) + 1/log2(4) = 1 + 0.630930 + 0.5 = 2.130930
    # nDCG = 1.061606 / 2.130930 = 0.498190
    assert ndcg_at_k(RANKING, REL, 5) == pytest.approx(0.498190, abs=1e-6)
    assert ndcg_at_k(RANKING, REL, 5) == pytest.approx((L2_3 + L2_5) / (1 + L2_3 + 0.5))


def test_standard_ndcg_graded_gain_is_rel_over_log2():
    # ranking [x, y] with rel x=1, y=2: DCG = 1/1 + 2/log2(3) = 2.261860; IDCG = 2/1 + 1/log2(3) = 2.630930
    assert ndcg_at_k(["x", "y"], {"x": 1, "y": 2}, 2) == pytest.approx((1 + 2 * L2_3) / (2 + L2_3))


def test_mrr_is_reciprocal_rank_of_first_relevant():
    assert mrr(RANKING, REL) == pytest.approx(0.5)  # first relevant (b) at rank 2
    assert mrr(["a", "c"], REL) == 0.0


def test_inquire_ap_divides_by_min_npos_k():
    # relevant at positions 2 and 4: precision@2 = 1/2, precision@4 = 2/4; sum = 1.0
    # AP@5 = 1.0 / min(N_pos=3, 5) = 1/3
    assert ap_at_k(RANKING, REL, 5) == pytest.approx(1 / 3)
    # AP@2: only position 2 counts: 1/2; denominator min(3, 2) = 2 -> 0.25
    # (ranx's map@2 would divide by 3 and give 0.1667: the definitions differ here)
    assert ap_at_k(RANKING, REL, 2) == pytest.approx(0.25)


def test_inquire_ap_npos_counts_positives_among_candidates():
    # rerank task: 100 candidates of which 4 are positive; only 2 in the top 3 (positions 1 and 3):
    # precision@1 = 1, precision@3 = 2/3; sum = 5/3; AP@100 = (5/3) / min(4, 100) = 0.416667
    ranking = ["p1", "n1", "p2"] + [f"n{i}" for i in range(2, 99)]
    rel = {"p1": 1, "p2": 1, "p3": 1, "p4": 1}
    assert ap_at_k(ranking, rel, 100) == pytest.approx((1 + 2 / 3) / 4)
    # an explicit N_pos overrides the count in `rel`: (5/3) / min(10, 100) = 0.166667
    assert ap_at_k(ranking, rel, 100, n_pos=10) == pytest.approx((5 / 3) / 10)
    assert ap_at_k(ranking, {}, 100) == 0.0  # no positives at all


def test_visret_ndcg_tie_averaging_two_hits():
    # top-5 labels L = [0,1,0,1,0]; ideal (y_true) = sorted(L) = [1,1,0,0,0]; scores (y_score) = L.
    # tie group score 1 = indices {1,3}: y_true values 1 and 0 -> mean gain 1/2 over positions 1-2:
    #   0.5 * (1 + 0.630930) = 0.815465
    # tie group score 0 = indices {0,2,4}: y_true values 1,0,0 -> mean gain 1/3 over positions 3-5:
    #   (1/3) * (0.5 + 0.430677 + 0.386853) = 0.439177
    # DCG = 1.254642; IDCG = 1 + 0.630930 = 1.630930; nDCG = 0.769280
    expected = (0.5 * (1 + L2_3) + (1 / 3) * (0.5 + L2_5 + L2_6)) / (1 + L2_3)
    assert expected == pytest.approx(0.769280, abs=1e-6)
    assert ndcg_visret_at_k(RANKING, REL, 5) == pytest.approx(expected)


def test_visret_ndcg_single_target_matches_paper_example():
    # COCO example in the VisRet paper: one target at rank 3 or 4 of the top 10 -> nDCG@10 0.3937.
    # y_true = [1,0,...,0]; the one scored item sits at position 1 with y_true 0; the 9 tied zeros at
    # positions 2..10 share y_true's single 1: DCG = (1/9) * sum_{p=2}^{10} 1/log2(p+1) = 0.393729; IDCG = 1.
    disc = sum(1 / math.log2(p + 1) for p in range(2, 11))  # 3.543558
    for rank in (3, 4):
        ranking = [f"n{i}" for i in range(1, 11)]
        ranking[rank - 1] = "t"
        assert ndcg_visret_at_k(ranking, {"t": 1}, 10) == pytest.approx(disc / 9)
        assert ndcg_visret_at_k(ranking, {"t": 1}, 10) == pytest.approx(0.3937, abs=1e-4)
    assert ndcg_visret_at_k(["t"] + [f"n{i}" for i in range(9)], {"t": 1}, 10) == 1.0  # rank 1


def test_visret_ndcg_zero_without_hit_and_hit_at_1_for_k1():
    assert ndcg_visret_at_k(["a", "c", "e"], REL, 3) == 0.0
    assert ndcg_visret_at_k(RANKING, REL, 1) == 0.0  # = hit@1
    assert ndcg_visret_at_k(["b", "a"], REL, 1) == 1.0
    # all of the top k relevant: DCG = IDCG -> 1 (the ideal comes from the retrieved labels, not the pool)
    assert ndcg_visret_at_k(["b", "d"], REL, 2) == 1.0


def test_duplicate_keys_count_once():
    # a repeated key keeps its first position: [b, b, d] -> [b, d]; AP@3 = (1 + 1) / min(3, 3) = 2/3
    assert ap_at_k(["b", "b", "d"], REL, 3) == pytest.approx(2 / 3)


def test_score_rankings_batch_matches_single_functions_and_handles_empty():
    qrels = {"q1": REL, "q2": {"x": 1}, "q3": {"y": 0}}
    runs = {"q1": RANKING, "q2": ["z", "x"]}  # q2: x at rank 2; q3 has no positives; no run for q3
    names = ["hit@1", "recall@5", "ndcg@5", "ndcg_visret@5", "ap@5", "mrr"]
    out = score_rankings(runs, qrels, names)
    assert list(out) == ["q1", "q2", "q3"] and list(out["q1"]) == names
    assert out["q1"]["ndcg@5"] == pytest.approx((L2_3 + L2_5) / (1 + L2_3 + 0.5))
    assert out["q1"]["ap@5"] == pytest.approx(1 / 3)
    # q2: ndcg = (1/log2 3) / 1; mrr = 1/2; ap@5 = (1/2) / min(1, 5) = 0.5; visret [0,1] -> 0.630930
    assert out["q2"]["ndcg@5"] == pytest.approx(L2_3)
    assert out["q2"]["mrr"] == pytest.approx(0.5)
    assert out["q2"]["ap@5"] == pytest.approx(0.5)
    assert out["q2"]["ndcg_visret@5"] == pytest.approx(L2_3)
    assert all(v == 0.0 for v in out["q3"].values())
    means = mean_metrics(out)
    assert means["mrr"] == pytest.approx((0.5 + 0.5 + 0) / 3)


def test_ranx_cross_check_on_several_queries():
    # ranx is called once for many queries; each value must equal the hand value for its query
    qrels = {"q1": {"a": 1}, "q2": {"a": 1, "b": 1}, "q3": {"c": 1}}
    runs = {"q1": ["a", "x"], "q2": ["x", "b", "a"], "q3": ["x", "y"]}
    out = score_with_ranx(runs, qrels, ["ndcg@3", "recall@2", "hit@2", "mrr"])
    assert out["q1"] == pytest.approx({"ndcg@3": 1.0, "recall@2": 1.0, "hit@2": 1.0, "mrr": 1.0})
    # q2: DCG = 1/log2 3 + 1/log2 4 = 1.130930; IDCG = 1 + 1/log2 3 = 1.630930 -> 0.693426
    assert out["q2"]["ndcg@3"] == pytest.approx((L2_3 + 0.5) / (1 + L2_3))
    assert out["q2"]["recall@2"] == pytest.approx(0.5) and out["q2"]["mrr"] == pytest.approx(0.5)
    assert out["q3"] == pytest.approx({"ndcg@3": 0.0, "recall@2": 0.0, "hit@2": 0.0, "mrr": 0.0})


def test_metric_names():
    assert parse_metric("NDCG@10") == ("ndcg", 10)
    assert parse_metric("mrr") == ("mrr", None)
    assert parse_metrics("ndcg@10, ap@100,ndcg@10") == ["ndcg@10", "ap@100"]
    for bad in ("map@10", "ndcg", "hit@0", "ndcg@x"):
        with pytest.raises(InputError):
            parse_metric(bad)


# ---- ties: INQUIRE's scikit-learn scorers (a run of equal scores is one threshold / shares its mean gain) ------
TIED = ["a", "b", "c", "d"]
TIED_SCORES = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}


def test_ap_with_tied_scores_counts_the_run_as_one_threshold():
    rel = {"b": 1, "d": 1}
    # thresholds 3, 2 (b and c together), 1: precision 0 at a; 1/3 at the end of {b, c}; 2/4 at d
    # sklearn AP = 0.5 * 1/3 + 0.5 * 2/4 = 0.416667; times hits in top k (2) / min(N_pos, k) (2)
    assert ap_at_k(TIED, rel, 4, scores=TIED_SCORES) == pytest.approx(0.5 * (1 / 3) + 0.5 * 0.5)
    assert ap_at_k(TIED, rel, 4) == pytest.approx((1 / 2 + 2 / 4) / 2)  # without scores: b at rank 2
    distinct = {"a": 3.0, "b": 2.5, "c": 2.0, "d": 1.0}
    assert ap_at_k(TIED, rel, 4, scores=distinct) == ap_at_k(TIED, rel, 4)


def test_ndcg_with_tied_scores_shares_the_mean_gain():
    from core.evaluation.metrics import ndcg_tied_at_k, tie_groups

    rel = {"b": 1, "d": 1, "f": 1}
    assert tie_groups(TIED, TIED_SCORES) == [(0, 1), (1, 3), (3, 4)]
    # {b, c} share gain 0.5 at positions 2 and 3; d at 4; ideal from the three positives of the pool
    dcg = 0.5 * (1 / math.log2(3) + 1 / math.log2(4)) + 1 / math.log2(5)
    assert ndcg_tied_at_k(TIED, rel, 4, TIED_SCORES) == pytest.approx(dcg / (1 + 1 / math.log2(3) + 0.5))
    out = score_rankings({"q": TIED}, {"q": rel}, ["ndcg@4", "ap@4", "hit@1"], scores={"q": TIED_SCORES})
    assert out["q"]["ndcg@4"] == pytest.approx(dcg / (1 + 1 / math.log2(3) + 0.5))
    assert out["q"]["ap@4"] == pytest.approx(ap_at_k(TIED, rel, 4, scores=TIED_SCORES))
    plain = score_rankings({"q": TIED}, {"q": rel}, ["ndcg@4"], scores={"q": {"a": 3, "b": 2.5, "c": 2, "d": 1}})
    assert plain["q"]["ndcg@4"] == pytest.approx(ndcg_at_k(TIED, rel, 4))  # no ties: ranx's value
