"""The fair tail of the one-pass likelihood summed over decks, by importance sampling (issue
38): shared by the window test's calibration and power figures (``benchmarks/short_decks.py``)
and the suite's check that the limits hold (``tests/controller/protection``).

A fair sum over the limit is far too rare to count by dealing fair decks; drawn under the
machine instead and weighted by the fair-over-machine likelihood ratio ``e^-S``, every draw
over the limit counts, and the estimate is exact in expectation."""

from __future__ import annotations

import math
import random

from controller.protection.likelihood import log_ratio
from firmware_sim.shuffle_models import one_pass


def window_sums(sets: int, decks: int, samples: int, rng: random.Random) -> list[float]:
    """``samples`` sums of the 10-shelf log-likelihood ratio over ``decks`` decks of ``sets``
    three-card sets, each deck dealt by the 10-shelf machine fed a new deck."""
    cards = 3 * sets
    return [sum(log_ratio(one_pass(list(range(52)), 10, rng.randrange)[:cards], 52, 10)
                for _ in range(decks)) for _ in range(samples)]


def fair_tail_limit(sums: list[float], rate: float, sigmas: float = 0.0) -> tuple[float, float]:
    """The lowest limit ``t`` at which ``P_fair(sum > t) <= rate``, from sums drawn under the
    machine: ``P_fair(S > t) = E_machine[e^-S; S > t]`` exactly (the likelihood ratio is the
    change of measure), estimated by the mean over the draws; with ``sigmas``, the estimate
    plus that many standard errors must be within ``rate`` (a limit that holds, not one that
    holds on average). Returns the limit and the estimate there."""
    n = len(sums)
    total = squares = 0.0
    limit, at = math.inf, 0.0
    for value in sorted(sums, reverse=True):
        mean = total / n  # the draws above this value: the region S > value
        error = math.sqrt(max(squares / n - mean * mean, 0.0) / n)
        if mean + sigmas * error > rate:
            break
        limit, at = value, mean
        weight = math.exp(-value)
        total, squares = total + weight, squares + weight * weight
    return limit, at
