"""The simulated shuffler's models, each checked against what defines it."""

from __future__ import annotations

import random

from controller.protection.stats import valleys
from firmware_sim.shuffle_models import ShuffleModel, Shuffler, fisher_yates


def _shuffler(model: ShuffleModel, seed: int = 4) -> Shuffler:
    return Shuffler(model, random.Random(seed).randrange)


def test_fair_is_fisher_yates_as_the_standard_library_does_it() -> None:
    """The fair model consumes the random source as ``random.shuffle`` does (so a seeded bench
    deals what it dealt before the models existed)."""
    expected = list(range(52))
    random.Random(9).shuffle(expected)
    assert fisher_yates(list(range(52)), random.Random(9).randrange) == expected
    assert _shuffler(ShuffleModel.FAIR, 9).order() == expected


def test_one_pass_orders_have_at_most_one_valley_per_shelf() -> None:
    """Diaconis-Fulman-Holmes: each shelf's pile reads down-then-up (cards on top in reverse,
    at the bottom in order), so a k-shelf deck has at most k valleys; a random deck about 16.7."""
    shuffler = _shuffler(ShuffleModel.ONE_PASS_10)
    for _ in range(200):
        order = shuffler.order()
        assert sorted(order) == list(range(52)) and valleys(order) <= 10


def test_stuck_missing_and_repeated() -> None:
    """Stuck: the same card last every time, 52 counted. Missing: the same card absent from a
    51-card deck. Repeated: every second shuffle replays the one before."""
    stuck = _shuffler(ShuffleModel.STUCK_CARD)
    lasts = {tuple(sorted(order)) == tuple(range(52)) and order[-1]
             for order in (stuck.order() for _ in range(20))}
    assert len(lasts) == 1 and lasts != {False}
    missing = _shuffler(ShuffleModel.MISSING_CARD)
    decks = [missing.order() for _ in range(20)]
    assert {len(d) for d in decks} == {51} and len({frozenset(d) for d in decks}) == 1
    repeated = _shuffler(ShuffleModel.REPEATED_ORDER)
    first, second, third = (repeated.order() for _ in range(3))
    assert first == second != third


def test_partial_sort_and_biased_packets() -> None:
    """Partial sort: half the places hold their cards in pack order (an increasing run of at
    least 26). Biased packets: the same three cards, the lowest first in about half the sets."""
    order = _shuffler(ShuffleModel.PARTIAL_SORT).order()
    longest = [1] * 52
    for i in range(52):
        longest[i] = 1 + max((longest[j] for j in range(i) if order[j] < order[i]), default=0)
    assert max(longest) >= 26 and sorted(order) == list(range(52))
    biased = _shuffler(ShuffleModel.BIASED_PACKETS)
    firsts, deals = 0, random.Random(5)
    for _ in range(600):
        hand = deals.sample(range(52), 3)
        formed = biased.form(list(hand))
        assert sorted(formed) == sorted(hand)
        firsts += formed[0] == min(hand)
    assert 340 < firsts < 460  # 2/3 of 600 = 400
