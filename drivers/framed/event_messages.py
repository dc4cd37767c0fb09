"""Device events of the framed link (docs/protocols.md, "Events").

Every event payload starts with a 16-bit event id. The device resends an event until the host
answers ``EVENT_ACK(event_id)``; the host acknowledges every copy but acts on an id only once, so
a lost acknowledgement can never deal a card twice.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import ClassVar

from controller.games.cards import Card
from drivers.errors import ProtocolError
from drivers.framed.messages import (
    Button, Message, MsgType, _fixed, _string, _strings, _unpack, card_byte, card_from_byte,
    fault_from_code,
)
from drivers.events import Fault
from drivers.framed.messages import FAULT_BITS


class EventMessage(Message):
    """Base of device events: ``event_id`` is the first field of every one."""

    __slots__ = ()
    event_id: int


@dataclass(frozen=True, slots=True)
class ShuffleDoneMsg(EventMessage):
    event_id: int
    counted: int
    expected: int
    TYPE: ClassVar[MsgType] = MsgType.SHUFFLE_DONE
    FORMAT: ClassVar[struct.Struct] = _fixed("HBB")


@dataclass(frozen=True, slots=True)
class HandReadyMsg(EventMessage):
    """The three cards of a hand (two or four when the shuffler misforms a set); ``exposed`` is a
    bit mask over the positions of cards the shuffler saw face up."""

    event_id: int
    hand_number: int
    cards: tuple[Card, ...]
    exposed_mask: int = 0
    TYPE: ClassVar[MsgType] = MsgType.HAND_READY

    def encode(self) -> bytes:
        return (struct.pack(">HHB", self.event_id, self.hand_number, len(self.cards))
                + bytes(card_byte(c) for c in self.cards) + bytes((self.exposed_mask,)))

    @classmethod
    def decode(cls, payload: bytes) -> HandReadyMsg:
        if len(payload) < 6:
            raise ProtocolError(f"HAND_READY payload too short: {len(payload)} bytes")
        event_id, hand, count = struct.unpack_from(">HHB", payload)
        if not 1 <= count <= 8 or len(payload) != 5 + count + 1:
            raise ProtocolError(f"HAND_READY says {count} cards but carries "
                                f"{len(payload) - 6} card bytes")
        cards = tuple(card_from_byte(b) for b in payload[5:5 + count])
        return cls(event_id, hand, cards, payload[-1])

    @property
    def exposed(self) -> tuple[Card, ...]:
        return tuple(c for i, c in enumerate(self.cards) if self.exposed_mask & (1 << i))


@dataclass(frozen=True, slots=True)
class HandTakenMsg(EventMessage):
    event_id: int
    hand_number: int
    TYPE: ClassVar[MsgType] = MsgType.HAND_TAKEN
    FORMAT: ClassVar[struct.Struct] = _fixed("HH")


@dataclass(frozen=True, slots=True)
class FaultRaisedMsg(EventMessage):
    event_id: int
    fault: Fault
    detail: str = ""
    TYPE: ClassVar[MsgType] = MsgType.FAULT_RAISED

    def encode(self) -> bytes:
        return struct.pack(">HB", self.event_id, FAULT_BITS.index(self.fault)) \
            + _string(self.detail)

    @classmethod
    def decode(cls, payload: bytes) -> FaultRaisedMsg:
        if len(payload) < 4:
            raise ProtocolError(f"FAULT_RAISED payload too short: {len(payload)} bytes")
        event_id, code = struct.unpack_from(">HB", payload)
        (detail,), used = _strings(payload[3:], 1)
        if 3 + used != len(payload):
            raise ProtocolError("FAULT_RAISED has trailing bytes")
        return cls(event_id, fault_from_code(code), detail)


@dataclass(frozen=True, slots=True)
class FaultClearedMsg(EventMessage):
    event_id: int
    fault: Fault
    TYPE: ClassVar[MsgType] = MsgType.FAULT_CLEARED

    def encode(self) -> bytes:
        return struct.pack(">HB", self.event_id, FAULT_BITS.index(self.fault))

    @classmethod
    def decode(cls, payload: bytes) -> FaultClearedMsg:
        if len(payload) != 3:
            raise ProtocolError(f"FAULT_CLEARED payload must be 3 bytes, got {len(payload)}")
        event_id, code = struct.unpack(">HB", payload)
        return cls(event_id, fault_from_code(code))


@dataclass(frozen=True, slots=True)
class CardMsg(EventMessage):
    """The framed shoe read a card: its index in the shoe and burn/exposed flags."""

    event_id: int
    index_in_shoe: int
    card: Card
    flags: int = 0
    TYPE: ClassVar[MsgType] = MsgType.CARD

    def encode(self) -> bytes:
        return struct.pack(">HHBB", self.event_id, self.index_in_shoe, card_byte(self.card),
                           self.flags)

    @classmethod
    def decode(cls, payload: bytes) -> CardMsg:
        if len(payload) != 6:
            raise ProtocolError(f"CARD payload must be 6 bytes, got {len(payload)}")
        event_id, index, code, flags = struct.unpack(">HHBB", payload)
        return cls(event_id, index, card_from_byte(code), flags)


@dataclass(frozen=True, slots=True)
class NoReadMsg(EventMessage):
    event_id: int
    index_in_shoe: int
    TYPE: ClassVar[MsgType] = MsgType.NO_READ
    FORMAT: ClassVar[struct.Struct] = _fixed("HH")


@dataclass(frozen=True, slots=True)
class DoubleFeedMsg(EventMessage):
    event_id: int
    index_in_shoe: int
    TYPE: ClassVar[MsgType] = MsgType.DOUBLE_FEED
    FORMAT: ClassVar[struct.Struct] = _fixed("HH")


@dataclass(frozen=True, slots=True)
class LidMsg(EventMessage):
    event_id: int
    open: bool
    TYPE: ClassVar[MsgType] = MsgType.LID

    def encode(self) -> bytes:
        return struct.pack(">HB", self.event_id, 1 if self.open else 0)

    @classmethod
    def decode(cls, payload: bytes) -> LidMsg:
        event_id, state = _unpack_fmt(cls, ">HB", payload)
        if state > 1:
            raise ProtocolError(f"LID state must be 0 or 1, got {state}")
        return cls(event_id, bool(state))


@dataclass(frozen=True, slots=True)
class ButtonMsg(EventMessage):
    event_id: int
    button: Button
    TYPE: ClassVar[MsgType] = MsgType.BUTTON
    FORMAT: ClassVar[struct.Struct] = _fixed("HB")

    @classmethod
    def decode(cls, payload: bytes) -> ButtonMsg:
        event_id, code = _unpack(cls, payload)
        try:
            return cls(event_id, Button(code))
        except ValueError as e:
            raise ProtocolError(f"unknown button {code}") from e


@dataclass(frozen=True, slots=True)
class ForeignMsg(EventMessage):
    """A card whose barcode is not of this deck; the barcode is reported as read."""

    event_id: int
    index_in_shoe: int
    barcode: str
    TYPE: ClassVar[MsgType] = MsgType.FOREIGN

    def encode(self) -> bytes:
        return struct.pack(">HH", self.event_id, self.index_in_shoe) + _string(self.barcode)

    @classmethod
    def decode(cls, payload: bytes) -> ForeignMsg:
        if len(payload) < 5:
            raise ProtocolError(f"FOREIGN payload too short: {len(payload)} bytes")
        event_id, index = struct.unpack_from(">HH", payload)
        (barcode,), used = _strings(payload[4:], 1)
        if 4 + used != len(payload):
            raise ProtocolError("FOREIGN has trailing bytes")
        return cls(event_id, index, barcode)


def _unpack_fmt(cls: type[Message], fmt: str, payload: bytes) -> tuple[int, ...]:
    size = struct.calcsize(fmt)
    if len(payload) != size:
        raise ProtocolError(f"{cls.TYPE.name} payload must be {size} bytes, got {len(payload)}")
    return struct.unpack(fmt, payload)
