"""Scenarios for a framed card-reading shoe: docs/protocols.md section 6, and its link.

A shoe only reports what a dealer does, so its card and lid scenarios need a person at the shoe
(or a simulator's dealer); the link scenarios need nobody.
"""

from __future__ import annotations

from drivers.conformance.common import (
    LINK_SCENARIOS, check_reboot, check_resend_and_backlog, clear_fault_acked_first,
)
from drivers.conformance.session import (
    Action, Nonconformance, Scenario, Session, fault_names,
)
from drivers.conformance.wire import Received
from drivers.framed import event_messages as ev
from drivers.framed.messages import Heartbeat, MsgType, NakReason, Shuffle

LID_BIT = 1 << 9


def not_a_shuffler(s: Session) -> str:
    s.refused(Shuffle(), (NakReason.UNKNOWN,), "6", "to a shoe")
    return "SHUFFLE -> NAK(UNKNOWN)"


REPORTS = (ev.CardMsg, ev.NoReadMsg, ev.DoubleFeedMsg, ev.ForeignMsg)
"""The events that say a card passed the reader: one per draw, none without one."""
QUIET_SECONDS = 3.0


def _reports(items: list[Received]) -> list[ev.EventMessage]:
    return [r.message for r in items if isinstance(r.message, REPORTS) and r.first_copy]


def _described(report: ev.EventMessage) -> str:
    if isinstance(report, ev.CardMsg):
        return f"CARD {report.event_id} {report.card.code} at index {report.index_in_shoe}"
    return f"{report.TYPE.name} {report.event_id}"


def card(s: Session) -> str:
    """A drawn card is one CARD event (a valid card byte), resent until EVENT_ACK, and held
    for a RESYNC while unacknowledged; the draw is reported once (one CARD, not two)."""
    s.wire.auto_ack = False
    start = s.wire.mark()
    s.physical(Action.DRAW_CARD)
    drawn = s.event(ev.CardMsg, "6", "after a card was drawn", s.person_seconds)
    bad = [r for r in s.wire.received[start:] if r.frame is not None and r.message is None]
    if bad:
        raise Nonconformance("4", f"an undecodable frame while drawing: {bad[0].describe()}")
    note = check_resend_and_backlog(s, drawn.event_id, MsgType.CARD)
    reports = _reports(s.wire.received[start:])
    if len(reports) != 1:
        raise Nonconformance("6", f"one card drawn, {len(reports)} reports: "
                                  f"{'; '.join(_described(r) for r in reports)}")
    return f"{drawn.card.code} at index {drawn.index_in_shoe}, reported once; {note}"


def lid(s: Session) -> str:
    """LID open is a fault until CLEAR_FAULT; CLEAR_FAULT is ACKed before LID closed, and
    both LID events are seen (not assumed)."""
    s.physical(Action.OPEN_LID)
    s.event(ev.LidMsg, "6", "open after the lid was opened", s.person_seconds, lambda m: m.open)
    status = s.status()
    if not status.faults & LID_BIT:
        raise Nonconformance("6", f"LID open sent but the fault word reads "
                                  f"0x{status.faults:04X} ({fault_names(status.faults)}); "
                                  "expected lid open (bit 9) until CLEAR_FAULT")
    clear_fault_acked_first(s, lambda m: isinstance(m, ev.LidMsg) and not m.open,
                            "LID closed", "6")
    status = s.status()
    if status.faults:
        raise Nonconformance("6", f"fault word 0x{status.faults:04X} "
                                  f"({fault_names(status.faults)}) after CLEAR_FAULT with the "
                                  "lid shut")
    return "LID open seen; CLEAR_FAULT: ACK, then LID closed seen; fault word 0"


def quiet(s: Session) -> str:
    """No card that was not drawn: with nothing drawn for a while no card is reported, and
    over the whole run the shoe reported no more cards than the kit had drawn."""
    start = s.wire.mark()
    s.wire.listen(QUIET_SECONDS)
    phantom = _reports(s.wire.received[start:])
    if phantom:
        raise Nonconformance("6", f"nothing drawn for {QUIET_SECONDS:g} s, yet "
                                  f"{'; '.join(_described(r) for r in phantom)}: a shoe reports "
                                  "only cards that pass its reader")
    reported = _run_reports(s.wire.received)
    if reported > s.draws:
        raise Nonconformance("6", f"{reported} cards reported over the run, {s.draws} drawn: "
                                  "a shoe reports only cards that pass its reader")
    return f"nothing reported in {QUIET_SECONDS:g} s with nothing drawn; {reported} " \
           f"report(s) for {s.draws} draw(s) over the run"


def _run_reports(items: list[Received]) -> int:
    """Distinct card reports over the run, an event id counting once per boot."""
    seen: set[tuple[int, int]] = set()
    boot: int | None = None
    boots = 0
    for r in items:
        if isinstance(r.message, Heartbeat):
            if boot is not None and r.message.boot_id != boot:
                boots += 1
            boot = r.message.boot_id
        elif isinstance(r.message, REPORTS):
            seen.add((boots, r.message.event_id))
    return len(seen)


def reboot(s: Session) -> str:
    """Power-cycled: a new boot id, and the next card drawn is event 1. A card is drawn
    first, so the boot being left has numbered an event (else 1 would prove nothing)."""

    def draw(s: Session) -> ev.EventMessage:
        s.physical(Action.DRAW_CARD)
        return s.event(ev.CardMsg, "6", "after a card was drawn", s.person_seconds)

    draw(s)
    return check_reboot(s, draw)


SCENARIOS = LINK_SCENARIOS + (
    Scenario("not-a-shuffler", "shuffler commands -> NAK(UNKNOWN)", "6", not_a_shuffler),
    Scenario("card", "a drawn card: CARD, resent until EVENT_ACK, RESYNC backlog", "3.4", card,
             Action.DRAW_CARD),
    Scenario("lid", "lid open until CLEAR_FAULT: ACK, then LID closed", "6", lid,
             Action.OPEN_LID),
    Scenario("reboot", "power cycle: new boot id, event ids from 1", "3.6", reboot,
             Action.POWER_CYCLE),
    Scenario("quiet", "no card reported that was not drawn", "6", quiet),
)
