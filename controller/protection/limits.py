"""Decision limits of the monitors, each chosen for at most one false alarm per 10,000 fair
decks, measured by ``python benchmarks/protection.py`` (simulated fair decks dealt straight
through the monitors; every figure and its number of decks is in docs/game-protection.md).

The CUSUM limits were calibrated on 2,000,000 simulated fair decks of 21 dispensed cards (seven
three-card hands): one-pass (valleys) drift 1.0, limit 4.0: 7.3e-5 false alarms per deck
(limit 3.0: 6.0e-4, too many); sortedness drift 1.0, limit 5.0: 6.6e-5 (limit 4.0: 3.2e-4).
The batch tests run at level ``decks * 0.5e-4`` per batch; the ledger's bound is exact. Over
200,000 fair decks with these limits every monitor measured at most 7e-5 false alarms per deck.
"""

from __future__ import annotations

SORTEDNESS_DRIFT = 1.0
SORTEDNESS_LIMIT = 5.0
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
