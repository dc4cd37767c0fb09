"""Every field of every frame a device sends, checked against the ranges docs/protocols.md gives.

The scenarios judge behaviour (what answers what, in which order); this module judges content:
each frame the kit receives is parsed here, from the document's words alone (the layout of
section 2.1, the stuffing of 2.2, the CRC as ``binascii.crc_hqx(data, 0xFFFF)``, the payloads of
section 4 and the ranges of sections 3 to 6), never with our codec, so a device and our driver
that share a misreading of the document cannot pass each other. A field out of its range is a
:class:`Breach` naming the clause that gives the range, what arrived and what was allowed.

The layouts are a table (:data:`LAYOUTS`), one row per message a device may send, so that a
reviewer can check it against section 4 line by line. A frame whose CRC is wrong, whose escape
is bad or that is cut short is left to the rows that judge the link (2.3); a frame of another
version or whose ``LEN`` disagrees with its bytes is judged here, since its CRC says the device
meant it.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass
from enum import Enum

STX, ETX, DLE = 0x02, 0x03, 0x10
"""2.1, 2.2: the delimiters and the escape byte."""
VERSION = 0x01
"""2.1: ``VER`` of this document."""
MAX_LEN = 512
"""2.1: ``LEN`` is at most 512."""
HEADER_BYTES = 5
"""2.1: ``VER SEQ TYPE LEN_HI LEN_LO``."""
FAULT_WORD_BITS = 0x03FF
"""4: the fault word's bits 0 (door open) to 9 (lid open); no other bit has a meaning."""
STATES = range(0, 7)
"""4: states 0 idle to 6 dealing (shoe)."""
RANKS = range(2, 15)
"""4: a card byte's rank, 2..14 (Ace = 14)."""
SUITS = range(0, 4)
"""4: a card byte's suit, 0 S, 1 H, 2 D, 3 C."""


class Kind(str, Enum):
    """How a field is laid out in a payload (section 4: integers big-endian)."""

    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    STRING = "string"
    """4: a length byte followed by UTF-8."""
    CARDS = "cards"
    """4: one card byte each, as many as the field named ``count`` before it says."""


SIZES = {Kind.U8: 1, Kind.U16: 2, Kind.U32: 4}


@dataclass(frozen=True, slots=True)
class Field:
    """One payload field and its range: ``low..high`` for a value, ``bits`` for a mask
    (``bits_of``: a mask with one bit per card of the field it names), and the clause that
    gives the range."""

    name: str
    kind: Kind
    low: int = 0
    high: int | None = None
    bits: int | None = None
    bits_of: str | None = None
    clause: str = "4"


@dataclass(frozen=True, slots=True)
class Layout:
    """A message a device may send: its name, its ``SEQ`` rule and its fields, in order."""

    name: str
    seq_zero: bool
    """2.1: unsolicited device frames (events, heartbeats) carry ``SEQ`` 0; replies echo the
    command's, 1..255 (a ``NAK`` may carry 0: the answer to a corrupted ``EVENT_ACK``, 2.3)."""
    fields: tuple[Field, ...] = ()
    seq_any: bool = False


EVENT_ID = Field("event id", Kind.U16, 1, 0xFFFF, clause="3.4")
"""3.4: ids run 1..65535; 0 is never an id."""
INDEX = Field("index in shoe", Kind.U16, 1, 0xFFFF, clause="6")
"""6: the index counts the cards out of the shoe since it was loaded; the first is 1."""
FAULT_BIT = Field("fault bit number", Kind.U8, 0, 9)
FAULT_WORD = Field("fault word", Kind.U16, bits=FAULT_WORD_BITS)
STATE = Field("state", Kind.U8, STATES.start, STATES.stop - 1)
BOOT_ID = Field("boot id", Kind.U32, 1, 0xFFFFFFFF, clause="3.6")
"""3.6: a boot id is never 0."""
HAND_NUMBER = Field("hand number", Kind.U16, 1, 0xFFFF, clause="5.6")
"""5.6: hand numbers count from 1."""

LAYOUTS: dict[int, Layout] = {
    0x06: Layout("ACK", False),
    0x15: Layout("NAK", False, (Field("reason", Kind.U8, 1, 5),), seq_any=True),
    0x40: Layout("IDENTITY", False, (
        Field("vendor", Kind.STRING), Field("model", Kind.STRING), Field("serial", Kind.STRING),
        Field("firmware version", Kind.STRING), Field("firmware hash", Kind.STRING),
        Field("protocol version", Kind.U8, VERSION, VERSION, clause="2.1"))),
    0x41: Layout("STATUS", False, (
        STATE, FAULT_WORD, BOOT_ID, Field("hand number", Kind.U16),
        Field("cards remaining", Kind.U8))),
    0x46: Layout("METERS", False, (
        Field("shuffles", Kind.U32), Field("hands", Kind.U32), Field("cards", Kind.U32),
        Field("faults", Kind.U32))),
    0x50: Layout("HEARTBEAT", True, (BOOT_ID, Field("uptime ms", Kind.U32), STATE, FAULT_WORD)),
    0x60: Layout("SHUFFLE_DONE", True, (
        EVENT_ID, Field("counted", Kind.U8),
        Field("expected", Kind.U8, 52, 52, clause="5"))),
    0x61: Layout("HAND_READY", True, (
        EVENT_ID, HAND_NUMBER, Field("count", Kind.U8, 2, 4, clause="5.1"),
        Field("cards", Kind.CARDS), Field("exposed mask", Kind.U8, bits_of="cards"))),
    0x62: Layout("HAND_TAKEN", True, (EVENT_ID, HAND_NUMBER)),
    0x63: Layout("FAULT_RAISED", True, (EVENT_ID, FAULT_BIT, Field("detail", Kind.STRING))),
    0x64: Layout("FAULT_CLEARED", True, (EVENT_ID, FAULT_BIT)),
    0x70: Layout("CARD", True, (
        EVENT_ID, INDEX, Field("card", Kind.CARDS), Field("flags", Kind.U8, bits=0b11))),
    0x71: Layout("NO_READ", True, (EVENT_ID, INDEX)),
    0x72: Layout("DOUBLE_FEED", True, (EVENT_ID, INDEX)),
    0x73: Layout("LID", True, (EVENT_ID, Field("open", Kind.U8, 0, 1))),
    0x74: Layout("BUTTON", True, (EVENT_ID, Field("button", Kind.U8, 1, 3))),
    0x75: Layout("FOREIGN", True, (EVENT_ID, INDEX, Field("barcode", Kind.STRING))),
}
"""Section 4's table, the device -> host rows, with each field's range and its clause. Ranges
not in the table's own words: ``count`` 2..4 (5.1: normally three, two or four when a set is
misformed), ``expected`` 52 (5: a 52-card deck), ``exposed mask`` one bit per card (5.4), a
CARD's one card byte (``count`` 1), ``index in shoe`` from 1 (6)."""


@dataclass(frozen=True, slots=True)
class Breach:
    """A field out of the range the document gives: the clause and what was wrong."""

    clause: str
    reason: str


def unstuff(data: bytes) -> bytes | None:
    """2.2: ``10 xx`` stands for ``xx ^ 0x20``; ``None`` when an escape is malformed."""
    out = bytearray()
    escaped = False
    for byte in data:
        if escaped:
            out.append(byte ^ 0x20)
            escaped = False
        elif byte == DLE:
            escaped = True
        else:
            out.append(byte)
    return None if escaped else bytes(out)


def check_frame(raw: bytes) -> Breach | None:
    """The first field of the frame ``raw`` (``STX .. ETX`` as it came off the line) that
    breaks the document's range, or ``None``: a frame the link rows judge (bad CRC or
    escape, cut short) is ``None`` here."""
    if len(raw) < 2 or raw[0] != STX or raw[-1] != ETX:
        return None
    body = unstuff(raw[1:-1])
    if body is None or len(body) < HEADER_BYTES + 2:
        return None
    if binascii.crc_hqx(body[:-2], 0xFFFF) != int.from_bytes(body[-2:], "big"):
        return None
    version, seq, type_ = body[0], body[1], body[2]
    length = int.from_bytes(body[3:5], "big")
    payload = body[HEADER_BYTES:-2]
    shown = raw.hex(" ").upper()
    if version != VERSION:
        return Breach("2.1", f"a frame with VER 0x{version:02X} [{shown}]; a device of this "
                             f"document sends VER 0x{VERSION:02X}")
    if length > MAX_LEN:
        return Breach("2.1", f"a frame with LEN {length} [{shown}]; LEN is at most {MAX_LEN}")
    if length != len(payload):
        return Breach("2.1", f"a frame whose LEN says {length} with {len(payload)} payload "
                             f"bytes [{shown}]")
    layout = LAYOUTS.get(type_)
    if layout is None:
        return Breach("4", f"a frame of TYPE 0x{type_:02X} [{shown}]: no message a device "
                           "sends has that type")
    if layout.seq_zero and seq != 0:
        return Breach("2.1", f"{layout.name} with SEQ {seq} [{shown}]: an event or heartbeat "
                             "MUST carry SEQ 0")
    if not layout.seq_zero and not layout.seq_any and seq == 0:
        return Breach("2.1", f"{layout.name} with SEQ 0 [{shown}]: a reply echoes its "
                             "command's SEQ, 1..255")
    breach = check_payload(layout, payload)
    return None if breach is None else Breach(breach.clause, f"{breach.reason} [{shown}]")


def check_payload(layout: Layout, payload: bytes) -> Breach | None:
    """The first field of ``payload`` (a ``layout`` message's) out of its range, a payload
    too short for its fields, or bytes left over after them."""
    values: dict[str, int] = {}
    at = 0
    for field in layout.fields:
        if field.kind is Kind.STRING:
            if at >= len(payload) or at + 1 + payload[at] > len(payload):
                return _short(layout, field, payload)
            text = payload[at + 1:at + 1 + payload[at]]
            at += 1 + payload[at]
            try:
                text.decode("utf-8")
            except UnicodeDecodeError:
                return Breach("4", f"{layout.name} {field.name} {text.hex(' ').upper()} is "
                                   "not UTF-8")
            continue
        if field.kind is Kind.CARDS:
            count = values.get("count", 1)
            if at + count > len(payload):
                return _short(layout, field, payload)
            for byte in payload[at:at + count]:
                if byte >> 4 not in RANKS or byte & 0x0F not in SUITS:
                    return Breach("4", f"{layout.name} card byte 0x{byte:02X}: rank "
                                       f"{byte >> 4}, suit {byte & 0x0F}; a card is rank "
                                       "2..14 << 4 | suit 0..3")
            values[field.name] = count
            at += count
            continue
        size = SIZES[field.kind]
        if at + size > len(payload):
            return _short(layout, field, payload)
        value = int.from_bytes(payload[at:at + size], "big")
        at += size
        values[field.name] = value
        breach = _out_of_range(layout, field, value, values)
        if breach is not None:
            return breach
    if at != len(payload):
        return Breach("4", f"{layout.name} payload of {len(payload)} bytes; its fields "
                           f"take {at}")
    return None


def _out_of_range(layout: Layout, field: Field, value: int,
                  values: dict[str, int]) -> Breach | None:
    if field.bits_of is not None:
        width = values[field.bits_of]
        if value >> width:
            return Breach(field.clause, f"{layout.name} {field.name} {value:#010b} has a bit "
                                        f"past its {width} cards")
        return None
    if field.bits is not None:
        if value & ~field.bits:
            return Breach(field.clause, f"{layout.name} {field.name} 0x{value:04X} sets bits "
                                        f"0x{value & ~field.bits:04X}, which have no meaning "
                                        f"(defined: 0x{field.bits:04X})")
        return None
    high = (1 << 8 * SIZES[field.kind]) - 1 if field.high is None else field.high
    if not field.low <= value <= high:
        allowed = str(field.low) if field.low == high else f"{field.low}..{high}"
        return Breach(field.clause, f"{layout.name} {field.name} {value}; expected {allowed}")
    return None


def _short(layout: Layout, field: Field, payload: bytes) -> Breach:
    return Breach("4", f"{layout.name} payload of {len(payload)} bytes ends before its "
                       f"{field.name}")
