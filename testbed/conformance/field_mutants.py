"""Field mutants: devices that send one field of one message out of the range docs/protocols.md
gives, one mutant per field. Each rewrites the bytes of that message as it leaves the device,
by the document's words alone (the layout of 2.1, the stuffing of 2.2, the CRC as
``binascii.crc_hqx(data, 0xFFFF)``), never through our codec, so the CRC is good and only the
field is wrong. The conformance kit must fail each on the row that sees the message, naming the
clause that gives the range."""

from __future__ import annotations

import binascii
from collections.abc import Callable

from drivers.framed.messages import Button
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.shoe_framed import FramedShoeSim
from firmware_sim.shuffler import ShufflerSim
from testbed.conformance.devices import Variant

Bend = Callable[[bytes], bytes]


def unstuff(data: bytes) -> bytes:
    """2.2 undone: the bytes between STX and ETX with the stuffing removed (VER..CRC)."""
    out, escaped = bytearray(), False
    for byte in data:
        if escaped:
            out.append(byte ^ 0x20)
            escaped = False
        elif byte == 0x10:
            escaped = True
        else:
            out.append(byte)
    return bytes(out)


def frame(version: int, seq: int, type_: int, payload: bytes, *, length: int | None = None
          ) -> bytes:
    """A frame as 2.1 and 2.2 lay it out, with a good CRC whatever its fields say."""
    return seal(bytes((version, seq, type_)) + (len(payload) if length is None else length)
                .to_bytes(2, "big") + payload)


def seal(body: bytes) -> bytes:
    """``body`` (VER..PAYLOAD, whatever it says) with its CRC (2.1), stuffed (2.2) and
    delimited: the document's words, never our codec (the kit's own field tests use it too)."""
    body += binascii.crc_hqx(body, 0xFFFF).to_bytes(2, "big")
    stuffed = b"".join(bytes((0x10, b ^ 0x20)) if b in (0x02, 0x03, 0x10) else bytes((b,))
                       for b in body)
    return b"\x02" + stuffed + b"\x03"


def at(offset: int, value: bytes) -> Bend:
    """Payload bytes from ``offset`` replaced by ``value``."""
    return lambda p: p[:offset] + value + p[offset + len(value):]


def minus_one(offset: int) -> Bend:
    """The u16 at ``offset`` one less (an index counted from 0)."""
    return lambda p: p[:offset] + (int.from_bytes(p[offset:offset + 2], "big") - 1) \
        .to_bytes(2, "big") + p[offset + 2:]


class FieldBent:
    """Rewrites every frame of TYPE ``bent_type`` as it leaves: its payload by ``bend``, and
    its VER, SEQ or LEN when set."""

    bent_type = 0
    bend: Bend = staticmethod(lambda p: p)  # type: ignore[assignment]
    bent_version: int | None = None
    bent_seq: int | None = None
    bent_length: Callable[[int], int] | None = None

    def _raw(self, data: bytes) -> None:
        if len(data) > 7 and data[0] == 0x02 and data[-1] == 0x03:
            body = unstuff(data[1:-1])
            if body[2] == self.bent_type:
                payload = type(self).bend(body[5:-2])
                length = None if self.bent_length is None else \
                    type(self).bent_length(len(payload))  # type: ignore[misc]
                data = frame(self.bent_version or body[0],
                             body[1] if self.bent_seq is None else self.bent_seq, body[2],
                             payload, length=length)
        super()._raw(data)  # type: ignore[misc]


class ExtraFrame:
    """After every heartbeat, a frame of a TYPE no device sends (0x65, good CRC, SEQ 0)."""

    def _heartbeat(self, now: float) -> None:
        super()._heartbeat(now)  # type: ignore[misc]
        self._raw(frame(1, 0, 0x65, b"\x00\x01"))  # type: ignore[attr-defined]


class DrawsNoRead(FramedShoeSim):
    """Every draw passes unread (NO_READ), as a worn reader does."""

    arm = FaultKind.NO_READ

    def draw(self, *, burn: bool | None = None):  # type: ignore[no-untyped-def]
        self.inject(FaultSpec(self.arm))
        return super().draw(burn=burn)


class DrawsDoubleFeed(DrawsNoRead):
    arm = FaultKind.DOUBLE_READ


class DrawsForeign(DrawsNoRead):
    arm = FaultKind.FOREIGN


class ButtonOnLid(FramedShoeSim):
    """Reports a BUTTON (deal) whenever its lid opens."""

    def open_lid(self) -> None:
        super().open_lid()
        self.press(Button.DEAL)


def _bent(name: str, base: type, type_: int, bend: Bend | None = None, **attrs: object
          ) -> Callable[[], object]:
    """The device class ``name``: ``base`` sending TYPE ``type_`` bent by ``bend``."""
    body: dict[str, object] = {"bent_type": type_, "__doc__": name, **attrs}
    if bend is not None:
        body["bend"] = staticmethod(bend)
    cls = type(name, (FieldBent, base), body)
    return lambda: cls(seed=7)


S, H = "shuffler", "shoe"
SHUFFLE_DONE, HAND_READY, HAND_TAKEN = 0x60, 0x61, 0x62
FAULT_RAISED, FAULT_CLEARED = 0x63, 0x64
CARD, NO_READ, DOUBLE_FEED, LID, BUTTON, FOREIGN = 0x70, 0x71, 0x72, 0x73, 0x74, 0x75
ACK, NAK, IDENTITY, STATUS, METERS, HEARTBEAT = 0x06, 0x15, 0x40, 0x41, 0x46, 0x50
LONG_IDENTITY = b"".join(bytes((110,)) + b"x" * 110 for _ in range(5)) + b"\x01"
"""An IDENTITY of five 110-byte strings: 556 payload bytes, past the 512 of 2.1."""


def _v(name: str, device: str, make: Callable[[], object], row: str, clause: str,
       *words: str, rows: tuple[str, ...] | None = None) -> Variant:
    return Variant(f"field-{name}", device, make, rows or (row,), row, clause,  # type: ignore
                   words)


FIELD_MUTANTS = (
    # frame (2.1, 4): VER, LEN, SEQ, TYPE
    _v("ver-2", S, _bent("Ver2Status", ShufflerSim, STATUS, bent_version=2), "status", "2.1",
       "VER 0x02"),
    _v("len-over-512", S, _bent("LongIdentity", ShufflerSim, IDENTITY,
                                lambda p: LONG_IDENTITY), "identify", "2.1", "LEN 556"),
    _v("len-disagrees", S, _bent("LenStatus", ShufflerSim, STATUS,
                                 bent_length=lambda n: n + 1), "status", "2.1", "LEN says 11"),
    _v("event-seq", S, _bent("SeqEvents", ShufflerSim, HAND_READY, bent_seq=7), "dispense",
       "2.1", "SEQ 7"),
    _v("heartbeat-seq", S, _bent("SeqBeat", ShufflerSim, HEARTBEAT, bent_seq=3), "heartbeat",
       "2.1", "SEQ 3"),
    _v("unknown-type", S, lambda: type("ExtraTypeShuffler", (ExtraFrame, ShufflerSim),
                                       {})(seed=7), "heartbeat", "4", "TYPE 0x65"),
    _v("ack-payload", S, _bent("AckPayload", ShufflerSim, ACK, lambda p: b"\x00"), "resync",
       "4", "ACK payload of 1 bytes"),
    # replies (4, 2.1, 3.6)
    _v("nak-reason", S, _bent("NakReason6", ShufflerSim, NAK, at(0, b"\x06")),
       "unknown-command", "4", "reason 6"),
    _v("identity-version", S, _bent("Identity2", ShufflerSim, IDENTITY,
                                    lambda p: p[:-1] + b"\x02"), "identify", "2.1",
       "protocol version 2"),
    _v("identity-utf8", S, _bent("IdentityLatin1", ShufflerSim, IDENTITY, at(1, b"\xC9")),
       "identify", "4", "not UTF-8"),
    _v("status-state", S, _bent("State7", ShufflerSim, STATUS, at(0, b"\x07")), "status", "4",
       "state 7"),
    _v("status-fault-word", S, _bent("FaultWord", ShufflerSim, STATUS, at(1, b"\x10\x00")),
       "status", "4", "fault word 0x1000"),
    _v("status-boot-id", S, _bent("StatusBoot0", ShufflerSim, STATUS,
                                  at(3, b"\x00\x00\x00\x00")), "status", "3.6", "boot id 0"),
    _v("meters-length", S, _bent("LongMeters", ShufflerSim, METERS, lambda p: p + b"\x00"),
       "meters", "4", "payload of 17 bytes"),
    # heartbeat (3.6, 4)
    _v("heartbeat-boot-id", S, _bent("Boot0", ShufflerSim, HEARTBEAT,
                                     at(0, b"\x00\x00\x00\x00")), "heartbeat", "3.6",
       "boot id 0"),
    _v("heartbeat-state", S, _bent("BeatState9", ShufflerSim, HEARTBEAT, at(8, b"\x09")),
       "heartbeat", "4", "state 9"),
    _v("heartbeat-fault-word", S, _bent("BeatWord", ShufflerSim, HEARTBEAT,
                                        at(9, b"\x80\x00")), "heartbeat", "4",
       "fault word 0x8000"),
    # shuffler events (3.4, 4, 5, 5.1, 5.6)
    _v("event-id-0", S, _bent("DoneId0", ShufflerSim, SHUFFLE_DONE, at(0, b"\x00\x00")),
       "shuffle", "3.4", "event id 0"),
    _v("shuffle-done-expected", S, _bent("Expected54", ShufflerSim, SHUFFLE_DONE,
                                         at(3, b"\x36")), "shuffle", "5", "expected 54"),
    _v("hand-number-0", S, _bent("Hand0", ShufflerSim, HAND_READY, at(2, b"\x00\x00")),
       "dispense", "5.6", "hand number 0"),
    _v("hand-count-5", S, _bent("Count5", ShufflerSim, HAND_READY,
                                lambda p: p[:4] + b"\x05" + p[5:8] + b"\x33\x43" + p[8:]),
       "dispense", "5.1", "count 5"),
    _v("hand-card-byte", S, _bent("Rank0", ShufflerSim, HAND_READY, at(5, b"\x0E")),
       "dispense", "4", "card byte 0x0E"),
    _v("hand-taken-number", S, _bent("Taken0", ShufflerSim, HAND_TAKEN, at(2, b"\x00\x00")),
       "minimum-cards", "5.6", "hand number 0"),
    _v("fault-raised-bit", S, _bent("RaisedBit12", ShufflerSim, FAULT_RAISED,
                                    at(2, b"\x0C")), "fault-clear-order", "4",
       "fault bit number 12"),
    _v("fault-cleared-bit", S, _bent("ClearedBit12", ShufflerSim, FAULT_CLEARED,
                                     at(2, b"\x0C")), "fault-clear-order", "4",
       "fault bit number 12"),
    # shoe (3.4, 4, 6, 2.1)
    _v("shoe-index-from-0", H, _bent("IndexFrom0Shoe", FramedShoeSim, CARD, minus_one(2)),
       "card", "6", "index in shoe 0"),
    _v("shoe-card-byte", H, _bent("Rank15Shoe", FramedShoeSim, CARD, at(4, b"\xF1")),
       "card", "4", "card byte 0xF1"),
    _v("shoe-card-flags", H, _bent("FlagsShoe", FramedShoeSim, CARD, at(5, b"\x04")), "card",
       "4", "flags 0x0004"),
    _v("shoe-no-read-index", H, _bent("NoRead0Shoe", DrawsNoRead, NO_READ, minus_one(2)),
       "card", "6", "NO_READ index in shoe 0"),
    _v("shoe-double-feed-index", H, _bent("Double0Shoe", DrawsDoubleFeed, DOUBLE_FEED,
                                          minus_one(2)), "card", "6",
       "DOUBLE_FEED index in shoe 0"),
    _v("shoe-foreign-index", H, _bent("Foreign0Shoe", DrawsForeign, FOREIGN, minus_one(2)),
       "card", "6", "FOREIGN index in shoe 0"),
    _v("shoe-lid-value", H, _bent("Lid2Shoe", FramedShoeSim, LID, at(2, b"\x02")), "lid", "4",
       "open 2"),
    _v("shoe-button-value", H, _bent("Button4Shoe", ButtonOnLid, BUTTON, at(2, b"\x04")),
       "lid", "4", "button 4"),
    _v("shoe-heartbeat-seq", H, _bent("SeqBeatShoe", FramedShoeSim, HEARTBEAT, bent_seq=1),
       "heartbeat", "2.1", "SEQ 1"),
    _v("shoe-status-state", H, _bent("State8Shoe", FramedShoeSim, STATUS, at(0, b"\x08")),
       "status", "4", "state 8"),
)
"""One mutant per field of section 4 (and per frame field of 2.1) that has a range: the kit
must fail the row that sees it, naming the clause that gives the range."""
