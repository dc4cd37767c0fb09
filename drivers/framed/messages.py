"""Messages of the framed link: one frozen dataclass per frame type (docs/protocols.md).

Each class has ``TYPE`` (the frame type byte), ``encode() -> payload`` and
``decode(payload) -> instance``; :func:`decode_message` picks the class from the type byte and
raises :class:`ProtocolError` naming the problem for anything malformed. Integers are big-endian.
A card is one byte, ``rank << 4 | suit`` (rank 2..14, suit 0..3 = S H D C), so ``TD`` is ``0xA2``
and hex dumps stay readable.

No message carries the order of undealt cards: a shuffler reports counts, never the deck.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, fields
from enum import IntEnum
from typing import ClassVar

from controller.games.cards import Card, Rank, Suit
from drivers.errors import ProtocolError
from drivers.events import Fault

SUIT_CODES: tuple[Suit, ...] = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)
# Bit n of the 16-bit fault word is FAULT_BITS[n].
FAULT_BITS: tuple[Fault, ...] = (
    Fault.DOOR_OPEN, Fault.JAM, Fault.COUNT_MISMATCH, Fault.UNREADABLE_CARD, Fault.FOREIGN_CARD,
    Fault.DUPLICATE_CARD, Fault.EXPOSED_CARD, Fault.REVERSED_CARD, Fault.NOT_SHUFFLED,
    Fault.LID_OPEN,
)


class MsgType(IntEnum):
    """Frame type byte. 0x2x host commands, 0x4x replies, 0x50 heartbeat, 0x6x/0x7x events."""

    ACK = 0x06
    NAK = 0x15
    IDENTIFY = 0x20
    GET_STATUS = 0x21
    SHUFFLE = 0x22
    DISPENSE_HAND = 0x23
    END_ROUND = 0x24
    CLEAR_FAULT = 0x25
    GET_METERS = 0x26
    EVENT_ACK = 0x27
    RESYNC = 0x28
    IDENTITY = 0x40
    STATUS = 0x41
    METERS = 0x46
    HEARTBEAT = 0x50
    SHUFFLE_DONE = 0x60
    HAND_READY = 0x61
    HAND_TAKEN = 0x62
    FAULT_RAISED = 0x63
    FAULT_CLEARED = 0x64
    CARD = 0x70
    NO_READ = 0x71
    DOUBLE_FEED = 0x72
    LID = 0x73
    BUTTON = 0x74
    FOREIGN = 0x75


class NakReason(IntEnum):
    CRC = 1
    LENGTH = 2
    UNKNOWN = 3
    BUSY = 4
    BAD_STATE = 5


class DeviceState(IntEnum):
    IDLE = 0          # no shuffled deck: shuffle first
    SHUFFLING = 1
    READY = 2         # shuffled; a hand can be dispensed
    DISPENSING = 3
    HAND_WAITING = 4  # a hand is presented and not yet taken
    FAULT = 5
    DEALING = 6       # shoe: cards are being drawn


class Button(IntEnum):
    DEAL = 1
    BURN = 2
    END = 3


CARD_BURN = 0x01
CARD_EXPOSED = 0x02


def card_byte(card: Card) -> int:
    return (int(card.rank) << 4) | SUIT_CODES.index(card.suit)


def card_from_byte(value: int) -> Card:
    rank, suit = value >> 4, value & 0x0F
    if not (2 <= rank <= 14 and suit < 4):
        raise ProtocolError(f"not a card byte: 0x{value:02X}")
    return Card(Rank(rank), SUIT_CODES[suit])


def faults_to_word(faults: frozenset[Fault] | set[Fault]) -> int:
    return sum(1 << FAULT_BITS.index(f) for f in faults)


def faults_from_word(word: int) -> frozenset[Fault]:
    return frozenset(f for bit, f in enumerate(FAULT_BITS) if word & (1 << bit))


def fault_from_code(code: int) -> Fault:
    if code >= len(FAULT_BITS):
        raise ProtocolError(f"unknown fault code {code}")
    return FAULT_BITS[code]


def _strings(payload: bytes, count: int) -> tuple[list[str], int]:
    """``count`` u8-length-prefixed UTF-8 strings from the front of ``payload``."""
    out, pos = [], 0
    for _ in range(count):
        if pos >= len(payload):
            raise ProtocolError("string field missing")
        size = payload[pos]
        chunk = payload[pos + 1:pos + 1 + size]
        if len(chunk) != size:
            raise ProtocolError(f"string field of {size} bytes is cut short")
        try:
            out.append(chunk.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise ProtocolError(f"string field is not UTF-8: {chunk!r}") from e
        pos += 1 + size
    return out, pos


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")[:255]
    return bytes((len(raw),)) + raw


class Message:
    """Base: subclasses are frozen dataclasses with a fixed ``TYPE``."""

    __slots__ = ()
    TYPE: ClassVar[MsgType]
    FORMAT: ClassVar[struct.Struct | None] = None  # fixed-size payloads

    def encode(self) -> bytes:
        assert self.FORMAT is not None
        return self.FORMAT.pack(*(getattr(self, f.name) for f in fields(self)))  # type: ignore[arg-type]

    @classmethod
    def decode(cls, payload: bytes) -> Message:
        fmt = cls.FORMAT
        assert fmt is not None
        if len(payload) != fmt.size:
            raise ProtocolError(f"{cls.TYPE.name} payload must be {fmt.size} bytes, "
                                f"got {len(payload)}")
        return cls(*fmt.unpack(payload))


def _fixed(fmt: str) -> struct.Struct:
    return struct.Struct(">" + fmt)


# --- link and commands ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Ack(Message):
    TYPE: ClassVar[MsgType] = MsgType.ACK
    FORMAT: ClassVar[struct.Struct] = _fixed("")


@dataclass(frozen=True, slots=True)
class Nak(Message):
    reason: NakReason
    TYPE: ClassVar[MsgType] = MsgType.NAK
    FORMAT: ClassVar[struct.Struct] = _fixed("B")

    @classmethod
    def decode(cls, payload: bytes) -> Nak:
        if len(payload) != 1:
            raise ProtocolError(f"NAK payload must be 1 byte, got {len(payload)}")
        try:
            return cls(NakReason(payload[0]))
        except ValueError as e:
            raise ProtocolError(f"unknown NAK reason {payload[0]}") from e


@dataclass(frozen=True, slots=True)
class Identify(Message):
    TYPE: ClassVar[MsgType] = MsgType.IDENTIFY
    FORMAT: ClassVar[struct.Struct] = _fixed("")


@dataclass(frozen=True, slots=True)
class GetStatus(Message):
    TYPE: ClassVar[MsgType] = MsgType.GET_STATUS
    FORMAT: ClassVar[struct.Struct] = _fixed("")


@dataclass(frozen=True, slots=True)
class Shuffle(Message):
    TYPE: ClassVar[MsgType] = MsgType.SHUFFLE
    FORMAT: ClassVar[struct.Struct] = _fixed("")


@dataclass(frozen=True, slots=True)
class DispenseHand(Message):
    TYPE: ClassVar[MsgType] = MsgType.DISPENSE_HAND
    FORMAT: ClassVar[struct.Struct] = _fixed("")


@dataclass(frozen=True, slots=True)
class EndRound(Message):
    TYPE: ClassVar[MsgType] = MsgType.END_ROUND
    FORMAT: ClassVar[struct.Struct] = _fixed("")


@dataclass(frozen=True, slots=True)
class Resync(Message):
    """Sent by the host on every connection: "resend what you hold, then answer". The device
    sends a heartbeat and every unacknowledged event in id order, then ACKs, so everything it
    held before this host connected arrives ahead of anything new (docs/protocols.md)."""

    TYPE: ClassVar[MsgType] = MsgType.RESYNC
    FORMAT: ClassVar[struct.Struct] = _fixed("")


@dataclass(frozen=True, slots=True)
class ClearFault(Message):
    TYPE: ClassVar[MsgType] = MsgType.CLEAR_FAULT
    FORMAT: ClassVar[struct.Struct] = _fixed("")


@dataclass(frozen=True, slots=True)
class GetMeters(Message):
    TYPE: ClassVar[MsgType] = MsgType.GET_METERS
    FORMAT: ClassVar[struct.Struct] = _fixed("")


@dataclass(frozen=True, slots=True)
class EventAck(Message):
    event_id: int
    TYPE: ClassVar[MsgType] = MsgType.EVENT_ACK
    FORMAT: ClassVar[struct.Struct] = _fixed("H")


# --- replies -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class IdentityReply(Message):
    vendor: str
    model: str
    serial: str
    firmware_version: str
    firmware_hash: str
    protocol_version: int
    TYPE: ClassVar[MsgType] = MsgType.IDENTITY

    def encode(self) -> bytes:
        return b"".join(_string(s) for s in (self.vendor, self.model, self.serial,
                                             self.firmware_version, self.firmware_hash)) \
            + bytes((self.protocol_version,))

    @classmethod
    def decode(cls, payload: bytes) -> IdentityReply:
        fields, pos = _strings(payload, 5)
        if len(payload) != pos + 1:
            raise ProtocolError("IDENTITY must end with one protocol-version byte")
        return cls(*fields, payload[pos])


@dataclass(frozen=True, slots=True)
class StatusReply(Message):
    state: DeviceState
    faults: int         # fault word, see FAULT_BITS
    boot_id: int
    hand_number: int
    cards_remaining: int  # a count only: never which cards, never their order
    TYPE: ClassVar[MsgType] = MsgType.STATUS
    FORMAT: ClassVar[struct.Struct] = _fixed("BHIHB")

    @classmethod
    def decode(cls, payload: bytes) -> StatusReply:
        state, faults, boot_id, hand, remaining = _unpack(cls, payload)
        return cls(_state(state), faults, boot_id, hand, remaining)


@dataclass(frozen=True, slots=True)
class MetersReply(Message):
    shuffles: int
    hands: int
    cards: int
    faults: int
    TYPE: ClassVar[MsgType] = MsgType.METERS
    FORMAT: ClassVar[struct.Struct] = _fixed("IIII")


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    boot_id: int
    uptime_ms: int
    state: DeviceState
    faults: int
    TYPE: ClassVar[MsgType] = MsgType.HEARTBEAT
    FORMAT: ClassVar[struct.Struct] = _fixed("IIBH")

    @classmethod
    def decode(cls, payload: bytes) -> Heartbeat:
        boot_id, uptime, state, faults = _unpack(cls, payload)
        return cls(boot_id, uptime, _state(state), faults)


def _unpack(cls: type[Message], payload: bytes) -> tuple[int, ...]:
    fmt = cls.FORMAT
    assert fmt is not None
    if len(payload) != fmt.size:
        raise ProtocolError(f"{cls.TYPE.name} payload must be {fmt.size} bytes, got {len(payload)}")
    return fmt.unpack(payload)


def _state(code: int) -> DeviceState:
    try:
        return DeviceState(code)
    except ValueError as e:
        raise ProtocolError(f"unknown device state {code}") from e
