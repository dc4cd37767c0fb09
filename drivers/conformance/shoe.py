"""Scenarios for a framed card-reading shoe: docs/protocols.md section 6, and its link.

A shoe only reports what a dealer does, so its card and lid scenarios need a person at the shoe
(or a simulator's dealer); the link scenarios need nobody.
"""

from __future__ import annotations

from drivers.conformance.common import (
    LINK_SCENARIOS, check_reboot, check_resend_and_backlog, clear_fault_acked_first,
)
from drivers.conformance.session import (
    Action, Nonconformance, Scenario, Session,
)
from drivers.framed import event_messages as ev
from drivers.framed.messages import MsgType, NakReason, Shuffle

EVENT_SECONDS = 30.0


def not_a_shuffler(s: Session) -> str:
    s.refused(Shuffle(), (NakReason.UNKNOWN,), "6", "to a shoe")
    return "SHUFFLE -> NAK(UNKNOWN)"


def card(s: Session) -> str:
    """A drawn card is one CARD event (a valid card byte), resent until EVENT_ACK, and held
    for a RESYNC while unacknowledged."""
    s.wire.auto_ack = False
    start = len(s.wire.received)
    s.physical(Action.DRAW_CARD)
    drawn = s.event(ev.CardMsg, "6", "after a card was drawn", EVENT_SECONDS)
    bad = [r for r in s.wire.received[start:] if r.frame is not None and r.message is None]
    if bad:
        raise Nonconformance("4", f"an undecodable frame while drawing: {bad[0].error}")
    note = check_resend_and_backlog(s, drawn.event_id, MsgType.CARD)
    return f"{drawn.card.code} at index {drawn.index_in_shoe}; {note}"


def lid(s: Session) -> str:
    """LID open is a fault until CLEAR_FAULT; CLEAR_FAULT is ACKed before LID closed."""
    s.physical(Action.OPEN_LID)
    s.event(ev.LidMsg, "6", "open after the lid was opened", EVENT_SECONDS, lambda m: m.open)
    clear_fault_acked_first(s, lambda m: isinstance(m, ev.LidMsg) and not m.open,
                            "LID closed")
    status = s.status()
    if status.faults:
        raise Nonconformance("6", f"fault word 0x{status.faults:04X} after CLEAR_FAULT with "
                                  "the lid shut")
    return "LID open; CLEAR_FAULT: ACK, then LID closed"


def reboot(s: Session) -> str:
    """Power-cycled: a new boot id, and the next card drawn is event 1."""

    def draw(s: Session) -> ev.EventMessage:
        s.physical(Action.DRAW_CARD)
        return s.event(ev.CardMsg, "6", "after a card was drawn", EVENT_SECONDS)

    return check_reboot(s, draw)


SCENARIOS = LINK_SCENARIOS + (
    Scenario("not-a-shuffler", "shuffler commands -> NAK(UNKNOWN)", "6", not_a_shuffler),
    Scenario("card", "a drawn card: CARD, resent until EVENT_ACK, RESYNC backlog", "3.4", card,
             Action.DRAW_CARD),
    Scenario("lid", "lid open until CLEAR_FAULT: ACK, then LID closed", "6", lid,
             Action.OPEN_LID),
    Scenario("reboot", "power cycle: new boot id, event ids from 1", "3.6", reboot,
             Action.POWER_CYCLE),
)
