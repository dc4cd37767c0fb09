"""How long the operator waits, and until when: the clock the runner gives it, the current
state's deadline, and the end of a backoff. One part of the operator, the only code that writes
these fields.

The operator reads no clock of its own: every input brings ``now``, so a test (or a replay) gives
it exact times and its deadlines follow exactly (see :data:`~.states.WAIT_SECONDS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.service.operator.states import WAIT_SECONDS, Op


@dataclass(slots=True)
class Waits:
    """``now`` as the last input said, the current wait's ``deadline`` (``None``: waiting for
    the table or the device, no expiry) and ``backoff_until`` (the end of a backoff)."""

    now: float = 0.0
    deadline: float | None = None
    backoff_until: float | None = None

    def at(self, now: float) -> None:
        """An input arrived at ``now``."""
        self.now = now

    def enter(self, state: Op) -> None:
        """The machine entered ``state`` (or its wait starts over): wait as that state waits,
        a backoff until its end."""
        if state is Op.BACKING_OFF:
            self.deadline = self.backoff_until
            return
        wait = WAIT_SECONDS[state]
        self.deadline = None if wait is None else self.now + wait

    def over(self) -> None:
        """The wait expired and was acted on: no deadline until the next state sets one."""
        self.deadline = None

    def back_off(self, delay: float) -> None:
        """The next backoff ends ``delay`` seconds from now (0: look again at once)."""
        self.backoff_until = self.now + delay


__all__ = ["Waits"]
