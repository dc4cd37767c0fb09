"""Sequential decisions: each monitor's evidence accumulates deck by deck until it is enough.

Two rules, both bounded in memory and O(1) per deck:

- :class:`Cusum`, Page's one-sided CUSUM on a per-deck score (a standardised statistic): it
  alarms when ``S = max(0, S + score - drift)`` exceeds ``limit``, then starts again. Good when a
  fault moves the statistic every deck (valleys, descents).
- :class:`BatchTest`, a group-sequential chi-square: counts accumulate over ``decks`` decks and
  are tested once, at level ``alpha = decks * rate``, so false alarms per fair deck stay near
  ``rate`` (the regulators' chi-square, made a decision with a stated error rate).

Limits are chosen so that a fair shuffler gives at most one false alarm per 10,000 decks; the
value and the number of simulated decks behind it are in :mod:`controller.protection.limits`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.protection.stats import chi_square, chi_square_critical

FALSE_ALARM_RATE = 1e-4
"""At most one false alarm per 10,000 fair decks, per monitor (issue 15)."""
BATCH_RATE = FALSE_ALARM_RATE / 2
"""The batch tests' nominal rate: half the target, because the chi-square approximation is
optimistic with small expected counts (at the full nominal rate the packet and category
batches measured 1.5e-4 and 1.25e-4 false alarms per deck over 200,000 fair decks)."""


@dataclass(slots=True)
class Cusum:
    drift: float
    limit: float
    value: float = 0.0
    alarms: int = 0
    last: float = 0.0
    """The statistic at the last alarm."""

    def add(self, score: float) -> bool:
        """One deck's score; True when the evidence crosses the limit (then restart)."""
        self.value = max(0.0, self.value + score - self.drift)
        if self.value > self.limit:
            self.alarms += 1
            self.last, self.value = self.value, 0.0
            return True
        return False


@dataclass(slots=True)
class BatchTest:
    """Chi-square of observed against expected counts, decided every ``decks`` decks."""

    decks: int
    df: int
    rate: float = BATCH_RATE
    observed: list[int] = field(default_factory=list)
    expected: list[float] = field(default_factory=list)
    seen: int = 0
    last: float = 0.0

    @property
    def critical(self) -> float:
        return chi_square_critical(self.df, self.decks * self.rate)

    def cells(self, n: int) -> None:
        if len(self.observed) != n:
            self.observed, self.expected = [0] * n, [0.0] * n

    def deck_done(self) -> bool:
        """Count one deck; True when the batch is complete and the statistic is over the
        critical value. The batch then starts again."""
        self.seen += 1
        if self.seen < self.decks:
            return False
        self.last = chi_square(self.observed, self.expected)
        over = self.last > self.critical
        self.seen = 0
        self.observed = [0] * len(self.observed)
        self.expected = [0.0] * len(self.expected)
        return over
