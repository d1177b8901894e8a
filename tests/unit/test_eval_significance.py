"""Paired significance tests: exact small cases and the marks used in tables."""
import pytest

from core.contracts.errors import InputError
from core.evaluation.significance import compare, mark, paired_t_test, randomization_test


def test_randomization_exact_small_case():
    # differences (1, 1, 1): of the 8 sign patterns only +++ and --- reach |sum| >= 3, so the exact
    # two-sided p is 2/8 = 0.25; with many seeded permutations the estimate is close to it.
    p = randomization_test([1, 1, 1], [0, 0, 0], n_permutations=20_000, seed=1)
    assert p == pytest.approx(0.25, abs=0.015)
    once = randomization_test([1, 1, 1], [0, 0, 0], 2000, seed=1)
    assert once == randomization_test([1, 1, 1], [0, 0, 0], 2000, seed=1)


def test_randomization_identical_and_clear_difference():
    assert randomization_test([0.3, 0.5], [0.3, 0.5]) == 1.0
    a = [0.9] * 30
    b = [0.1] * 30
    assert randomization_test(a, b, 5000) < 0.001  # 2 / 2^30 exactly; the estimate is bounded by 1/5001


def test_paired_t_by_hand():
    # a - b = (1, 2, 3): mean 2, sd 1, t = 2 / (1 / sqrt 3) = 3.4641 with 2 df -> two-sided p = 0.0742
    assert paired_t_test([2, 4, 6], [1, 2, 3]) == pytest.approx(0.0742, abs=1e-4)
    assert paired_t_test([1, 2], [1, 2]) == 1.0
    assert paired_t_test([2, 3], [1, 2]) == 0.0  # constant non-zero difference


def test_compare_aligns_dicts_and_rejects_mismatch():
    c = compare({"q1": 1.0, "q2": 0.5}, {"q2": 0.5, "q1": 0.0}, test="t")
    assert c["delta"] == pytest.approx(0.5)
    with pytest.raises(InputError, match="different queries"):
        compare({"q1": 1.0}, {"q2": 1.0})
    with pytest.raises(InputError, match="unknown significance test"):
        compare([1.0, 2.0], [1.0, 1.0], test="wilcoxon")


def test_marks():
    assert mark(0.001, 0.2) == "▲▲"
    assert mark(0.03, 0.2) == "▲"
    assert mark(0.03, -0.2) == "▼"
    assert mark(0.2, 0.2) == ""
