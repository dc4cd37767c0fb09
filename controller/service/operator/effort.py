"""Bounded effort: how long to back off after a failure, and a failure streak that is logged
and journaled once, with a count and its time span, not once per try.

A device that refuses everything must cost the Pi nothing: the operator retries with an
exponential, capped delay, stops after :data:`~.states.MAX_FAILURES` in a row, and the whole
streak becomes one ``device_command_failed`` log line and one journal input
(:class:`drivers.events.CommandFailed`) when it gives up. A round that keeps asking for shuffles
or hands is bounded the same way (:class:`RoundCosts`).

Two parts of the operator live here, each the only writer of its fields: :class:`Streak` and
:class:`RoundCosts`; the machine asks them (``exhausted``, ``may_shuffle``) and tells them what
happened (``fail``, ``end``, ``shuffled``).
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from controller.service.operator.states import (
    BACKOFF_CAP,
    BACKOFF_FIRST,
    MAX_FAILURES,
    MAX_HANDS_PER_ROUND,
    MAX_SHUFFLES_PER_ROUND,
)
from drivers.backoff import ExponentialBackoff, Jitter

log = structlog.get_logger(__name__)


def backoff_delay(failures: int, *, first: float = BACKOFF_FIRST,
                  cap: float = BACKOFF_CAP) -> float:
    """Seconds to wait after the ``failures``-th failure in a row (1-based): first, 2x, 4x ...
    up to ``cap`` (``drivers.backoff``). Not jittered: the operator is a machine whose time is
    given to it, so its deadlines are exact and replayable, and it is one device's only
    client (nothing to fall out of step with)."""
    return ExponentialBackoff(first, cap, jitter=Jitter.NONE).delay(failures)


@dataclass(slots=True)
class Streak:
    """Failed commands in a row: what failed, how often, from when to when."""

    count: int = 0
    first: float = 0.0
    last: float = 0.0
    command: str = ""
    error: str = ""

    def fail(self, command: str, error: str, now: float) -> None:
        if self.count == 0:
            self.first = now
            log.warning("device_command_failed", command=command, error=error, count=1)
        self.count += 1
        self.last, self.command, self.error = now, command, error

    @property
    def exhausted(self) -> bool:
        return self.count >= MAX_FAILURES

    def delay(self) -> float:
        return backoff_delay(self.count)

    def summary(self) -> dict[str, object]:
        return {"command": self.command, "error": self.error, "count": self.count,
                "first": round(self.first, 3), "last": round(self.last, 3)}

    def end(self) -> None:
        """A command succeeded: the streak is over (one closing line if it was a streak)."""
        if self.count > 1:
            log.info("device_command_recovered", **self.summary())
        self.count = 0


@dataclass(slots=True)
class RoundCosts:
    """What this round has cost the device so far, bounded by
    :data:`~.states.MAX_SHUFFLES_PER_ROUND` and :data:`~.states.MAX_HANDS_PER_ROUND`: a round
    that asks for more is a runaway, held for a void rather than left to wear the device."""

    shuffles: int = 0
    hands: int = 0
    bad_state_retried: bool = False
    """A SHUFFLE refused BAD_STATE was answered once with END_ROUND and a retry (docs/protocols.md
    5.2): a second refusal in the round is a failure like any other."""

    def new_round(self) -> None:
        """A new round starts with nothing spent."""
        self.shuffles, self.hands, self.bad_state_retried = 0, 0, False

    def shuffled(self) -> None:
        """The device took a SHUFFLE."""
        self.shuffles += 1

    def dispensed(self) -> None:
        """The device took a DISPENSE_HAND."""
        self.hands += 1

    @property
    def may_shuffle(self) -> bool:
        return self.shuffles < MAX_SHUFFLES_PER_ROUND

    @property
    def may_dispense(self) -> bool:
        return self.hands < MAX_HANDS_PER_ROUND

    def retry_refused_shuffle(self) -> bool:
        """A SHUFFLE was refused BAD_STATE: ``True`` the first time this round (end the round
        and shuffle once more), ``False`` after (the refusal is a failure)."""
        if self.bad_state_retried:
            return False
        self.bad_state_retried = True
        return True
