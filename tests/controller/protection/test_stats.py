"""The monitors' null distributions against values computed independently."""

from __future__ import annotations

import math
from collections import Counter
from itertools import permutations

import pytest

from controller.games.poker import PokerCategory
from controller.protection.stats import (
    CATEGORY_COUNTS,
    category_counts,
    chi_square_critical,
    descents,
    eulerian_moments,
    rising_sequences,
    valley_moments,
    valley_pmf,
    valleys,
)


@pytest.mark.parametrize("n", range(1, 9))
def test_valley_distribution_matches_enumeration(n: int) -> None:
    """The recursion gives exactly the valley counts of all n! permutations."""
    counted = Counter(valleys(list(p)) for p in permutations(range(n)))
    pmf = valley_pmf(n)
    assert [round(p * math.factorial(n)) for p in pmf] == [counted[k] for k in range(len(pmf))]


def test_valley_moments_for_a_full_deck() -> None:
    """The issue's figures: a random 52-card deck has (52-2)/3 = 16.67 valleys, sd about 1.54;
    the exact pmf agrees with the closed forms."""
    mean, sd = valley_moments(52)
    assert mean == pytest.approx(16.667, abs=1e-3) and sd == pytest.approx(1.54, abs=0.01)
    pmf = valley_pmf(52)
    exact_mean = sum(k * p for k, p in enumerate(pmf))
    exact_var = sum(k * k * p for k, p in enumerate(pmf)) - exact_mean ** 2
    assert exact_mean == pytest.approx(mean) and math.sqrt(exact_var) == pytest.approx(sd)


def test_descents_and_rising_sequences_are_eulerian() -> None:
    """Over all permutations of 7: descents and (rising sequences - 1) have the same Eulerian
    mean and variance as the closed forms the sortedness score uses."""
    perms = [list(p) for p in permutations(range(7))]
    for stat in (descents, lambda p: rising_sequences(p) - 1):
        values = [stat(p) for p in perms]
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        assert (mean, sd) == pytest.approx(eulerian_moments(7))
    assert rising_sequences([0, 1, 2, 3]) == 1 and rising_sequences([3, 2, 1, 0]) == 4


def test_three_card_category_counts() -> None:
    """Every one of the 22,100 hands evaluated: 48 straight flushes, 52 trips, 720 straights,
    1,096 flushes, 3,744 pairs, 16,440 high cards."""
    assert category_counts() == CATEGORY_COUNTS
    assert CATEGORY_COUNTS[PokerCategory.FLUSH] == 1096 and sum(CATEGORY_COUNTS.values()) == 22100


@pytest.mark.parametrize(("df", "alpha"), [(2, 0.005), (5, 0.04), (918, 0.052), (51, 1e-4)])
def test_chi_square_critical_against_scipy(df: int, alpha: float) -> None:
    """The Wilson-Hilferty critical values used on the Pi are within 1.5% of scipy's."""
    stats = pytest.importorskip("scipy.stats")
    assert chi_square_critical(df, alpha) == pytest.approx(stats.chi2.isf(alpha, df), rel=0.015)


def test_eulerian_rows_and_the_calibrated_descent_score() -> None:
    """A(4, k) = 1, 11, 11, 1 (permutations of 4 with k descents); the mid-p normal score of
    the descents falls as the count rises, is 0 at the median of a symmetric row, and under the
    exact distribution has mean 0 and variance close to 1 at every table size (what keeps the
    CUSUM's false-alarm rate the same for 9 cards as for 21)."""
    from controller.protection.stats import _eulerian_row, descent_z

    assert _eulerian_row(4) == (1, 11, 11, 1)
    assert sum(_eulerian_row(9)) == 362880
    scores = [descent_z(18, d) for d in range(18)]
    assert scores == sorted(scores, reverse=True)
    assert abs(descent_z(5, 2)) < 1e-12
    for n in (9, 12, 18, 21):
        row = _eulerian_row(n)
        total = sum(row)
        mean = sum(w * descent_z(n, d) for d, w in enumerate(row)) / total
        var = sum(w * (descent_z(n, d) - mean) ** 2 for d, w in enumerate(row)) / total
        assert abs(mean) < 0.01 and 0.8 < var < 1.01, (n, mean, var)  # mid-p: at most 1


def test_valley_score_is_calibrated_at_every_table_size() -> None:
    """The one-pass monitor's score: falls as valleys rise, and under the exact valley
    distribution has mean close to 0 and variance at most 1 at every number of cards a table
    deals (the plain z-score's false alarms varied with it: 2.5e-4 per deck at 27 cards)."""
    from controller.protection.stats import valley_z

    scores = [valley_z(21, v) for v in range(10)]
    assert scores == sorted(scores, reverse=True)
    for n in (9, 12, 15, 18, 21, 24, 27):
        pmf = valley_pmf(n)
        mean = sum(p * valley_z(n, v) for v, p in enumerate(pmf))
        var = sum(p * (valley_z(n, v) - mean) ** 2 for v, p in enumerate(pmf))
        assert abs(mean) < 0.05 and 0.65 < var <= 1.0, (n, mean, var)  # 9 cards: 4 values
        # a tail the normal would call 1 in 1,000 is at most twice as likely here (mid-p)
        assert sum(p for v, p in enumerate(pmf) if valley_z(n, v) >= 3.09) <= 2e-3, n
