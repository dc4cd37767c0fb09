"""HID boot-keyboard decoder: Shift, held keys, rollover, Enter, garbage, fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.shoe.codes import Garbage, ScannedCode
from drivers.shoe.hid_codec import REPORT_SIZE, HidKeyboardCodec, keyboard_report_id, reports_for

from .streams import decode_all, mutated

ENTER = bytes([0, 0, 0x28, 0, 0, 0, 0, 0])
RELEASE = bytes(REPORT_SIZE)
texts = st.text(alphabet="0123456789abcdefKPSZ-_/!#", min_size=1, max_size=16)


def report(*keys: int, mod: int = 0) -> bytes:
    return bytes([mod, 0, *keys, *([0] * (6 - len(keys)))])


@pytest.fixture(name="codec")
def fixture_codec() -> HidKeyboardCodec:
    return HidKeyboardCodec()


def test_shift_selects_upper_case_and_symbols(codec):
    """Left or right Shift turns usages into upper case and shifted symbols."""
    stream = (report(0x0E, mod=0x02) + RELEASE + report(0x13) + RELEASE
              + report(0x1E, mod=0x20) + RELEASE + report(0x2D, mod=0x02) + RELEASE + ENTER)
    assert decode_all(codec.decode, stream)[0] == [ScannedCode("Kp!_")]


def test_key_held_across_reports_counts_once(codec):
    """A key still down in the next report (rollover, repeated report) is one character."""
    stream = report(0x1E) + report(0x1E) + report(0x1E, 0x1F) + report(0x1F) + RELEASE + ENTER
    assert decode_all(codec.decode, stream)[0] == [ScannedCode("12")]


def test_error_rollover_report_is_ignored(codec):
    """ErrorRollOver phantom reports neither type nor release keys."""
    stream = report(0x1E) + report(1, 1, 1, 1, 1, 1) + report(0x1E) + RELEASE + ENTER
    assert decode_all(codec.decode, stream)[0] == [ScannedCode("1")]


def test_enter_alone_produces_nothing(codec):
    """An empty line (Enter only) is not a code."""
    assert decode_all(codec.decode, ENTER + RELEASE)[0] == []


def test_unmapped_usage_drops_the_whole_code(codec):
    """A code containing an unmapped key is one Garbage at Enter; the next code is clean."""
    stream = report(0x1E) + RELEASE + report(0xE8) + RELEASE + ENTER + RELEASE
    stream += b"".join(reports_for("100101"))
    got = decode_all(codec.decode, stream)[0]
    assert isinstance(got[0], Garbage) and got[1] == ScannedCode("100101")


def test_short_report_is_garbage(codec):
    """A transfer that is not 8 bytes is Garbage, not an exception."""
    assert isinstance(codec.report(b"\x00\x00\x1e"), Garbage)


def test_aim_identifier_is_split_off(codec):
    """A scanner configured to send the AIM id types it in front of the code."""
    assert decode_all(codec.decode, b"".join(reports_for("]C1100138")))[0] == [
        ScannedCode("100138", "]C1")]


@settings(max_examples=1500, deadline=None)
@given(data=st.binary(max_size=400))
def test_random_reports_never_raise(data):
    """Arbitrary report bytes never raise; less than one report is left waiting."""
    _, rest = decode_all(HidKeyboardCodec().decode, data)
    assert len(rest) < REPORT_SIZE


@settings(max_examples=500, deadline=None)
@given(codes=st.lists(texts, min_size=1, max_size=6))
def test_typed_codes_round_trip(codes):
    """Codes typed by the simulator decode back in order."""
    stream = b"".join(r for code in codes for r in reports_for(code))
    assert decode_all(HidKeyboardCodec().decode, stream)[0] == [ScannedCode(c) for c in codes]


@settings(max_examples=1000, deadline=None)
@given(data=st.data(), codes=st.lists(texts, min_size=1, max_size=4), last=texts)
def test_mutated_reports_resynchronise(data, codes, last):
    """After any corruption, a release, an Enter and a clean code decode exactly."""
    noisy = data.draw(mutated(b"".join(r for c in codes for r in reports_for(c))))
    noisy = noisy[: len(noisy) // REPORT_SIZE * REPORT_SIZE]  # USB transfers are whole reports
    stream = noisy + RELEASE + ENTER + RELEASE + b"".join(reports_for(last))
    assert decode_all(HidKeyboardCodec().decode, stream)[0][-1] == ScannedCode(last)


# The boot keyboard report descriptor of HID 1.11 Appendix E.6, as printed there; the second
# has a Report ID item (85 02) after Collection(Application), as composite scanners send it.
SPEC_KEYBOARD = bytes.fromhex(
    "05 01 09 06 a1 01 05 07 19 e0 29 e7 15 00 25 01 75 01 95 08 81 02 95 01 75 08 81 01"
    "95 05 75 01 05 08 19 01 29 05 91 02 95 01 75 03 91 01 95 06 75 08 15 00 25 65 05 07"
    "19 00 29 65 81 00 c0")
WITH_ID = SPEC_KEYBOARD[:6] + bytes.fromhex("85 02") + SPEC_KEYBOARD[6:]
# A consumer-control collection (ID 1) before the keyboard (ID 2): the keyboard's ID wins.
CONSUMER_FIRST = bytes.fromhex("05 0c 09 01 a1 01 85 01 15 00 26 ff 03 75 10 95 01 81 00 c0"
                               ) + WITH_ID


@pytest.mark.parametrize(("descriptor", "expected"), [
    (SPEC_KEYBOARD, None), (WITH_ID, 2), (CONSUMER_FIRST, 2), (b"", None), (b"\x85", None),
])
def test_keyboard_report_id_from_the_descriptor(descriptor, expected):
    """The keyboard collection's Report ID is read from the report descriptor; a descriptor
    without one means 8-byte reports without an ID. Truncated input never raises."""
    assert keyboard_report_id(descriptor) == expected


def test_nine_byte_reports_with_the_keyboard_id_are_stripped():
    """With the keyboard's ID known, a 9-byte report is that ID and a boot report."""
    codec = HidKeyboardCodec(report_id=2)
    out = [codec.report(b"\x02" + r) for r in reports_for("100101")]
    assert [m for m in out if m] == [ScannedCode("100101")]


def test_report_id_is_learned_from_a_consistent_nine_byte_length():
    """Without a readable descriptor the first 9-byte report gives the ID; a report with
    another ID (another collection) is garbage, the keyboard's codes still come out."""
    codec = HidKeyboardCodec()
    out = [codec.report(b"\x05" + r) for r in reports_for("1001")]
    assert [m for m in out if m] == [ScannedCode("1001")] and codec.report_id == 5
    other = codec.report(b"\x01" + bytes(8))
    assert isinstance(other, Garbage) and "report id 1" in other.reason
