"""CRC, framing and message decoding: unit cases plus hypothesis fuzzing of random and mutated
byte streams. The decoder must never raise, must always resynchronise, and must count every
dropped frame."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.errors import ProtocolError
from drivers.framed.codec import MESSAGE_CLASSES, decode_message
from drivers.framed.crc import CHECK_VALUE, crc16
from drivers.framed.framing import (
    MAX_PAYLOAD, DropReason, Dropped, Frame, FrameDecoder, decode, encode, scan, stuff, unstuff,
)

FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

frames = st.builds(Frame, seq=st.integers(0, 255), type=st.integers(0, 255),
                   payload=st.binary(max_size=64))


def test_crc_check_value() -> None:
    """CRC-16/CCITT-FALSE of '123456789' is 0x29B1 (the variant's published check value)."""
    assert crc16(b"123456789") == CHECK_VALUE == 0x29B1


def _crc_bitwise(data: bytes) -> int:
    """CRC-16/CCITT-FALSE straight from its definition, one bit at a time."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


@given(st.binary(max_size=300), st.integers(0, 300))
def test_crc_matches_the_definition_and_continues(data: bytes, cut: int) -> None:
    """crc16 is the bit-by-bit CRC-16/CCITT-FALSE for any data, and a running CRC continued
    over the rest of the data gives the same value."""
    assert crc16(data) == _crc_bitwise(data)
    assert crc16(data[cut:], crc16(data[:cut])) == crc16(data)


def test_stuffing_hides_delimiters() -> None:
    """STX, ETX and DLE inside a frame are escaped, so neither delimiter occurs inside."""
    wire = encode(Frame(0x02, 0x03, b"\x10\x02\x03"))
    assert wire.count(b"\x02") == 1 and wire.count(b"\x03") == 1
    assert unstuff(stuff(b"\x02\x03\x10x")) == b"\x02\x03\x10x"


def test_incomplete_frame_waits() -> None:
    """A frame without its ETX yet consumes nothing and returns None."""
    wire = encode(Frame(1, 0x20))
    assert scan(wire[:-1]) == (0, None)
    assert decode(wire) == (len(wire), Frame(1, 0x20))


@pytest.mark.parametrize(("data", "reason"), [
    (b"junk", DropReason.GARBAGE),
    (b"\x02\x01\x03", DropReason.SHORT),
    (b"\x02\x10\x41\x03", DropReason.BAD_ESCAPE),
])
def test_drop_reasons(data: bytes, reason: DropReason) -> None:
    """Garbage, short frames and bad escapes are dropped with a reason naming the problem."""
    consumed, item = scan(data)
    assert consumed > 0 and isinstance(item, Dropped) and item.reason is reason


def test_crc_error_keeps_header_for_nak() -> None:
    """A CRC error still reports the header's seq and type, so a device can NAK it."""
    wire = bytearray(encode(Frame(9, 0x23)))
    wire[-2] ^= 0x40
    _, item = scan(bytes(wire))
    assert isinstance(item, Dropped) and (item.reason, item.seq, item.type) == (DropReason.CRC, 9, 0x23)


def test_truncated_frame_resynchronises() -> None:
    """A frame cut short by the next STX is dropped as truncated and the next frame decodes."""
    good = encode(Frame(2, 0x21))
    decoder = FrameDecoder()
    items = decoder.feed(good[:4] + good)
    assert isinstance(items[0], Dropped) and items[0].reason is DropReason.TRUNCATED
    assert items[1] == Frame(2, 0x21)
    assert decoder.dropped_frames == 1


def test_oversize_is_dropped() -> None:
    """A start with no end within the largest legal frame is dropped, not buffered forever."""
    decoder = FrameDecoder()
    items = decoder.feed(b"\x02" + b"A" * 3000)
    assert isinstance(items[-1], Dropped) and items[-1].reason is DropReason.TOO_LONG
    assert decoder.pending == 0
    with pytest.raises(ValueError, match="exceeds"):
        encode(Frame(1, 1, b"x" * (MAX_PAYLOAD + 1)))


@settings(FAST, max_examples=3000)
@given(frame=frames)
def test_roundtrip(frame: Frame) -> None:
    """Every frame survives encode/decode."""
    wire = encode(frame)
    assert decode(wire) == (len(wire), frame)


@settings(FAST, max_examples=3000)
@given(data=st.lists(st.binary(max_size=40), max_size=8))
def test_random_streams_never_raise(data: list[bytes]) -> None:
    """Random bytes, fed in random chunks: no exception, every byte accounted for."""
    decoder = FrameDecoder()
    total = 0
    for chunk in data:
        for item in decoder.feed(chunk):
            assert isinstance(item, (Frame, Dropped))
        total += len(chunk)
    assert decoder.pending <= total


@settings(FAST, max_examples=3000)
@given(before=st.lists(frames, max_size=3), after=frames, noise=st.binary(max_size=30),
       cut=st.integers(0, 40), flips=st.lists(st.tuples(st.integers(0, 200), st.integers(1, 255)),
                                               max_size=4),
       split=st.integers(1, 17))
def test_mutated_streams_resynchronise(before: list[Frame], after: Frame, noise: bytes, cut: int,
                                       flips: list[tuple[int, int]], split: int) -> None:
    """Valid frames mutated (bits flipped, truncated, noise inserted) then followed by one clean
    frame: the clean frame is always recovered, nothing raises, and each bad frame is counted."""
    stream = bytearray(b"".join(encode(f) for f in before) + noise)
    for position, mask in flips:
        if stream:
            stream[position % len(stream)] ^= mask
    stream = stream[: max(0, len(stream) - cut)]
    stream += encode(after)
    decoder = FrameDecoder()
    items: list[Frame | Dropped] = []
    for start in range(0, len(stream), split):
        items.extend(decoder.feed(bytes(stream[start:start + split])))
    assert items and items[-1] == after
    assert decoder.dropped_frames == sum(isinstance(i, Dropped) for i in items)
    assert decoder.pending == 0


@settings(FAST, max_examples=2000)
@given(type_=st.sampled_from(sorted(MESSAGE_CLASSES)), payload=st.binary(max_size=40))
def test_message_decoders_only_raise_protocol_error(type_: int, payload: bytes) -> None:
    """Any payload under any known type decodes or raises ProtocolError, never anything else,
    and what decodes re-encodes to the same payload."""
    try:
        message = decode_message(Frame(1, type_, payload))
    except ProtocolError:
        return
    assert message.encode() == payload


def test_unknown_type_is_protocol_error() -> None:
    """An unknown type byte is a ProtocolError naming it."""
    with pytest.raises(ProtocolError, match="0xEE"):
        decode_message(Frame(1, 0xEE))
