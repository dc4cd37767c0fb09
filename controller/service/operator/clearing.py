"""A supervisor's ``clear-fault``: whether it can do anything now, and what the device said after.

``supervisor.clear-fault`` used to be answered ``accepted`` as soon as the table had journaled
the order, while the shuffler's door stayed open: the supervisor saw "accepted" three times and
the table did not move. Now the verb is refused, with the reason, when it cannot have an effect
(:func:`clear_refusal`: no fault, a shoe, a deck lost mid-deal), and otherwise the control
request waits (bounded) for the device's own answer, the ``STATUS`` the operator asks for right
after ``CLEAR_FAULT`` (:class:`ClearWatch`): a fault it still reports is a refusal naming it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from controller.service.operator.machine import DeviceMachine
from controller.service.operator.states import HoldReason, Op

CLEAR_SECONDS = 2.5
"""How long a ``clear-fault`` request waits for CLEAR_FAULT and the STATUS after it. The device
answers each in milliseconds; a command that goes unanswered fails after its four attempts of
0.25 s (``drivers.framed.link``), so the outcome is known within about 1.2 s either way. Kept
short because the request is answered on the control loop's thread, which the watchdog probes
(docs/service.md, "Health")."""


@dataclass(frozen=True, slots=True)
class ClearOutcome:
    """What the device reported after a CLEAR_FAULT."""

    faults: tuple[str, ...] = ()
    """Faults the device still reports (its STATUS after the CLEAR_FAULT)."""
    error: str = ""
    """CLEAR_FAULT or the STATUS after it failed (NAK, no answer): why."""

    @property
    def cleared(self) -> bool:
        return not self.faults and not self.error


def clear_refusal(machine: DeviceMachine, *, shoe: bool) -> str | None:
    """Why a CLEAR_FAULT would do nothing now, or ``None`` when it may help."""
    name = machine.name
    if shoe:
        return (f"the {name} takes no CLEAR_FAULT from the service: a shoe's fault is cleared "
                "at the shoe, and the dealer draws on")
    state = machine.state
    if state is Op.HELD and machine.hold_reason in (HoldReason.DECK_LOST, HoldReason.RUNAWAY):
        what = ("lost its deck mid-deal (a reboot)" if machine.hold_reason is
                HoldReason.DECK_LOST else "was asked too often this round")
        return (f"the {name} {what}: clearing a fault cannot deal this round on; void it "
                "(tablectl supervisor void REASON)")
    if state is Op.OFFLINE:
        return f"the {name} is offline: reconnect it (cable, power) before clearing a fault"
    if state is Op.HELD or machine.faults or state is Op.FAULT:
        return None
    return f"the {name} reports no fault (operator state {state.value}): nothing to clear"


class ClearWatch:
    """The outcome of each CLEAR_FAULT the operator sent, for a control request to wait on.

    The operator thread calls :meth:`sent`, then :meth:`answered` or :meth:`failed`; the
    control thread takes :meth:`count` before the order reaches the table and then
    :meth:`wait_after` it. Thread-safe; one outcome per CLEAR_FAULT."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._count = 0
        self._pending = False
        self._last: ClearOutcome | None = None

    def count(self) -> int:
        with self._lock:
            return self._count

    @property
    def pending(self) -> bool:
        """A CLEAR_FAULT was sent and the STATUS after it has not answered yet."""
        return self._pending

    def sent(self) -> None:
        with self._lock:
            self._pending = True

    def answered(self, faults: tuple[str, ...]) -> None:
        self._settle(ClearOutcome(faults=faults))

    def failed(self, error: str) -> None:
        self._settle(ClearOutcome(error=error))

    def _settle(self, outcome: ClearOutcome) -> None:
        with self._lock:
            if not self._pending:
                return
            self._pending = False
            self._last = outcome
            self._count += 1
            self._lock.notify_all()

    def wait_after(self, count: int, timeout: float) -> ClearOutcome | None:
        """The outcome of the first CLEAR_FAULT settled after ``count``; ``None`` on timeout."""
        with self._lock:
            if not self._lock.wait_for(lambda: self._count > count, timeout):
                return None
            return self._last
