"""Exact null distributions the monitors compare against, in plain Python (no numpy on the Pi).

Under a fair shuffle the cards dispensed after a shuffle are the first ``d`` cards of a uniformly
random order, so the *pattern* of their pack indices is a uniformly random permutation of ``d``:
its valleys, descents and rising sequences have the classical distributions below, whatever
``d`` is and whichever cards came out. The hand categories of a complete three-card set follow
the exact counts of the 22,100 three-card hands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from itertools import combinations
from statistics import NormalDist

from controller.games.cards import FULL_DECK
from controller.games.poker import PokerCategory, evaluate

CATEGORY_COUNTS: dict[PokerCategory, int] = {
    PokerCategory.STRAIGHT_FLUSH: 48,
    PokerCategory.THREE_OF_A_KIND: 52,
    PokerCategory.STRAIGHT: 720,
    PokerCategory.FLUSH: 1096,
    PokerCategory.PAIR: 3744,
    PokerCategory.HIGH_CARD: 16440,
}
"""The 22,100 three-card hands by class (RWS-3CP 3.5.2 classes), as the issue states them;
:func:`category_counts` recomputes them from the evaluator (a test checks both agree)."""
HANDS = 22_100


def category_counts() -> dict[PokerCategory, int]:
    """Every three-card hand of one deck evaluated: the independent check of
    :data:`CATEGORY_COUNTS`."""
    counts = dict.fromkeys(PokerCategory, 0)
    for hand in combinations(FULL_DECK, 3):
        counts[evaluate(hand).category] += 1
    return counts


@cache
def valley_pmf(n: int) -> tuple[float, ...]:
    """P(a uniformly random permutation of ``n`` has ``v`` valleys), v = 0, 1, ...

    A valley is an interior position lower than both neighbours. Counts by inserting the
    smallest new element into a permutation of ``m - 1``: in one of the ``2k + 2`` slots beside
    a valley or at an end the valley count stays, elsewhere it grows by one, so
    C(m, k) = (2k + 2) C(m-1, k) + (m - 2k) C(m-1, k-1); divided by m!. Checked against
    enumeration for small ``n`` in the tests.
    """
    if n < 1:
        return (1.0,)
    counts: list[int] = [1]  # n = 1: no interior position
    for m in range(2, n + 1):
        new = [0] * (m // 2 + 1)
        for k, c in enumerate(counts):
            if not c:
                continue
            new[k] += (2 * k + 2) * c
            if k + 1 < len(new):
                new[k + 1] += (m - 2 * (k + 1)) * c
        counts = new
    total = math.factorial(n)
    return tuple(c / total for c in counts)


def valley_moments(n: int) -> tuple[float, float]:
    """Mean and standard deviation of the valley count (mean (n-2)/3, var 2(n+1)/45, n >= 3)."""
    if n < 3:
        return 0.0, 1.0
    return (n - 2) / 3, math.sqrt(2 * (n + 1) / 45)


def eulerian_moments(n: int) -> tuple[float, float]:
    """Mean and sd of the descents of a random permutation of ``n`` ((n-1)/2, (n+1)/12)."""
    if n < 2:
        return 0.0, 1.0
    return (n - 1) / 2, math.sqrt((n + 1) / 12)


@cache
def _eulerian_row(n: int) -> tuple[int, ...]:
    """Eulerian numbers A(n, k), k = 0..n-1: permutations of ``n`` with ``k`` descents."""
    row = (1,)
    for m in range(2, n + 1):
        row = tuple((k + 1) * (row[k] if k < len(row) else 0)
                    + (m - k) * (row[k - 1] if 0 < k <= len(row) else 0) for k in range(m))
    return row


def _lower_tail_z(weights: Sequence[float], k: int) -> float:
    """The mid-p lower tail of ``k`` under the exact distribution ``weights`` (counts or
    probabilities of 0, 1, ...), as a standard normal score: large when ``k`` is improbably
    small."""
    total = sum(weights)
    below = sum(weights[:max(k, 0)])
    at = weights[k] if 0 <= k < len(weights) else 0
    tail = min(max((below + at / 2) / total, 1e-300), 1 - 1e-16)
    return -NormalDist().inv_cdf(tail)


@cache
def descent_z(n: int, d: int) -> float:
    """How few ``d`` descents of ``n`` cards are, as a standard normal score: the exact
    (Eulerian) mid-p lower tail mapped through the normal quantile. The plain z-score
    ``(mean - d) / sd`` has a heavier lower tail than the normal for a small ``n`` (too many
    false alarms at a table with few players); this one is calibrated at every ``n``."""
    if n < 2:
        return 0.0
    return _lower_tail_z(_eulerian_row(n), d)


@cache
def valley_z(n: int, v: int) -> float:
    """How few ``v`` valleys of ``n`` cards are, as a standard normal score, calibrated at
    every ``n`` the same way as :func:`descent_z` (exact distribution, mid-p, normal
    quantile): the plain z-score over-alarmed at 9 and 27 dispensed cards."""
    if n < 3:
        return 0.0
    return _lower_tail_z(valley_pmf(n), v)


def valleys(seq: list[int]) -> int:
    return sum(1 for i in range(1, len(seq) - 1) if seq[i - 1] > seq[i] < seq[i + 1])


def descents(seq: list[int]) -> int:
    return sum(1 for i in range(1, len(seq)) if seq[i - 1] > seq[i])


def rising_sequences(seq: list[int]) -> int:
    """Bayer-Diaconis rising sequences of the dispensed cards: 1 + the number of values (in
    sorted order of the cards seen) that came out *after* the next higher one."""
    if not seq:
        return 0
    where = {value: i for i, value in enumerate(seq)}
    ordered = sorted(seq)
    return 1 + sum(1 for a, b in zip(ordered, ordered[1:]) if where[b] < where[a])


def chi_square_critical(df: int, alpha: float) -> float:
    """Upper ``alpha`` point of chi-square with ``df`` degrees of freedom (Wilson-Hilferty; within
    about 1% for df >= 2 at the alphas used here, checked against scipy in the tests)."""
    z = _normal_upper(alpha)
    c = 2 / (9 * df)
    return df * (1 - c + z * math.sqrt(c)) ** 3


def _normal_upper(alpha: float) -> float:
    """z with P(Z > z) = alpha, by bisection on erfc (alpha in (0, 0.5))."""
    lo, hi = 0.0, 40.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(mid / math.sqrt(2)) > alpha:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def chi_square(observed: list[int], expected: list[float]) -> float:
    return sum((o - e) ** 2 / e for o, e in zip(observed, expected) if e > 0)
