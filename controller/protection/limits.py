"""Decision limits of the monitors, each chosen for at most one false alarm per 10,000 fair
decks, measured by ``python benchmarks/protection.py`` (simulated fair decks dealt straight
through the monitors; every figure and its number of decks is in docs/game-protection.md).

The CUSUM limits were set on simulated fair decks of 21 dispensed cards (seven three-card
hands): one-pass (valleys) drift 1.0, limit 4.0 (limit 3.0 gave 6.0e-4 per deck, too many);
sortedness drift 1.0, limit 5.0 (limit 4.0: 3.2e-4). Both scores are exact mid-p normal scores
(``stats.valley_z``, ``stats.descent_z``), the sortedness one also scaled by
:data:`SORTEDNESS_VARIANCE`, so that the limits hold at every deck length: measured at 6 to 27
cards, 300,000 fair decks each, no monitor exceeded 0.83 false alarms per 10,000 decks. The
batch tests run at level ``decks * 0.5e-4`` per batch; the ledger's bound is exact.
"""

from __future__ import annotations

import math

SORTEDNESS_DRIFT = 1.0
SORTEDNESS_LIMIT = 5.0
SORTEDNESS_CALIBRATED_AT = 21
SORTEDNESS_VARIANCE_FROM = 9
"""The deck length of the first entry of :data:`SORTEDNESS_VARIANCE`; one entry per card on."""
SORTEDNESS_VARIANCE = (
    1.263, 1.254, 1.238, 1.225, 1.224, 1.208, 1.191, 1.183, 1.182, 1.171, 1.166,
    1.163, 1.155, 1.148, 1.141, 1.141, 1.131, 1.128, 1.122, 1.12, 1.126, 1.111,
    1.113, 1.109, 1.107, 1.105, 1.097, 1.09, 1.092, 1.087, 1.086, 1.091, 1.088,
    1.085, 1.083, 1.083, 1.081, 1.075, 1.076, 1.08, 1.069, 1.075, 1.066, 1.073,
)
"""Variance of the sortedness score's two summed halves, (z(descents) + z(inverse descents))
/ sqrt(2), over fair decks of 9, 10, ... 52 dispensed cards (200,000 simulated decks each,
``python benchmarks/protection.py --only sortedness-variance``). The halves are not
independent (correlation 0.53 at 9 cards, 0.26 at 21): the sum spreads more at a small table,
and the CUSUM calibrated at 21 cards over-alarmed at 9 (1.4e-4 per deck). The score is
rescaled to the spread it has at 21 cards at every deck length."""
ONE_PASS_DRIFT = 1.0
ONE_PASS_LIMIT = 4.0
PACKET_DECKS = 50
"""350 three-card sets per batch at seven hands a deck."""
POSITIONS = 18
"""Dealing positions tested (six three-card sets): reached by every round with five boxes."""
POSITION_DECKS = 520
"""Ten expected per cell (52 cards x 18 positions) per batch."""
CATEGORY_DECKS = 400
"""2,800 hands per batch at seven a deck: six expected straight flushes."""
REPEAT_WINDOW = 2000
"""Decks remembered for the repeated-order monitor (about two days of one table)."""
REPEAT_SHARED = 5
"""Ordered runs of three consecutive cards shared with one earlier deck: five is a common run
of seven cards (chance about 1/52P7 per pair of places: under 1e-6 per deck over the window);
three would be a run of five, which fair decks share about once per thousand decks."""
ONE_PASS_SHELVES = (10, 20)
"""The one-pass machines the likelihood test is set for (issue 25: the 10- and 20-shelf
machines). Each shelf count is its own CUSUM, at ``log(2 / 1e-4)`` fed the collected cards
and at :func:`one_pass_lr_limit` fed a new deck; a 100-shelf machine leaves
about 0.002 nats a 21-card deck, beyond what any test on the dealt cards can use in a shift
(docs/game-protection.md)."""
ONE_PASS_LR_ALONE: dict[int, dict[int, float]] = {
    10: {3: 7.74, 6: 7.78, 9: 7.79, 12: 7.66, 15: 7.61, 18: 7.49, 21: 7.42, 24: 7.37, 27: 7.51},
    20: {3: 6.45, 6: 6.99, 9: 7.25, 12: 7.42, 15: 7.48, 18: 7.57, 21: 7.64, 24: 7.66, 27: 7.69},
}
"""Fed a new deck: for each shelf count and number of dealt cards, the limit at which that
shelf count's CUSUM alone gives at most 1e-4 false alarms per fair deck, measured by
importance sampling (``benchmarks/protection.py --only lr-calibration --excursions 8000``:
the limit measured, moved up when the same limit measured again with other random numbers
gave more, by the log of how much: up to 0.22 at 27 cards). Lorden's bound, ``log(1 /
1e-4) = 9.21`` alone, holds for any increments; these are 1.4 to 2.8 lower because a fair
deck that crosses carries the sum far past the limit (a one-pass prefix is either impossible
or many times likelier than fair) and fair excursions above 0 last more than one deck, which
Lorden's bound does not count (issue 38)."""
ONE_PASS_LR_SHARE = {10: 0.05, 20: 0.1}
"""How the monitor's 1e-4 false alarms a deck are shared between its CUSUMs, one per shelf
count, and its window tests (:data:`ONE_PASS_LR_WINDOW_SHARES`, the rest): their sum bounds
the monitor's. The windows read the 10-shelf ratio, the machine the tables meet, and take most:
at a 9-card table the CUSUM alone, even at 0.9 of the budget, reached 0.86 within 5 decks where
the test on five decks reaches 0.91 (issue 38). The 20-shelf CUSUM keeps the 0.1 it had; the
10-shelf one keeps a little, for a machine that goes wrong slowly and the lengths no window
has a limit for."""
ONE_PASS_LR_WINDOW_SHARES = {5: 0.7, 7: 0.15}
"""The window tests, by the number of decks summed, and each one's share of the budget (issue
38 judges 5 and 7 decks; the shares measured best on 20,000 runs at 9 cards, the tightest
table, against the bound at both)."""
ONE_PASS_LR_WINDOW: dict[int, dict[int, float]] = {
    5: {3: 6.637, 6: 7.433, 9: 6.69, 12: 5.032, 15: 2.218, 18: -0.433, 21: 0.103, 24: 8.419,
        27: 4.737},
    7: {3: 8.265, 6: 8.764, 9: 7.166, 12: 4.614, 15: 2.524, 18: 6.052, 21: 10.517, 24: 13.246,
        27: 22.727},
}
"""Fed a new deck, for each window and deck length: the limit on the 10-shelf log-likelihood
ratio summed over that many decks of that length at which a fair window crosses with
probability at most the window's share of 1e-4: the importance-sampled estimate (``P_fair(S >
t) = E_machine[e^-S; S > t]``, exact in expectation) plus three standard errors, over 40,000
windows of the machine's decks (30,000 for 7 decks) a length (``benchmarks/protection.py
--only lr-window``, seed 15). Where every draw lies above the budget's point (from 21 cards
on for 5 decks, 18 for 7) the limit is the lowest draw: the estimate there is far under the share, and a lower limit
is not vouched for by these draws, so none is taken. A fair window's sum falls steeply with
its length (most fair 18-card decks are already impossible for the machine)."""
ONE_PASS_LR_MARGIN = 0.1
"""Added to each measured limit for the importance sampling's remaining error."""


def one_pass_lr_limit(shelves: int, cards: int) -> float:
    """The ``shelves``-shelf likelihood CUSUM's limit after a new-deck deck of ``cards``
    dealt cards: the limit measured for it alone, moved up by its share of the budget and the
    margin, so the shelf counts together stay under 1e-4 a fair deck. A length not measured
    (a shoe's cards one by one) takes the largest measured."""
    alone = ONE_PASS_LR_ALONE[shelves]
    measured = alone.get(cards, max(alone.values()))
    return measured + math.log(1 / ONE_PASS_LR_SHARE[shelves]) + ONE_PASS_LR_MARGIN


POSITION_RUN = 5
"""Decks running with the same card at one dealt position: 27 * 52^-4 = 3.7e-6 false alarms
per fair deck at most; four (1.9e-4) would exceed the budget."""
RUN_POSITIONS = 27
"""Dealt positions watched for a stuck card: nine three-card sets, the largest table."""
EPISODE_DECKS = 100
"""An episode: findings of the same fault within this many decks of the last are one alert
(:mod:`.diagnosis`); an order fault within it also explains a card kept out of the deals."""
