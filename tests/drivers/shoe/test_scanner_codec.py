"""Serial barcode-scanner line decoder: terminators, prefix/suffix, AIM ids, garbage, fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.shoe.codes import Garbage, ScannedCode
from drivers.shoe.scanner_codec import MAX_DISCARD, ScannerCodec

from .streams import chunk_sizes, decode_all, mutated

FUZZ = settings(max_examples=1500, deadline=None)
codes = (st.text(alphabet="0123456789ABCDKPSZ-_/ #!~", min_size=1, max_size=20)
         .map(str.strip).filter(bool))
endings = st.sampled_from([b"\r", b"\n", b"\r\n"])


@pytest.fixture(name="codec")
def fixture_codec() -> ScannerCodec:
    return ScannerCodec()


@pytest.mark.parametrize("ending", [b"\r", b"\n", b"\r\n"])
def test_each_terminator_ends_a_code(codec, ending):
    """CR, LF and CRLF each end exactly one code."""
    messages, rest = decode_all(codec.decode, b"100101" + ending + b"100102" + ending)
    assert messages == [ScannedCode("100101"), ScannedCode("100102")]
    assert rest == b""


def test_crlf_split_across_reads_gives_one_code(codec):
    """A CRLF split over two reads yields the code on CR and skips the lone LF."""
    messages, _ = decode_all(codec.decode, b"100101\r\n100102\r\n", chunks=[7])
    assert messages == [ScannedCode("100101"), ScannedCode("100102")]


def test_partial_line_waits(codec):
    """Without a terminator the decoder consumes nothing and waits."""
    assert codec.decode(b"1001") == (0, None)


def test_aim_identifier_is_stripped_and_reported(codec):
    """An AIM symbology id in front of the code is reported separately."""
    assert codec.decode(b"]C1100138\r")[1] == ScannedCode("100138", "]C1")


def test_prefix_and_suffix_are_required_when_configured():
    """Configured STX/ETX wrap the code; a line without them is garbage."""
    codec = ScannerCodec(prefix=b"\x02", suffix=b"\x03")
    assert codec.decode(b"\x02KP417-S01\x03\r")[1] == ScannedCode("KP417-S01")
    assert isinstance(codec.decode(b"KP417-S01\r")[1], Garbage)
    assert isinstance(codec.decode(b"\x02KP417-S01\r")[1], Garbage)


def test_noise_and_overlong_lines_are_garbage(codec):
    """Non-ASCII, non-printable and over-long lines come back as Garbage, not exceptions."""
    assert isinstance(codec.decode(b"\x00\xff\r")[1], Garbage)
    assert isinstance(codec.decode(b"9" * 81 + b"\r")[1], Garbage)


def test_overlong_line_trickled_is_dropped_up_to_its_terminator(codec):
    """An 81+ byte line that arrives one byte per read, ending in a card's digits, is dropped
    whole, up to and including its CR, and reported once; the line after it is read. (The
    phantom of issue 10: its tail ``100110`` came out as TS.)"""
    line = b"X" * 81 + b"100110\r\n"
    messages, rest = decode_all(codec.decode, line + b"100101\r\n", chunks=[1] * len(line))
    assert [type(m) for m in messages] == [Garbage, ScannedCode]
    assert messages[0].dropped == len(line) - 1  # up to its CR; the LF is a blank line
    assert messages[1] == ScannedCode("100101")
    assert rest == b""


def test_overlong_line_whole_in_one_read_is_dropped(codec):
    """The same over-long line in one read is one Garbage and no code."""
    messages, _ = decode_all(codec.decode, b"9" * 200 + b"100110\r")
    assert [type(m) for m in messages] == [Garbage]


def test_endless_line_is_reported_once_per_max_discard(codec):
    """A stream that never ends a line is dropped and reported once per MAX_DISCARD bytes,
    not once per read; the buffer does not grow."""
    messages, rest = decode_all(codec.decode, b"7" * (2 * MAX_DISCARD), chunks=[13] * 700)
    assert [type(m) for m in messages] == [Garbage] and rest == b""
    assert MAX_DISCARD <= messages[0].dropped < MAX_DISCARD + 13


def test_reset_ends_a_discarded_line(codec):
    """After reset() (a reconnect) the next bytes start a new line, not the dropped one's tail."""
    codec.decode(b"9" * 100)
    codec.reset()
    assert codec.decode(b"100101\r") == (7, ScannedCode("100101"))


@pytest.mark.parametrize("line", [b"100110  \r", b"  100110\t\r", b"]C1100110 \r"])
def test_surrounding_whitespace_is_stripped(codec, line):
    """Spaces or tabs around a code (some scanners pad to a fixed width) are not part of it."""
    assert codec.decode(line)[1].text == "100110"


def test_blank_line_is_garbage_not_a_code(codec):
    """A line of spaces is no barcode."""
    assert isinstance(codec.decode(b"   \r")[1], Garbage)


@FUZZ
@given(data=st.binary(max_size=300), chunks=chunk_sizes)
def test_random_bytes_never_raise(data, chunks):
    """Arbitrary bytes in arbitrary chunks never raise and never stall the decoder."""
    codec = ScannerCodec(prefix=b"\x02", suffix=b"\x03")
    _, rest = decode_all(codec.decode, data, chunks)
    assert b"\r" not in rest and b"\n" not in rest


@settings(max_examples=500, deadline=None)
@given(lines=st.lists(st.tuples(codes, endings), min_size=1, max_size=10), chunks=chunk_sizes)
def test_valid_streams_decode_the_same_in_any_chunking(lines, chunks):
    """However the reads split the stream, the same codes come out in order."""
    data = b"".join(code.encode() + end for code, end in lines)
    messages, rest = decode_all(ScannerCodec().decode, data, chunks)
    assert messages == [ScannedCode(code) for code, _ in lines]
    assert rest == b""


@settings(max_examples=1000, deadline=None)
@given(data=st.data(), lines=st.lists(codes, min_size=1, max_size=6), last=codes)
def test_mutated_streams_resynchronise(data, lines, last):
    """After any corruption, the first clean line after a terminator decodes exactly."""
    noisy = data.draw(mutated(b"".join(c.encode() + b"\r\n" for c in lines)))
    messages, _ = decode_all(ScannerCodec().decode, noisy + b"\n" + last.encode() + b"\r\n")
    assert messages[-1] == ScannedCode(last)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(codes, min_size=2, max_size=6), bad=st.integers(0, 5))
def test_bad_line_is_counted_and_neighbours_survive(lines, bad):
    """A line with a control byte is one Garbage; every other line still decodes."""
    bad %= len(lines)
    raw = [c.encode() for c in lines]
    raw[bad] = raw[bad][:1] + b"\x07" + raw[bad][1:]
    messages, _ = decode_all(ScannerCodec().decode, b"\r\n".join(raw) + b"\r\n")
    assert sum(isinstance(m, Garbage) for m in messages) == 1
    assert [m for m in messages if isinstance(m, ScannedCode)] == [
        ScannedCode(c) for i, c in enumerate(lines) if i != bad]
