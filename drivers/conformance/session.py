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
from drivers.framed.messages import (
    Ack, ClearFault, DeviceState, EndRound, GetStatus, Message, Nak, NakReason, StatusReply,
)

REPLY_SECONDS = 1.0
"""How long the kit waits for a reply: the host's whole retry budget (protocols.md 3.2)."""
MOVE_SECONDS = 10.0
"""How long a shuffle or a hand may take before the kit calls the device stuck."""
M = TypeVar("M", bound=Message)


class Nonconformance(Exception):
    """The device broke a MUST of docs/protocols.md; ``clause`` names it."""

    def __init__(self, clause: str, reason: str) -> None:
        super().__init__(f"protocols.md {clause}: {reason}")
        self.clause = clause
        self.reason = reason


class Unanswered(Nonconformance):
    """No reply at all within the budget (the runner stops after two in a row)."""


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


class Session(Bench):
    """A framed device: the wire and the steps its scenarios share."""

    def __init__(self, wire: Wire, operator: Operator) -> None:
        super().__init__(operator)
        self.wire = wire

    def reset(self) -> None:
        self.wire.auto_ack = True

    # commands -----------------------------------------------------------------------------
    def ask(self, message: Message, clause: str, *, seq: int | None = None) -> Received:
        """Send ``message`` and return its reply; no reply within the budget is a failure."""
        seq = self.wire.next_seq() if seq is None else seq
        self.wire.send(message, seq)
        reply = self.wire.reply_to(seq, REPLY_SECONDS)
        if reply is None:
            raise Unanswered(clause, f"no reply to {name(message)} (SEQ {seq}) within "
                                     f"{REPLY_SECONDS:g} s")
        return reply

    def reply(self, message: Message, expected: type[M], clause: str) -> M:
        got = self.ask(message, clause).message
        if not isinstance(got, expected):
            raise Nonconformance(clause, f"{name(message)} answered {_what(got)}, expected "
                                         f"{expected.TYPE.name}")
        return got

    def acked(self, message: Message, clause: str) -> Received:
        reply = self.ask(message, clause)
        if not isinstance(reply.message, Ack):
            raise Nonconformance(clause, f"{name(message)} answered {_what(reply.message)}, "
                                         "expected ACK")
        return reply

    def refused(self, message: Message, reasons: tuple[NakReason, ...], clause: str,
                when: str) -> NakReason:
        got = self.ask(message, clause).message
        if not isinstance(got, Nak) or got.reason not in reasons:
            wanted = " or ".join(f"NAK({r.name})" for r in reasons)
            raise Nonconformance(clause, f"{name(message)} {when} answered {_what(got)}, "
                                         f"expected {wanted}")
        return got.reason

    def status(self, clause: str = "4") -> StatusReply:
        return self.reply(GetStatus(), StatusReply, clause)

    # events -------------------------------------------------------------------------------
    def event(self, kind: type[M], clause: str, what: str, timeout: float = MOVE_SECONDS,
              match: Callable[[M], bool] = lambda m: True) -> M:
        got = self.wire.wait(lambda r: isinstance(r.message, kind) and match(r.message),
                             timeout)
        if got is None:
            raise Nonconformance(clause, f"no {kind.TYPE.name} {what} within {timeout:g} s")
        assert isinstance(got.message, kind)
        return got.message

    # shared preparation ---------------------------------------------------------------------
    def idle(self) -> None:
        """Bring the device to idle: clear faults, let the mechanism stop, END_ROUND."""
        status = self.status()
        if status.faults:
            self.acked(ClearFault(), "5.5")
            self.wire.listen(0.2)
            status = self.status()
            if status.faults:
                raise NotRun(f"the device holds fault word 0x{status.faults:04X}; clear its "
                             "cause and run again")
        moving = (DeviceState.SHUFFLING, DeviceState.DISPENSING)
        if status.state in moving:
            self.wire.listen(MOVE_SECONDS / 10)
            status = self.status()
        if status.state is not DeviceState.IDLE:
            self.acked(EndRound(), "5.7")
        if self.status().state is not DeviceState.IDLE:
            raise Nonconformance("5.7", "not idle after END_ROUND")


def _what(message: Message | None) -> str:
    if isinstance(message, Nak):
        return f"NAK({message.reason.name})"
    return "an undecodable frame" if message is None else message.TYPE.name
