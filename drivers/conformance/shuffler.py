"""Scenarios for a hand-forming shuffler: docs/protocols.md section 5, and its link.

They run in this order on one connection; each starts from the state it needs (``idle``:
faults cleared, END_ROUND). Only two need a person: lifting hands, where the device does not
report them taken by itself, and causing a fault; everything else uses what the protocol offers
(END_ROUND collects a presented hand).
"""

from __future__ import annotations

from drivers.conformance.common import (
    LINK_SCENARIOS, check_reboot, check_resend_and_backlog, clear_fault_acked_first,
)
from drivers.conformance.session import (
    LOAD_MARGIN, MOVE_SECONDS, REPLY_WAIT, Action, Nonconformance, NotRun, Scenario, Session,
    fault_names,
)
from drivers.conformance.wire import Received
from drivers.framed import event_messages as ev
from drivers.framed.messages import (
    Ack, DeviceState, DispenseHand, EndRound, GetMeters, MetersReply, MsgType, Nak,
    NakReason, Shuffle,
)

DECK = 52
HAND = 3
EXPOSED_BIT = 1 << 6
TAKEN_SECONDS = 2.0 + LOAD_MARGIN
"""How long the kit waits for a presented hand to be lifted before it asks for a person."""


def _shuffled(s: Session) -> ev.ShuffleDoneMsg:
    s.idle()
    s.acked(Shuffle(), "5.2")
    done = s.event(ev.ShuffleDoneMsg, "5.1", "after SHUFFLE")
    if done.counted != done.expected:
        raise NotRun(f"the device counted {done.counted} of {done.expected} cards: load one "
                     "complete deck and run again")
    return done


def shuffle(s: Session) -> str:
    done = _shuffled(s)
    status = s.status()
    if (status.state, status.hand_number, status.cards_remaining) != \
            (DeviceState.READY, 0, done.counted):
        raise Nonconformance("5.6", f"after SHUFFLE_DONE: state {status.state.name}, hand "
                                    f"{status.hand_number}, {status.cards_remaining} cards; "
                                    f"expected READY, 0, {done.counted}")
    return f"SHUFFLE_DONE counted {done.counted} of {done.expected}"


def shuffle_in_ready(s: Session) -> str:
    _shuffled(s)
    reply = s.ask(Shuffle(), "5.2")
    if isinstance(reply.message, Ack):
        s.event(ev.ShuffleDoneMsg, "5.1", "after SHUFFLE")
        return "SHUFFLE accepted without END_ROUND (allowed: MAY, 5.2)"
    if not (isinstance(reply.message, Nak) and reply.message.reason is NakReason.BAD_STATE):
        raise Nonconformance("5.2", f"SHUFFLE in READY answered {reply.describe()}, expected "
                                    "NAK(BAD_STATE) or ACK")
    return "NAK(BAD_STATE) until END_ROUND (the strict reading)"


def replay(s: Session) -> str:
    """The same SHUFFLE frame twice: the stored ACK, byte for byte, and one shuffle."""
    s.idle()
    before = s.reply(GetMeters(), MetersReply, "4").shuffles
    seq = s.wire.next_seq()
    s.look_back_to(s.wire.mark())
    data = s.wire.send(Shuffle(), seq)
    first = s.wire.reply_to(seq, REPLY_WAIT)
    s.wire.raw(data)
    second = s.wire.reply_to(seq, REPLY_WAIT)
    if first is None or second is None or not isinstance(first.message, Ack):
        got = ", ".join(r.describe() if r is not None else "nothing" for r in (first, second))
        raise Nonconformance("3.2", f"SHUFFLE and its retry (SEQ {seq}) answered {got}; "
                                    "expected ACK and the stored ACK")
    if second.message != first.message:
        raise Nonconformance("3.2", f"the retry (same SEQ) was answered {second.describe()}, "
                                    "not the stored ACK: it was executed again")
    s.event(ev.ShuffleDoneMsg, "5.1", "after SHUFFLE")
    extra = [r for r in s.wire.listen(0.3)
             if isinstance(r.message, ev.ShuffleDoneMsg) and r.first_copy]
    after = s.reply(GetMeters(), MetersReply, "4").shuffles
    if extra or after != before + 1:
        raise Nonconformance("3.2", f"SHUFFLE sent twice with SEQ {seq}: the meters count "
                                    f"{after - before} shuffles, expected 1 (the retry MUST get "
                                    "the stored ACK and not be executed again)")
    return "stored ACK replayed; shuffled once"


def event_resend(s: Session) -> str:
    s.idle()
    s.wire.auto_ack = False
    try:
        s.acked(Shuffle(), "5.2")
        done = s.event(ev.ShuffleDoneMsg, "5.1", "after SHUFFLE")
        return check_resend_and_backlog(s, done.event_id, MsgType.SHUFFLE_DONE)
    finally:
        s.wire.auto_ack = True


def busy_while_shuffling(s: Session) -> str:
    s.idle()
    s.acked(Shuffle(), "5.2")
    start = len(s.wire.received)
    reply = s.ask(EndRound(), "5.7")
    if isinstance(reply.message, Ack):
        done_first = any(isinstance(r.message, ev.ShuffleDoneMsg)
                         for r in s.wire.received[start:s.wire.received.index(reply)])
        if not done_first:
            raise Nonconformance("5.7", "END_ROUND ACKed while shuffling (no SHUFFLE_DONE "
                                        "yet); expected NAK(BUSY)")
        return "the shuffle finished before END_ROUND arrived (BUSY not observable)"
    if not (isinstance(reply.message, Nak) and reply.message.reason is NakReason.BUSY):
        raise s.explained("5.7", f"END_ROUND while shuffling answered {reply.describe()}, "
                                 "expected NAK(BUSY)", reply)
    s.event(ev.ShuffleDoneMsg, "5.1", "after SHUFFLE")
    return "NAK(BUSY) while shuffling"


def dispense_needs_shuffle(s: Session) -> str:
    s.idle()
    s.refused(DispenseHand(), (NakReason.BAD_STATE,), "5.3", "in IDLE")
    return "NAK(BAD_STATE) in IDLE"


def _hand(s: Session, number: int) -> ev.HandReadyMsg:
    s.acked(DispenseHand(), "5.3")
    hand = s.event(ev.HandReadyMsg, "5.3", f"for hand {number}")
    if hand.hand_number != number:
        raise Nonconformance("5.6", f"HAND_READY numbered {hand.hand_number}, expected {number}")
    cards = " ".join(card.code for card in hand.cards)
    if len(set(hand.cards)) != len(hand.cards):
        raise Nonconformance("4", f"hand {number} repeats a card: {cards} (a deck has each "
                                  "card once)")
    if hand.exposed_mask:
        faults = s.status().faults
        if faults & EXPOSED_BIT:
            shown = " ".join(c.code for i, c in enumerate(hand.cards)
                             if hand.exposed_mask >> i & 1)
            raise Nonconformance("5.4", f"hand {number} ({cards}) presented with exposed mask "
                                        f"{hand.exposed_mask:#05b} ({shown} face up), and fault "
                                        "bit 6 raised for it; a card face up in a formed hand "
                                        "is reported by the mask only, never as a fault")
    return hand


def _lifted(s: Session, number: int, asked: list[bool]) -> None:
    """Wait for HAND_TAKEN; ask a person (once) when the device does not report it alone."""
    is_taken = lambda m: m.hand_number == number  # noqa: E731
    readies = [i for i, r in enumerate(s.wire.received)
               if isinstance(r.message, ev.HandReadyMsg) and r.message.hand_number == number]
    after = s.wire.received[readies[-1]:] if readies else []
    if any(isinstance(r.message, ev.HandTakenMsg) and is_taken(r.message) for r in after):
        return  # lifted already (it came while the kit waited for another reply)
    if s.wire.wait(lambda r: isinstance(r.message, ev.HandTakenMsg) and is_taken(r.message),
                   TAKEN_SECONDS):
        return
    if not asked[0]:
        s.physical(Action.LIFT_HANDS)
        asked[0] = True
    s.event(ev.HandTakenMsg, "5.1", f"for hand {number}", s.person_seconds, is_taken)


def dispense(s: Session) -> str:
    done = _shuffled(s)
    hand = _hand(s, 1)
    status = s.status()
    if status.cards_remaining != done.counted - len(hand.cards):
        raise Nonconformance("4", f"{status.cards_remaining} cards left after a hand of "
                                  f"{len(hand.cards)} from {done.counted}")
    note = f"hand 1: {len(hand.cards)} cards, exposed mask {hand.exposed_mask:#05b}"
    if status.state is DeviceState.HAND_WAITING:
        reply = s.ask(DispenseHand(), "5.3")
        if isinstance(reply.message, Nak) and reply.message.reason is NakReason.BAD_STATE:
            return note + "; DISPENSE_HAND refused while it waits"
        if isinstance(reply.message, Ack) and _lifted_before(s, 1, reply):
            s.event(ev.HandReadyMsg, "5.3", "for hand 2")
            return note + "; hand 1 was lifted before DISPENSE_HAND arrived (the refusal " \
                          "while it waits was not observable)"
        raise s.explained("5.3", f"DISPENSE_HAND while a hand is waiting answered "
                                 f"{reply.describe()}, expected NAK(BAD_STATE)", reply)
    return note


def _lifted_before(s: Session, number: int, reply: Received) -> bool:
    """Whether HAND_TAKEN for hand ``number`` arrived before ``reply``: a dealer lifted it
    while the command was on its way, so the state the command met was not the one the kit
    saw (a race, not a nonconformance)."""
    return any(isinstance(r.message, ev.HandTakenMsg) and r.message.hand_number == number
               for r in s.wire.received[:s.wire.received.index(reply)])


def end_round(s: Session) -> str:
    s.idle()
    s.acked(EndRound(), "5.7")  # idle: a no-op
    _shuffled(s)
    _hand(s, 1)
    waiting = s.status().state is DeviceState.HAND_WAITING
    s.acked(EndRound(), "5.7")
    taken = [r for r in s.wire.listen(0.5)
             if isinstance(r.message, ev.HandTakenMsg) and r.first_copy]
    after = s.status()
    if after.state is not DeviceState.IDLE:
        raise Nonconformance("5.7", f"not idle after END_ROUND: state {after.state.name}, "
                                    f"fault word 0x{after.faults:04X} "
                                    f"({fault_names(after.faults)})")
    if waiting and taken:
        raise Nonconformance("5.7", "HAND_TAKEN after END_ROUND collected the presented hand")
    return "ACK in idle, ready" + (" and hand waiting (no HAND_TAKEN)" if waiting else
                                   " (the hand was lifted before END_ROUND)")


def minimum_cards(s: Session) -> str:
    """17 hands of 3 from 52 leave 1 card: the 18th DISPENSE_HAND is NAK(BAD_STATE); hand
    numbers then start at 1 again after the next shuffle."""
    done = _shuffled(s)
    asked = [False]
    number = 0
    while s.status().cards_remaining >= HAND:
        number += 1
        _hand(s, number)
        _lifted(s, number, asked)
    left = s.status().cards_remaining
    s.refused(DispenseHand(), (NakReason.BAD_STATE,), "5.3", f"with {left} card(s) left")
    _shuffled(s)
    _hand(s, 1)
    s.acked(EndRound(), "5.7")
    return f"{number} hands from {done.counted}; refused with {left} left; numbering restarts"


def fault_clear_order(s: Session) -> str:
    _shuffled(s)
    s.physical(Action.CAUSE_FAULT)
    raised = s.event(ev.FaultRaisedMsg, "5.5", "after the fault was caused", MOVE_SECONDS)
    s.refused(DispenseHand(), (NakReason.BAD_STATE,), "4", "while a fault is active")
    s.refused(EndRound(), (NakReason.BAD_STATE,), "5.7", "while a fault is active")
    clear_fault_acked_first(
        s, lambda m: isinstance(m, ev.FaultClearedMsg) and m.fault is raised.fault,
        f"FAULT_CLEARED({raised.fault.value})", "5.5")
    status = s.status()
    if status.faults:
        raise Nonconformance("5.5", f"fault word 0x{status.faults:04X} after FAULT_CLEARED")
    return f"{raised.fault.value}: ACK, then FAULT_CLEARED; state {status.state.name.lower()}"


def shuffle_with_hand_waiting(s: Session) -> str:
    """SHUFFLE with a hand waiting MUST be NAK(BAD_STATE): the document's decision between
    the 5.1 table and the MAY of 5.2 (the presented cards are outside the machine; a shuffle
    now would shuffle a short deck and leave the hand on the tray)."""
    _shuffled(s)
    hand = _hand(s, 1)
    reply = s.ask(Shuffle(), "5.2")
    lifted = _lifted_before(s, 1, reply)
    if isinstance(reply.message, Nak) and reply.message.reason is NakReason.BAD_STATE:
        return "NAK(BAD_STATE) with hand 1 waiting"
    if lifted:
        if isinstance(reply.message, Ack):
            s.event(ev.ShuffleDoneMsg, "5.1", "after SHUFFLE")
        return "hand 1 was lifted before SHUFFLE arrived (the waiting state was not observable)"
    raise s.explained("5.2", f"SHUFFLE with hand {hand.hand_number} waiting answered "
                             f"{reply.describe()}, expected NAK(BAD_STATE)", reply)


def reboot(s: Session) -> str:
    """Shuffled, then power-cycled: the deck is forgotten (idle), and the SHUFFLE that
    follows raises event 1."""
    _shuffled(s)

    def shuffle_again(s: Session) -> ev.EventMessage:
        s.acked(Shuffle(), "5.8")
        return s.event(ev.ShuffleDoneMsg, "5.1", "after SHUFFLE")

    return check_reboot(s, shuffle_again)


SCENARIOS = LINK_SCENARIOS + (
    Scenario("replay", "a retried SEQ gets the stored reply, runs once", "3.2", replay),
    Scenario("event-resend", "event resent until EVENT_ACK; RESYNC re-run with backlog", "3.3",
             event_resend),
    Scenario("shuffle", "SHUFFLE from idle: ACK, SHUFFLE_DONE, READY", "5.1", shuffle),
    Scenario("shuffle-in-ready", "SHUFFLE in READY: BAD_STATE or (MAY) accepted", "5.2",
             shuffle_in_ready),
    Scenario("shuffle-hand-waiting", "SHUFFLE with a hand waiting -> NAK(BAD_STATE)", "5.2",
             shuffle_with_hand_waiting),
    Scenario("busy", "END_ROUND while shuffling -> NAK(BUSY)", "5.7", busy_while_shuffling),
    Scenario("dispense-needs-shuffle", "DISPENSE_HAND in idle -> NAK(BAD_STATE)", "5.3",
             dispense_needs_shuffle),
    Scenario("dispense", "DISPENSE_HAND: ACK, HAND_READY hand 1", "5.3", dispense),
    Scenario("end-round", "END_ROUND in idle, ready, hand waiting -> idle", "5.7", end_round),
    Scenario("minimum-cards", "fewer than 3 cards -> NAK(BAD_STATE); numbers restart", "5.3",
             minimum_cards, Action.LIFT_HANDS),
    Scenario("fault-clear-order", "fault blocks; CLEAR_FAULT: ACK, then FAULT_CLEARED", "5.5",
             fault_clear_order, Action.CAUSE_FAULT),
    Scenario("reboot", "power cycle: new boot id, idle, event ids from 1", "5.8", reboot,
             Action.POWER_CYCLE),
)
