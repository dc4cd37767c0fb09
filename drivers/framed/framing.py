"""Frames of the framed link: delimiters, byte stuffing, header, CRC (docs/protocols.md).

Wire form::

    STX  stuffed( VER SEQ TYPE LEN_HI LEN_LO PAYLOAD... CRC_HI CRC_LO )  ETX
    0x02                                                                 0x03

Inside the delimiters the bytes ``0x02``, ``0x03`` and ``0x10`` are sent as ``0x10, b ^ 0x20``
(DLE stuffing), so a delimiter can never occur inside a frame. That is what lets a receiver
resynchronise after noise or a truncated frame: every STX starts a fresh frame, whatever came
before it. The CRC (CRC-16/CCITT-FALSE) covers VER..PAYLOAD, unstuffed.

:func:`scan` is pure and incremental: give it the buffer, it says how many bytes it used and
returns a :class:`Frame`, a :class:`Dropped` (bad bytes, with why) or ``None`` (need more bytes).
:class:`FrameDecoder` wraps it for a reader thread and counts every drop.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum

from drivers.framed.crc import crc16

STX = 0x02
ETX = 0x03
DLE = 0x10
ESCAPE_XOR = 0x20
VERSION = 1
HEADER = struct.Struct(">BBBH")  # version, seq, type, payload length
HEADER_SIZE = HEADER.size
CRC_SIZE = 2
MIN_BODY = HEADER_SIZE + CRC_SIZE
MAX_PAYLOAD = 512
MAX_WIRE = 2 + 2 * (MIN_BODY + MAX_PAYLOAD)
_SPECIAL = (STX, ETX, DLE)


class DropReason(str, Enum):
    """Why bytes were discarded; each drop is counted and logged by the receiver."""

    GARBAGE = "garbage"          # bytes outside any frame
    TRUNCATED = "truncated"      # a new STX arrived before this frame's ETX
    TOO_LONG = "too_long"        # no ETX within the largest legal frame
    BAD_ESCAPE = "bad_escape"    # DLE followed by a byte that is not an escaped special
    SHORT = "short"              # fewer bytes than header + CRC
    LENGTH = "length"            # LEN disagrees with the bytes received
    CRC = "crc"                  # CRC mismatch
    VERSION = "version"          # a protocol version we do not speak


@dataclass(frozen=True, slots=True)
class Frame:
    """One valid frame. ``type`` is the raw type byte; :mod:`messages` gives it meaning."""

    seq: int
    type: int
    payload: bytes = b""
    version: int = VERSION


@dataclass(frozen=True, slots=True)
class Dropped:
    """Bytes discarded by the decoder. ``seq``/``type`` are set when the header was readable, so a
    device can NAK a corrupted command with the sequence number the host is waiting on."""

    reason: DropReason
    size: int
    seq: int | None = None
    type: int | None = None


def stuff(body: bytes) -> bytes:
    """Escape STX/ETX/DLE inside a frame body."""
    if not any(b in body for b in (b"\x02", b"\x03", b"\x10")):
        return body
    out = bytearray()
    for byte in body:
        if byte in _SPECIAL:
            out += bytes((DLE, byte ^ ESCAPE_XOR))
        else:
            out.append(byte)
    return bytes(out)


def unstuff(data: bytes) -> bytes | None:
    """Undo :func:`stuff`; ``None`` if an escape is malformed."""
    if DLE not in data:
        return data
    out = bytearray()
    escaped = False
    for byte in data:
        if escaped:
            value = byte ^ ESCAPE_XOR
            if value not in _SPECIAL:
                return None
            out.append(value)
            escaped = False
        elif byte == DLE:
            escaped = True
        else:
            out.append(byte)
    return None if escaped else bytes(out)


def encode(frame: Frame) -> bytes:
    """The wire bytes of ``frame``."""
    if len(frame.payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(frame.payload)} bytes exceeds {MAX_PAYLOAD}")
    if not (0 <= frame.seq <= 255 and 0 <= frame.type <= 255):
        raise ValueError(f"seq and type must be bytes, got seq={frame.seq} type={frame.type}")
    body = HEADER.pack(frame.version, frame.seq, frame.type, len(frame.payload)) + frame.payload
    body += crc16(body).to_bytes(2, "big")
    return bytes((STX,)) + stuff(body) + bytes((ETX,))


def encode_frame(seq: int, type_: int, payload: bytes = b"") -> bytes:
    """Shorthand for ``encode(Frame(seq, type_, payload))``."""
    return encode(Frame(seq, type_, payload))


def _check(body: bytes) -> Frame | Dropped:
    size = len(body) + 2
    if len(body) < MIN_BODY:
        return Dropped(DropReason.SHORT, size)
    version, seq, type_, length = HEADER.unpack_from(body)
    if length != len(body) - MIN_BODY:
        return Dropped(DropReason.LENGTH, size, seq, type_)
    if crc16(body[:-CRC_SIZE]) != int.from_bytes(body[-CRC_SIZE:], "big"):
        return Dropped(DropReason.CRC, size, seq, type_)
    if version != VERSION:
        return Dropped(DropReason.VERSION, size, seq, type_)
    return Frame(seq, type_, bytes(body[HEADER_SIZE:-CRC_SIZE]), version)


def scan(buf: bytes | bytearray) -> tuple[int, Frame | Dropped | None]:
    """Decode at most one item from the front of ``buf``.

    Returns ``(consumed, item)``: a :class:`Frame`, a :class:`Dropped` describing discarded bytes,
    or ``None`` with ``consumed == 0`` when the buffer holds only the start of a frame.
    """
    if not buf:
        return 0, None
    start = buf.find(STX)
    if start < 0:
        return len(buf), Dropped(DropReason.GARBAGE, len(buf))
    if start > 0:
        return start, Dropped(DropReason.GARBAGE, start)
    end = buf.find(ETX, 1)
    again = buf.find(STX, 1)
    if again >= 0 and (end < 0 or again < end):
        return again, Dropped(DropReason.TRUNCATED, again)
    if end < 0:
        if len(buf) > MAX_WIRE:
            return len(buf), Dropped(DropReason.TOO_LONG, len(buf))
        return 0, None
    body = unstuff(bytes(buf[1:end]))
    if body is None:
        return end + 1, Dropped(DropReason.BAD_ESCAPE, end + 1)
    return end + 1, _check(body)


def decode(buf: bytes | bytearray) -> tuple[int, Frame | None]:
    """Like :func:`scan` but without the drop details: ``(consumed, frame or None)``.

    ``consumed > 0`` with ``None`` means bytes were discarded; call again on the rest.
    """
    consumed, item = scan(buf)
    return consumed, item if isinstance(item, Frame) else None


class FrameDecoder:
    """Incremental decoder for a reader thread: feed chunks, get frames and drops, never raises."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.frames = 0
        self.dropped_frames = 0
        self.dropped_bytes = 0

    def feed(self, data: bytes) -> list[Frame | Dropped]:
        """Append ``data``; return every complete item now decodable, in order."""
        self._buf += data
        out: list[Frame | Dropped] = []
        while self._buf:
            consumed, item = scan(self._buf)
            if consumed == 0:
                break
            del self._buf[:consumed]
            if isinstance(item, Frame):
                self.frames += 1
            elif item is not None:
                self.dropped_frames += 1
                self.dropped_bytes += item.size
            if item is not None:
                out.append(item)
        return out

    def reset(self) -> None:
        """Forget a partial frame (after a reconnect the old bytes mean nothing)."""
        self._buf.clear()

    @property
    def pending(self) -> int:
        """Bytes held waiting for the rest of a frame."""
        return len(self._buf)
