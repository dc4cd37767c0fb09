"""Commands and events every framed device shares: identify, status, meters, event mapping.

The shuffler and the framed shoe differ only in a few commands; both turn link messages into the
typed, frozen :mod:`drivers.events` values the table consumes. Given ``on_identity``, a device
asks itself ``IDENTIFY`` on every link-up and after every reboot, off the reader thread, and
hands on a new identity ahead of the events that follow it (:mod:`drivers.framed.identify`).
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from drivers.errors import CommandRejected, DeviceFault, ProtocolError
from drivers.events import (
    ButtonPressed, CardRead, CardSetDispensed, DeviceEvent, DeviceIdentity, DoubleFeed, Fault,
    FaultCleared, FaultRaised, ForeignCard, HandTaken, NoRead, ShuffleDone,
)
from drivers.framed import event_messages as ev
from drivers.framed.identify import IDENTIFY_ATTEMPTS, LinkIdentifier, OnIdentity
from drivers.framed.link import FramedLink
from drivers.framed.messages import (
    CARD_BURN, CARD_EXPOSED, ClearFault, DeviceState, GetMeters, GetStatus, Heartbeat, Identify,
    IdentityReply, Message, MetersReply, NakReason, StatusReply, faults_from_word,
)
from drivers.transport import SerialTransport, Transport

M = TypeVar("M", bound=Message)


@dataclass(frozen=True, slots=True)
class DeviceStatus:
    """A status reply: state, active faults and counts. Never the cards or their order."""

    state: DeviceState
    faults: frozenset[Fault]
    boot_id: int
    hand_number: int
    cards_remaining: int


@dataclass(frozen=True, slots=True)
class Meters:
    """Lifetime counters (the device's own, surviving reboots)."""

    shuffles: int
    hands: int
    cards: int
    faults: int


def make_transport(target: str | Transport, **options: Any) -> Transport:
    """A URL string becomes a :class:`SerialTransport`; a ready transport is used as is."""
    if isinstance(target, Transport):
        return target
    return SerialTransport(target, **options)


class FramedDevice(FramedLink):
    """A device on the framed link: blocking commands, typed events onto the queue."""

    def __init__(self, target: str | Transport, events: queue.Queue[DeviceEvent], *,
                 name: str, transport_options: dict[str, Any] | None = None,
                 on_identity: OnIdentity | None = None,
                 identify_attempts: int = IDENTIFY_ATTEMPTS, **link_options: Any) -> None:
        super().__init__(name, make_transport(target, **(transport_options or {})), events,
                         **link_options)
        self.identity: DeviceIdentity | None = None  # type: ignore[assignment]
        self.faults: frozenset[Fault] = frozenset()
        self.identifier = LinkIdentifier(name, self.identify, super().emit, on_identity,
                                         attempts=identify_attempts, jitter=self.jitter) \
            if on_identity is not None else None
        """Asks IDENTIFY on each link-up and reboot (only when someone records the answer)."""

    # life cycle: the identifier's thread beside the reader ------------------------------------
    def start(self) -> None:
        if self.identifier is not None:
            self.identifier.start()
        super().start()

    def close(self) -> None:
        if self.identifier is not None:
            self.identifier.stop()
        super().close()
        if self.identifier is not None:
            self.identifier.join()

    def emit(self, event: DeviceEvent) -> None:
        """Onto the table's queue, unless held until the device is identified."""
        if self.identifier is None or not self.identifier.hold(event):
            super().emit(event)

    def on_connected(self) -> None:
        if self.identifier is not None:
            self.identifier.begin("link up")
        super().on_connected()

    def on_reboot(self) -> None:
        if self.identifier is not None:  # another machine may be on the port now
            self.identifier.begin("reboot")
        super().on_reboot()

    def _ask(self, message: Message, expected: type[M]) -> M:
        reply = self.request(message)
        if not isinstance(reply, expected):
            raise ProtocolError(f"{self.name}: {message.TYPE.name} answered with "
                                f"{reply.TYPE.name}, expected {expected.TYPE.name}")
        return reply

    def identify(self) -> DeviceIdentity:
        reply = self._ask(Identify(), IdentityReply)
        self.identity = DeviceIdentity(reply.vendor, reply.model, reply.serial,
                                       reply.firmware_version, reply.firmware_hash,
                                       reply.protocol_version)
        return self.identity

    def status(self) -> DeviceStatus:
        reply = self._ask(GetStatus(), StatusReply)
        self.faults = faults_from_word(reply.faults)
        return DeviceStatus(reply.state, self.faults, reply.boot_id, reply.hand_number,
                            reply.cards_remaining)

    def meters(self) -> Meters:
        reply = self._ask(GetMeters(), MetersReply)
        return Meters(reply.shuffles, reply.hands, reply.cards, reply.faults)

    def clear_fault(self) -> None:
        """Clear faults the operator has fixed (jam, door, lid); FaultCleared follows each."""
        self._command(ClearFault())

    def _command(self, message: Message) -> None:
        """A command answered by ACK; BAD_STATE while a fault is active is a DeviceFault."""
        try:
            self.request(message)
        except CommandRejected as error:
            if error.reason is NakReason.BAD_STATE and self.faults:
                active = ", ".join(sorted(f.value for f in self.faults))
                raise DeviceFault(f"{self.name} cannot {message.TYPE.name}: fault {active}") \
                    from error
            raise

    # events -------------------------------------------------------------------------------
    def on_heartbeat(self, beat: Heartbeat) -> None:
        self.faults = faults_from_word(beat.faults)

    def on_event(self, message: ev.EventMessage) -> None:
        convert = _CONVERT.get(type(message))
        if convert is None:
            self.log.info("unhandled_event", type=message.TYPE.name)
            return
        event = replace(convert(self.name, self.clock(), message), origin=self.origin(message))
        if isinstance(event, FaultRaised):
            self.faults = self.faults | {event.fault}
        elif isinstance(event, FaultCleared):
            self.faults = self.faults - {event.fault}
        self.emit(event)


def _lid(name: str, at: float, m: ev.LidMsg) -> DeviceEvent:
    if m.open:
        return FaultRaised(name, at, fault=Fault.LID_OPEN, detail="lid open")
    return FaultCleared(name, at, fault=Fault.LID_OPEN)


_CONVERT: dict[type, Callable[[str, float, Any], DeviceEvent]] = {
    ev.ShuffleDoneMsg: lambda n, t, m: ShuffleDone(n, t, counted=m.counted, expected=m.expected),
    ev.HandReadyMsg: lambda n, t, m: CardSetDispensed(n, t, cards=m.cards,
                                                      hand_number=m.hand_number,
                                                      exposed=m.exposed),
    ev.HandTakenMsg: lambda n, t, m: HandTaken(n, t, hand_number=m.hand_number),
    ev.FaultRaisedMsg: lambda n, t, m: FaultRaised(n, t, fault=m.fault, detail=m.detail),
    ev.FaultClearedMsg: lambda n, t, m: FaultCleared(n, t, fault=m.fault),
    ev.CardMsg: lambda n, t, m: CardRead(n, t, card=m.card, index_in_shoe=m.index_in_shoe,
                                         burn=bool(m.flags & CARD_BURN),
                                         exposed=bool(m.flags & CARD_EXPOSED)),
    ev.NoReadMsg: lambda n, t, m: NoRead(n, t, index_in_shoe=m.index_in_shoe),
    ev.DoubleFeedMsg: lambda n, t, m: DoubleFeed(n, t),
    ev.LidMsg: _lid,
    ev.ButtonMsg: lambda n, t, m: ButtonPressed(n, t, button=m.button.name.lower()),
    ev.ForeignMsg: lambda n, t, m: ForeignCard(n, t, barcode=m.barcode),
}
