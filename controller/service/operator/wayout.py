"""What the device side waits for, in words, and the way out: ``(waits_for, way_out, role)``
for ``round.status``, the dealer's screen and the liveness rules
(:mod:`controller.service.wiring.liveness`). Reads the operator's model and parts; writes none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.service.operator.roundview import DeckUse
from controller.service.operator.states import HoldReason, Op, Stage

if TYPE_CHECKING:
    from controller.service.operator.machine import DeviceMachine

VOID = "tablectl supervisor void REASON"


def offline_way_out(name: str) -> tuple[str, str, str]:
    """What an offline device waits for, the way out, and whose it is (the shuffler's and the
    shoe's alike)."""
    return (f"the {name} to come back online (cable, power)",
            f"reconnect the device | {VOID}", "supervisor")


def way_out(m: DeviceMachine) -> tuple[str, str, str]:
    """The device side's wait and its way out, from the model's state and what its parts say."""
    name, state = m.name, m.state
    if m.deck_lost:
        return (f"the {name} lost its deck mid-deal; the round cannot be dealt on",
                VOID, "supervisor")
    if state is Op.HELD:
        if m.hold_reason is HoldReason.DECK_LOST:
            return (f"the {name} lost its deck mid-deal; the round cannot be dealt on",
                    VOID, "supervisor")
        if m.hold_reason is HoldReason.RUNAWAY:
            return (f"the {name} was asked too often this round", VOID, "supervisor")
        return ((f"a supervisor to fix the {name}, which failed {m.streak.count} times "
                 f"({m.streak.command}: {m.streak.error})"),
                f"tablectl supervisor clear-fault | {VOID}", "supervisor")
    if state is Op.FAULT:
        active = ", ".join(m.said.fault_words) or "a fault"
        return (f"a supervisor to clear {active} on the {name}",
                "tablectl supervisor clear-fault", "supervisor")
    if state is Op.OFFLINE:
        return offline_way_out(name)
    if state is Op.BACKING_OFF:
        return ((f"a retry of {m.streak.command or 'the device'} after a failure "
                 f"({m.streak.count} so far)"), "none needed (automatic)", "")
    if state is Op.PRESENTED:
        return ("the dealer to lift the presented hand", "none (lift the hand)", "dealer")
    if state in (Op.SHUFFLING, Op.FORMING):
        return (f"the {name} to finish ({state.value})", "none needed (automatic)", "")
    if m.view.deck is DeckUse.BLOCKED and m.view.stage is Stage.CLOSED:
        return ("a replaced or counted deck",
                "tablectl deck replace | tablectl deck counted 52", "dealer")
    return ("the table", "the round's next verb", "dealer")


__all__ = ["offline_way_out", "way_out"]
