"""Dialogue metrics (PlugIR): Hits@K and Recall@K per round and BRI, checked by hand."""
import math

import pytest

from core.contracts.errors import InputError
from core.evaluation.dialogue import (
    best_ranks,
    bri,
    bri_per_round,
    bri_query,
    dialogue_summary,
    hits_per_round,
    recall_per_round,
)

# q1: ranks 50, 5, 30, 40 over rounds 0..3 -> best ranks pi = 50, 5, 5, 5
# q2: ranks 8, 1 (stopped after round 1) -> padded 8, 1, 1, 1 -> pi = 8, 1, 1, 1
RANKS = {"q1": [50, 5, 30, 40], "q2": [8, 1]}


def test_best_ranks():
    assert best_ranks([50, 5, 30, 40]) == [50, 5, 5, 5]


def test_hits_use_best_rank_so_far_recall_uses_current_rank():
    # Hits@10: q1 pi <= 10 at rounds 1..3; q2 always -> [1/2, 1, 1, 1]
    assert hits_per_round(RANKS, 10) == [0.5, 1.0, 1.0, 1.0]
    # Recall@10: q1 raw rank <= 10 only at round 1; q2 always -> [1/2, 1, 1/2, 1/2]
    assert recall_per_round(RANKS, 10) == [0.5, 1.0, 0.5, 0.5]


def test_bri_by_hand():
    # T = 3. q1: (1/6)(ln 50 + ln 5) + (1/3)(ln 5 + ln 5) = (3.912023 + 1.609438)/6 + 3.218876/3
    #          = 0.920244 + 1.072959 = 1.993202
    q1 = (math.log(50) + math.log(5)) / 6 + (math.log(5) + math.log(5)) / 3
    assert q1 == pytest.approx(1.993202, abs=1e-6)
    assert bri_query([50, 5, 30, 40]) == pytest.approx(q1)
    # q2 padded: (1/6)(ln 8 + ln 1) + (1/3)(ln 1 + ln 1) = 2.079442 / 6 = 0.346574
    q2 = math.log(8) / 6
    assert bri(RANKS) == pytest.approx((q1 + q2) / 2)  # 1.169888
    assert bri(RANKS) == pytest.approx(1.169888, abs=1e-6)


def test_bri_round_zero_only_and_curve():
    assert bri_query([20]) == pytest.approx(math.log(20))  # T = 0: ln pi_0
    curve = bri_per_round({"q": [4, 2, 1]})
    # t=0: ln 4; t=1: (1/2)(ln 4 + ln 2); t=2: (1/4)(ln 4 + ln 1) + (1/2) ln 2
    assert curve == pytest.approx([math.log(4), (math.log(4) + math.log(2)) / 2,
                                   math.log(4) / 4 + math.log(2) / 2])


def test_summary_and_errors():
    s = dialogue_summary(RANKS, ks=(10,))
    assert s["rounds"] == 4 and s["queries"] == 2 and s["hits@10"] == [0.5, 1.0, 1.0, 1.0]
    assert s["per_query"]["q2"]["ranks"] == [8, 1, 1, 1]
    with pytest.raises(InputError):
        bri({"q": [0, 3]})  # ranks are 1-based
    with pytest.raises(InputError):
        hits_per_round({}, 10)
