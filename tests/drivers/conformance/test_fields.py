"""The kit's field checks against the document's own bytes: every device frame of
docs/protocols.md's worked examples is in range, and the same frames with one field moved out
of the range the document gives fail, naming the clause (golden values from the document,
never from our codec)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drivers.conformance.fields import LAYOUTS, check_frame
from testbed.conformance.field_mutants import seal, unstuff

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocols.md"
FRAME = re.compile(r"```frame\n(.*?)```", re.S)
EXCHANGE = re.compile(r"```exchange\n(.*?)```", re.S)


def _doc_device_frames() -> dict[str, bytes]:
    """Every frame a device sends in the document: ``frame`` blocks of device messages and
    the ``device:`` lines of ``exchange`` blocks, by name."""
    text = DOC.read_text()
    out: dict[str, bytes] = {}
    for block in FRAME.findall(text):
        fields = dict(line.split(": ", 1) for line in block.strip().splitlines())
        data = bytes.fromhex(fields["hex"])
        if _body(data)[2] in LAYOUTS:
            out[fields["name"]] = data
    for block in EXCHANGE.findall(text):
        name = re.search(r"name: (\S+)", block)
        assert name is not None
        for n, line in enumerate(re.findall(r"device: ([0-9A-F ]+)\n", block + "\n")):
            out[f"{name.group(1)}/{n}"] = bytes.fromhex(line)
    return out


def _body(data: bytes) -> bytes:
    """2.2 undone: the frame between STX and ETX."""
    return unstuff(data[1:-1])


def _bent(name: str, at: int, value: bytes, *, seq: int | None = None) -> bytes:
    """The document's frame ``name`` with payload bytes from ``at`` replaced by ``value``
    (``LEN`` kept in step), and optionally another SEQ."""
    body = _body(DEVICE[name])[:-2]
    payload = bytearray(body[5:])
    payload[at:at + len(value)] = value
    header = bytes((body[0], body[1] if seq is None else seq, body[2])) \
        + len(payload).to_bytes(2, "big")
    return seal(header + bytes(payload))


DEVICE = _doc_device_frames()


def test_the_document_has_a_device_frame_of_every_kind() -> None:
    """Every message a device may send has a worked example the checks are tried on (the
    BUTTON and FOREIGN ones too)."""
    kinds = {_body(data)[2] for data in DEVICE.values()}
    assert kinds == set(LAYOUTS)


@pytest.mark.parametrize("name", sorted(DEVICE))
def test_every_frame_of_the_document_is_in_range(name: str) -> None:
    """The document's own examples break no range it gives."""
    assert check_frame(DEVICE[name]) is None


CASES = [
    # (frame of the document, payload offset, bytes, clause, words in the reason)
    ("card", 2, b"\x00\x00", "6", "index in shoe 0"),
    ("no-read", 2, b"\x00\x00", "6", "index in shoe 0"),
    ("double-feed", 2, b"\x00\x00", "6", "index in shoe 0"),
    ("foreign", 2, b"\x00\x00", "6", "index in shoe 0"),
    ("card", 0, b"\x00\x00", "3.4", "event id 0"),
    ("card", 4, b"\xF0", "4", "card byte 0xF0"),
    ("card", 4, b"\x14", "4", "card byte 0x14"),
    ("card", 5, b"\x04", "4", "flags 0x0004"),
    ("lid-open", 2, b"\x02", "4", "open 2"),
    ("button", 2, b"\x04", "4", "button 4"),
    ("button", 2, b"\x00", "4", "button 0"),
    ("heartbeat", 0, b"\x00\x00\x00\x00", "3.6", "boot id 0"),
    ("heartbeat", 8, b"\x07", "4", "state 7"),
    ("heartbeat", 9, b"\x04\x00", "4", "fault word 0x0400"),
    ("status", 0, b"\x07", "4", "state 7"),
    ("status", 1, b"\x80\x00", "4", "fault word 0x8000"),
    ("status", 3, b"\x00\x00\x00\x00", "3.6", "boot id 0"),
    ("shuffle-done", 3, b"\x36", "5", "expected 54"),
    ("hand-ready", 2, b"\x00\x00", "5.6", "hand number 0"),
    ("hand-ready", 4, b"\x05", "5.1", "count 5"),
    ("hand-ready", 5, b"\x0E", "4", "card byte 0x0E"),
    ("hand-ready", 8, b"\x08", "4", "past its 3 cards"),
    ("hand-taken", 2, b"\x00\x00", "5.6", "hand number 0"),
    ("fault-raised", 2, b"\x0A", "4", "fault bit number 10"),
    ("fault-cleared", 2, b"\x10", "4", "fault bit number 16"),
    ("nak-busy", 0, b"\x06", "4", "reason 6"),
    ("nak-busy", 0, b"\x00", "4", "reason 0"),
    ("identity", 27, b"\x02", "2.1", "protocol version 2"),
    ("identity", 1, b"\xFF", "4", "not UTF-8"),
    ("meters", 16, b"\x00", "4", "payload of 17 bytes"),
    ("status", 10, b"\x00", "4", "payload of 11 bytes"),
    ("ack", 0, b"\x00", "4", "payload of 1 bytes"),
]


@pytest.mark.parametrize(("name", "at", "value", "clause", "words"), CASES,
                         ids=[f"{c[0]}@{c[1]}={c[2].hex()}" for c in CASES])
def test_a_field_out_of_range_names_its_clause(name: str, at: int, value: bytes, clause: str,
                                                words: str) -> None:
    """One field of a document frame moved out of its range: the clause that gives the
    range, what arrived, and the frame in hex."""
    breach = check_frame(_bent(name, at, value))
    assert breach is not None
    assert breach.clause == clause
    assert words in breach.reason, breach.reason
    assert "[02 01" in breach.reason


def test_frame_level_fields() -> None:
    """2.1: VER 0x01, LEN at most 512 and equal to the payload, SEQ 0 on events and
    heartbeats, a reply's SEQ 1..255; 4: a TYPE no device sends."""
    body = _body(DEVICE["card"])[:-2]
    other_version = check_frame(seal(b"\x02" + body[1:]))
    assert other_version is not None and other_version.clause == "2.1"
    assert "VER 0x02" in other_version.reason
    event_seq = check_frame(_bent("card", 0, b"\x00\x07", seq=5))
    assert event_seq is not None and event_seq.clause == "2.1" and "SEQ 5" in event_seq.reason
    beat_seq = check_frame(_bent("heartbeat", 0, b"\x1A", seq=9))
    assert beat_seq is not None and beat_seq.clause == "2.1"
    reply_seq = check_frame(_bent("status", 0, b"\x02", seq=0))
    assert reply_seq is not None and reply_seq.clause == "2.1" and "SEQ 0" in reply_seq.reason
    long = check_frame(seal(b"\x01\x00\x75\x02\x01" + b"\x00\x01\x00\x01" + bytes(509)))
    assert long is not None and long.clause == "2.1" and "LEN 513" in long.reason
    short_len = check_frame(seal(body[:3] + b"\x00\x05" + body[5:]))
    assert short_len is not None and short_len.clause == "2.1" and "LEN says 5" in \
        short_len.reason
    host_type = check_frame(seal(b"\x01\x05\x20\x00\x00"))
    assert host_type is not None and host_type.clause == "4" and "0x20" in host_type.reason


def test_a_nak_may_carry_seq_0_and_a_damaged_frame_is_left_to_the_link_rows() -> None:
    """2.3: the NAK(CRC) to a corrupted EVENT_ACK carries SEQ 0 and is in range; a frame
    with a bad CRC is judged by the rows of 2.3, not here."""
    assert check_frame(DEVICE["event-ack/0"]) is None
    damaged = bytearray(DEVICE["card"])
    damaged[-2] ^= 0x01
    assert check_frame(bytes(damaged)) is None
