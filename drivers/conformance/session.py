"""What a scenario works with: the wire, an operator for physical steps, and the verdicts.

A scenario returns a short note when the device conforms, raises :class:`Nonconformance` naming
the clause of docs/protocols.md it breaks, or raises :class:`NotRun` when it needs a person at
the device (lift a hand, open a door) and nobody is there. The steps every scenario shares
(ask and check the reply, wait for an event, bring the device back to idle) live here, so a
scenario reads as the exchange it checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, TypeVar

from drivers.conformance.wire import Received, Wire
from drivers.events import Fault
from drivers.framed.event_messages import EventMessage, FaultRaisedMsg, HandReadyMsg
from drivers.framed.messages import (
    Ack, ClearFault, DeviceState, EndRound, GetStatus, Message, Nak, NakReason, Resync,
    FAULT_BITS, StatusReply,
)

REPLY_SECONDS = 1.0
"""The longest a device may take to answer: the host's whole retry budget (protocols.md 3.2,
3.3: 0.25 s a try, the first try and 3 retries)."""
LOAD_MARGIN = 0.5
"""Added to every figure the kit waits for, so that a device that meets the document's figure
still passes on a loaded host (the kit measures arrival, not departure)."""
REPLY_WAIT = REPLY_SECONDS + LOAD_MARGIN
MOVE_SECONDS = 10.0
"""How long a shuffle or a hand may take before the kit calls the device stuck (the document
sets no figure; a mechanism slower than this is not one a table can use)."""
PERSON_SECONDS = 30.0
DRAIN_ROUNDS = 5
M = TypeVar("M", bound=Message)


class Nonconformance(Exception):
    """The device broke a MUST of docs/protocols.md; ``clause`` names it."""

    def __init__(self, clause: str, reason: str) -> None:
        super().__init__(f"protocols.md {clause}: {reason}")
        self.clause = clause
        self.reason = reason


class Unanswered(Nonconformance):
    """No reply at all within the budget (the runner stops after two in a row)."""


class NotKnownState(Exception):
    """The kit could not bring the device to a known state before a row (it says so)."""


class NotRun(Exception):
    """The scenario needs something the kit cannot do alone (a person at the device)."""


class Action(str, Enum):
    """Something only a person at the device can do."""

    CAUSE_FAULT = "cause_fault"
    LIFT_HANDS = "lift_hands"
    DRAW_CARD = "draw_card"
    OPEN_LID = "open_lid"
    POWER_CYCLE = "power_cycle"


INSTRUCTIONS = {
    Action.CAUSE_FAULT: "cause a fault that CLEAR_FAULT can clear (open the door and shut it "
                        "again, or jam a card), then press Enter",
    Action.LIFT_HANDS: "lift each hand as the shuffler presents it (up to 17), then press Enter "
                       "now",
    Action.DRAW_CARD: "draw one card from the shoe, then press Enter",
    Action.OPEN_LID: "open the shoe's lid and shut it again, then press Enter",
    Action.POWER_CYCLE: "switch the device off and on again, then press Enter",
}


SHORT = {
    Action.CAUSE_FAULT: "cause a fault CLEAR_FAULT can clear",
    Action.LIFT_HANDS: "lift the presented hands",
    Action.DRAW_CARD: "draw a card",
    Action.OPEN_LID: "open and shut the lid",
    Action.POWER_CYCLE: "switch the device off and on",
}


class Operator(Protocol):
    """A person at the device. ``act`` has the action done (the instruction shown, Enter
    pressed) and returns ``True``; ``False`` when nobody is there (the scenario is not run)."""

    def act(self, action: Action, instruction: str) -> bool: ...


class NoOperator:
    """Nobody at the device: physical steps are not run."""

    def act(self, action: Action, instruction: str) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class Scenario:
    """One row of the matrix: what it checks, the clause, and whether it needs a person."""

    key: str
    title: str
    clause: str
    run: Callable[[Any], str]
    needs: Action | None = None


def name(message: Message) -> str:
    return message.TYPE.name


class Bench:
    """What every session has: an operator for the physical steps."""

    def __init__(self, operator: Operator) -> None:
        self.operator = operator

    def physical(self, action: Action) -> None:
        instruction = INSTRUCTIONS[action]
        if not self.operator.act(action, instruction):
            raise NotRun(f"needs a person at the device to {SHORT[action]} "
                         "(run with --interactive)")

    def reset(self) -> None:
        """Undo what a scenario may have changed about the session (not the device)."""

    def prepare(self) -> str:
        """Bring the device to a known state before a row; a note when it could not."""
        return ""

    def blame(self, failure: Nonconformance) -> Nonconformance:
        """The failure as the clause that caused it (by default, as the row found it)."""
        return failure

    def breach(self, since: int | None = None) -> Nonconformance | None:
        """The first field out of the document's range in anything the device sent during
        the row (or from item ``since`` on; :mod:`drivers.conformance.fields`), which fails
        a row that passed otherwise; ``None`` for a device with nothing framed to check."""
        return None


class Session(Bench):
    """A framed device: the wire and the steps its scenarios share."""

    def __init__(self, wire: Wire, operator: Operator, *,
                 person_seconds: float = PERSON_SECONDS) -> None:
        super().__init__(operator)
        self.wire = wire
        self.person_seconds = person_seconds
        """How long a physical step may take to show on the wire (a person at the device)."""

        self._since = 0
        """Where the last command went out: an event it caused may come before its reply."""
        self._row_start = 0
        self._taken: set[int] = set()
        """Events (by index in ``wire.received``) a row has already taken."""
        self.draws = 0
        """Cards the kit had drawn (a person or a simulator's dealer): a shoe reports no more."""

    def reset(self) -> None:
        self.wire.auto_ack = True

    def breach(self, since: int | None = None) -> Nonconformance | None:
        for item in self.wire.received[self._row_start if since is None else since:]:
            if item.breach is not None:
                return Nonconformance(item.breach.clause, item.breach.reason)
        return None

    def physical(self, action: Action) -> None:
        super().physical(action)
        if action is Action.DRAW_CARD:
            self.draws += 1

    def prepare(self) -> str:
        """RESYNC (3.3) and drain: every event the device holds arrives and is acknowledged,
        and a round trip with no event copy before its reply shows none is left, so a row never
        takes an event an earlier row left behind. A device that cannot be brought there is
        still checked; the row says so."""
        self.wire.auto_ack = True
        self._row_start = len(self.wire.received)
        seq = self.wire.next_seq()
        self.wire.send(Resync(), seq)
        if self.wire.reply_to(seq, REPLY_WAIT) is None:
            self.wire.listen(0.3)
            self.wire.skip_seen()
            self._since = len(self.wire.received)
            return "no answer to the RESYNC that starts the row"
        for _ in range(DRAIN_ROUNDS):
            start = self.wire.mark()
            seq = self.wire.next_seq()
            self.wire.send(GetStatus(), seq)
            reply = self.wire.reply_to(seq, REPLY_WAIT)
            if reply is None:
                self.wire.skip_seen()
                self._since = len(self.wire.received)
                return "no answer to the GET_STATUS that drains events before the row"
            between = self.wire.received[start:self.wire.received.index(reply)]
            if not any(isinstance(r.message, EventMessage) for r in between):
                self.wire.skip_seen()
                self._since = len(self.wire.received)
                return ""
        self.wire.skip_seen()
        self._since = len(self.wire.received)
        return f"events still resent after {DRAIN_ROUNDS} rounds of EVENT_ACK"

    # commands -----------------------------------------------------------------------------
    def ask(self, message: Message, clause: str, *, seq: int | None = None) -> Received:
        """Send ``message`` and return its reply; no reply within the budget is a failure,
        and what came instead (a reply with another SEQ, a frame with a bad CRC) says why."""
        seq = self.wire.next_seq() if seq is None else seq
        start = self.wire.mark()
        self._since = start
        self.wire.send(message, seq)
        reply = self.wire.reply_to(seq, REPLY_WAIT)
        if reply is None:
            raise self.no_reply(clause, f"{name(message)} (SEQ {seq})", seq, start)
        if reply.breach is not None:
            raise Nonconformance(reply.breach.clause, reply.breach.reason)
        return reply

    def look_back_to(self, index: int) -> None:
        """Let :meth:`event` take events from ``index`` on (a command sent by hand)."""
        self._since = index

    def no_reply(self, clause: str, what: str, seq: int, start: int,
                 seq_clause: str = "2.1") -> Nonconformance:
        """The failure for ``what`` (sent with ``seq``) left unanswered: names what arrived
        in its place, if anything, and the clause that broke (``seq_clause`` for a reply with
        another SEQ: 2.1 says replies echo it, 2.3 says so for the NAK to a dropped frame)."""
        came = self.wire.received[start:]
        for item in came:
            if item.breach is not None and (item.is_reply or item.dropped is not None):
                return Nonconformance(item.breach.clause, f"{what} answered with a frame out "
                                                          f"of range: {item.breach.reason}")
            if item.dropped is not None and item.dropped.seq is not None:
                return Nonconformance("2.1", f"{what} answered with {item.describe()}; a "
                                             "frame MUST carry a CRC over VER..PAYLOAD")
            if item.frame is not None and item.message is None and item.frame.seq == seq:
                return Nonconformance("4", f"{what} answered with {item.describe()}")
            if item.is_reply and item.frame is not None and item.frame.seq != seq:
                return Nonconformance(seq_clause, f"{what} answered with {item.describe()}: "
                                                  f"a reply MUST echo the SEQ {seq} it answers")
        return Unanswered(clause, f"no reply to {what} within {REPLY_SECONDS:g} s "
                                  f"(waited {REPLY_WAIT:g} s)")

    def reply(self, message: Message, expected: type[M], clause: str) -> M:
        got = self.ask(message, clause)
        if not isinstance(got.message, expected):
            raise Nonconformance(clause, f"{name(message)} answered {got.describe()}, "
                                         f"expected {expected.TYPE.name}")
        return got.message

    def acked(self, message: Message, clause: str) -> Received:
        reply = self.ask(message, clause)
        if not isinstance(reply.message, Ack):
            raise self.explained(clause, f"{name(message)} answered {reply.describe()}, "
                                         "expected ACK", reply)
        return reply

    def refused(self, message: Message, reasons: tuple[NakReason, ...], clause: str,
                when: str) -> NakReason:
        reply = self.ask(message, clause)
        got = reply.message
        if not isinstance(got, Nak) or got.reason not in reasons:
            wanted = " or ".join(f"NAK({r.name})" for r in reasons)
            raise self.explained(clause, f"{name(message)} {when} answered "
                                         f"{reply.describe()}, expected {wanted}", reply)
        return got.reason

    def explained(self, clause: str, reason: str, reply: Received) -> Nonconformance:
        """A refusal the row did not expect, blamed on what caused it: a command refused
        NAK(BAD_STATE) because the device raised a fault by itself is the fault's clause
        (an exposed card in a formed hand is no fault at all: 5.4), not the command's."""
        if not (isinstance(reply.message, Nak) and reply.message.reason is NakReason.BAD_STATE):
            return Nonconformance(clause, reason)
        raised = [r.message for r in self.wire.received[:self.wire.received.index(reply)]
                  if isinstance(r.message, FaultRaisedMsg) and r.first_copy]
        if not raised:
            return Nonconformance(clause, reason)
        fault = raised[-1]
        return self.blame(Nonconformance(clause, f"{reason} (the device holds fault "
                                                 f"{fault.fault.value}: {fault.detail!r})"))

    def blame(self, failure: Nonconformance) -> Nonconformance:
        """A row that failed because the device raised fault bit 6 for a card the exposed
        mask of a hand it presented already showed fails 5.4 (no fault for it), not the
        clause of the step that tripped over the fault (END_ROUND refused, not idle)."""
        if failure.clause == "5.4":
            return failure
        hand: HandReadyMsg | None = None
        for r in self.wire.received[self._row_start:]:
            if isinstance(r.message, HandReadyMsg) and r.first_copy:
                hand = r.message
            elif isinstance(r.message, FaultRaisedMsg) and r.first_copy and hand is not None \
                    and hand.exposed_mask and r.message.fault is Fault.EXPOSED_CARD:
                return Nonconformance("5.4", f"fault bit 6 (exposed card, "
                                             f"{r.message.detail!r}) raised for hand "
                                             f"{hand.hand_number}, whose exposed mask "
                                             f"{hand.exposed_mask:#05b} already said it: a card "
                                             "face up in a formed hand is not a fault; so "
                                             f"{failure.reason}")
        return failure

    def status(self, clause: str = "4") -> StatusReply:
        return self.reply(GetStatus(), StatusReply, clause)

    # events -------------------------------------------------------------------------------
    def event(self, kind: type[M], clause: str, what: str, timeout: float = MOVE_SECONDS,
              match: Callable[[M], bool] = lambda m: True) -> M:
        """The next new event of ``kind`` (a resend of one seen before is not new), looking
        back to the last command sent: a slow device's event may overtake the reply the
        kit was waiting for."""
        def wanted(r: Received) -> bool:
            return isinstance(r.message, kind) and r.first_copy and match(r.message) \
                and id(r) not in self._taken

        got = next((r for r in self.wire.received[self._since:] if wanted(r)), None)
        if got is None:
            got = self.wire.wait(wanted, timeout)
        if got is None:
            raise self._missing(kind, clause, what, timeout)
        self._taken.add(id(got))
        assert isinstance(got.message, kind) and got.frame is not None
        if got.breach is not None:  # SEQ 0, an id from 1, each field in range (.fields)
            raise Nonconformance(got.breach.clause, got.breach.reason)
        return got.message

    def _missing(self, kind: type[Message], clause: str, what: str,
                 timeout: float) -> Nonconformance:
        """Why an awaited event did not come, blamed on what came instead when that broke
        a clause of its own: a frame the kit could not take, an event id used again."""
        came = self.wire.received[self._since:]
        for r in came:
            if r.breach is not None:
                return Nonconformance(r.breach.clause, f"no {kind.TYPE.name} {what}; instead "
                                                       f"{r.breach.reason}")
            if r.reused and isinstance(r.message, EventMessage):
                return Nonconformance("3.4", f"no new {kind.TYPE.name} {what}: "
                                             f"{r.describe()} reuses event id "
                                             f"{r.message.event_id} for another event")
            if r.dropped is not None and r.dropped.seq is not None:
                return Nonconformance("2.1", f"no {kind.TYPE.name} {what}; instead "
                                             f"{r.describe()}")
            if r.frame is not None and r.message is None:
                return Nonconformance("4", f"no {kind.TYPE.name} {what}; instead "
                                           f"{r.describe()}")
        events = [r.message for r in came if isinstance(r.message, EventMessage)
                  and r.first_copy]
        seen = "; meanwhile " + ", ".join(
            f"{m.TYPE.name} {m.event_id}" for m in events[-5:]) if events else ""
        return Nonconformance(clause, f"no {kind.TYPE.name} {what} within {timeout:g} s{seen}")

    # shared preparation ---------------------------------------------------------------------
    def idle(self) -> None:
        """Bring the device to idle: clear faults, let the mechanism stop, END_ROUND."""
        status = self.status()
        if status.faults:
            self.acked(ClearFault(), "5.5")
            self.wire.listen(0.2)
            status = self.status()
            if status.faults:
                raise NotRun(f"the device holds fault word 0x{status.faults:04X} "
                             f"({fault_names(status.faults)}); clear its cause and run again")
        deadline = self.wire.clock() + MOVE_SECONDS
        while status.state in (DeviceState.SHUFFLING, DeviceState.DISPENSING):
            if self.wire.clock() > deadline:
                raise Nonconformance("5.1", f"still {status.state.name} after "
                                            f"{MOVE_SECONDS:g} s")
            self.wire.listen(0.2)
            status = self.status()
        if status.state is not DeviceState.IDLE:
            self.acked(EndRound(), "5.7")
        if self.status().state is not DeviceState.IDLE:
            raise Nonconformance("5.7", "not idle after END_ROUND")


def fault_names(word: int) -> str:
    """A fault word as the document names its bits: ``jam (bit 1), door open (bit 0)``."""
    names = [f"{fault.value.replace('_', ' ')} (bit {bit})"
             for bit, fault in enumerate(FAULT_BITS) if word & (1 << bit)]
    return ", ".join(names) or "none"
