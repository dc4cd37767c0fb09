"""Simulator behaviour that does not need a host: seeds, fault vocabulary, replay rule."""

from __future__ import annotations

import binascii

import pytest

from drivers.framed.codec import encode_message
from drivers.framed.framing import Frame, FrameDecoder
from drivers.framed.messages import (
    Ack, ClearFault, DispenseHand, EndRound, Identify, MsgType, Resync, Shuffle,
)
from firmware_sim.faults import FaultKind, FaultPlan, FaultSpec, FaultSpecError
from firmware_sim.framed import EXECUTED_KEPT, Conformance
from firmware_sim.shoe_framed import FramedShoeSim
from firmware_sim.shuffler import ShufflerSim


def _drawn(seed: int | None) -> list[str]:
    shoe = FramedShoeSim(seed)
    return [card.code for card in (shoe.draw() for _ in range(52)) if card is not None]


def test_seed_reproducible_otherwise_random() -> None:
    """The same seed gives the same shoe; no seed draws from secrets (two shoes differ)."""
    assert _drawn(5) == _drawn(5)
    assert _drawn(5) != _drawn(6)
    assert _drawn(None) != _drawn(None)
    assert sorted(_drawn(None)) == sorted(_drawn(5))


def test_replay_instead_of_execute() -> None:
    """A repeated sequence number gets the stored reply; the command runs once."""
    sim = ShufflerSim(seed=1)
    sent: list[bytes] = []
    sim.attach(sent.append)
    sim.receive(encode_message(9, Shuffle()))
    sim.receive(encode_message(9, Shuffle()))
    assert list(sim.executed) == [MsgType.SHUFFLE] and sim.replays == 1
    assert sent[0] == sent[1] == encode_message(9, Ack())


def test_the_record_of_executed_commands_is_bounded_and_the_count_is_not() -> None:
    """A simulated device runs inside ``tablectl run``'s process at a bench table for days:
    it keeps only the newest :data:`EXECUTED_KEPT` commands (the oldest dropped first) and
    counts every one, so 100,000 rounds do not grow the service (issue 27)."""
    sim = ShufflerSim(seed=1)
    sim.attach(lambda _wire: None)
    total = EXECUTED_KEPT + 300
    for number in range(total):
        command = Identify() if number == total - 1 else ClearFault()
        sim.receive(encode_message(number % 250 + 1, command))  # a new SEQ each time
    assert sim.commands_executed == total
    assert len(sim.executed) == EXECUTED_KEPT
    assert sim.executed[-1] is MsgType.IDENTIFY and sim.executed[0] is MsgType.CLEAR_FAULT


def test_bad_crc_command_is_nakked() -> None:
    """A command with a bad CRC is NAKed with its sequence number and not executed."""
    sim = ShufflerSim(seed=1)
    sent: list[bytes] = []
    sim.attach(sent.append)
    wire = bytearray(encode_message(4, DispenseHand()))
    wire[-2] ^= 0x01
    sim.receive(bytes(wire))
    (frame,) = FrameDecoder().feed(sent[0])
    assert (frame.seq, frame.type, frame.payload) == (4, MsgType.NAK, b"\x01")
    assert list(sim.executed) == []


def _unstuffed(wire: bytes) -> bytes:
    """docs/protocols.md 2.1, read independently of the codec: STX, the body with each STX,
    ETX or DLE sent as DLE then the byte XOR 0x20, ETX."""
    assert wire[0] == 0x02 and wire[-1] == 0x03
    body, escaped = bytearray(), False
    for byte in wire[1:-1]:
        if escaped:
            assert byte ^ 0x20 in (0x02, 0x03, 0x10), f"bad escape 10 {byte:02X}"
            body.append(byte ^ 0x20)
            escaped = False
        elif byte == 0x10:
            escaped = True
        else:
            body.append(byte)
    assert not escaped
    return bytes(body)


@pytest.mark.parametrize("seq", range(1, 256))
def test_bad_crc_fault_corrupts_the_crc_and_keeps_the_seq(seq: int) -> None:
    """The bad-CRC fault spoils the CRC of the next frame and nothing else, whatever the SEQ:
    a well-formed frame carrying its SEQ (so a receiver can NAK or name it) whose CRC fails.
    A CRC byte that had to be escaped once came out as a broken escape instead."""
    sim = ShufflerSim(seed=1)
    sent: list[bytes] = []
    sim.attach(sent.append)
    sim.inject(FaultSpec(FaultKind.BAD_CRC))
    sim.receive(encode_message(seq, Identify()))
    body = _unstuffed(sent[-1])
    assert body[1] == seq and body[2] == MsgType.IDENTITY
    assert binascii.crc_hqx(body[:-2], 0xFFFF) != int.from_bytes(body[-2:], "big")


@pytest.mark.parametrize("spec", [FaultSpec(FaultKind.COUNT, 50), FaultSpec(FaultKind.DOUBLE_READ)])
def test_fault_errors_name_the_problem(spec: FaultSpec) -> None:
    """A count other than 51/53, or a fault the shuffler cannot produce, is a FaultSpecError."""
    with pytest.raises(FaultSpecError, match=spec.kind.value):
        ShufflerSim(faults=[spec])


def test_disconnect_needs_a_server() -> None:
    """Without a byte server a disconnect cannot be simulated; the error says so."""
    with pytest.raises(FaultSpecError, match="server"):
        ShufflerSim().inject(FaultSpec(FaultKind.DISCONNECT, 0.1))


def _attached(**kwargs: object) -> tuple[ShufflerSim, list[Frame]]:
    """A simulator whose output is decoded into frames as it is sent."""
    sim = ShufflerSim(seed=1, shuffle_seconds=0.0, dispense_seconds=0.0, take_seconds=None,
                      **kwargs)  # type: ignore[arg-type]
    frames: list[Frame] = []
    decoder = FrameDecoder()
    sim.attach(lambda data: frames.extend(f for f in decoder.feed(data) if isinstance(f, Frame)))
    sim.tick(sim.clock())  # the greeting: from now on events go out as they are raised
    frames.clear()
    return sim, frames


def _wire(version: int, seq: int, type_: int, payload: bytes = b"") -> bytes:
    """A frame built from the document's layout alone (not our encoder): CRC-16/CCITT-FALSE
    is binascii.crc_hqx with init 0xFFFF."""
    body = bytes((version, seq, type_)) + len(payload).to_bytes(2, "big") + payload
    body += binascii.crc_hqx(body, 0xFFFF).to_bytes(2, "big")
    stuffed = b"".join(bytes((0x10, b ^ 0x20)) if b in (2, 3, 0x10) else bytes((b,)) for b in body)
    return b"\x02" + stuffed + b"\x03"


def test_other_version_with_good_crc_is_nak_unknown() -> None:
    """A well-formed frame of protocol version 2 is answered NAK(UNKNOWN) with its SEQ and not
    executed (docs/protocols.md 2.3)."""
    sim, frames = _attached()
    sim.receive(_wire(2, 0x21, MsgType.SHUFFLE))
    assert [(f.seq, f.type, f.payload) for f in frames] == [(0x21, MsgType.NAK, b"\x03")]
    assert list(sim.executed) == []


def test_event_ack_is_never_answered_but_a_corrupted_one_is_nak_crc() -> None:
    """EVENT_ACK gets no reply; one with a bad CRC gets NAK(CRC) with SEQ 0 (the host ignores
    it) and the event stays unacknowledged, to be resent (docs/protocols.md 2.3, 3.4)."""
    sim, frames = _attached()
    sim.receive(encode_message(5, Shuffle()))
    sim.tick(sim.clock())
    done = [f for f in frames if f.type == MsgType.SHUFFLE_DONE]
    assert len(done) == 1
    frames.clear()
    bad = bytearray(_wire(1, 0, MsgType.EVENT_ACK, b"\x00\x01"))
    bad[-2] ^= 0x01 if bad[-2] not in (0x03, 0x02, 0x11) else 0x04
    sim.receive(bytes(bad))
    assert [(f.seq, f.type, f.payload) for f in frames] == [(0, MsgType.NAK, b"\x01")]
    assert sim.unacked_events == 1
    frames.clear()
    sim.receive(_wire(1, 0, MsgType.EVENT_ACK, b"\x00\x01"))
    assert frames == [] and sim.unacked_events == 0


def test_resync_is_run_again_and_clears_the_reply_store() -> None:
    """A RESYNC retried with the same SEQ is run again (heartbeat, backlog, ACK), not replayed;
    afterwards a command reusing an earlier SEQ is executed, not answered from the store
    (docs/protocols.md 3.3)."""
    sim, frames = _attached()
    sim.receive(encode_message(7, Shuffle()))
    for _ in range(2):
        frames.clear()
        sim.receive(encode_message(9, Resync()))
        assert [f.type for f in frames] == [MsgType.HEARTBEAT, MsgType.ACK]
    sim.receive(encode_message(7, EndRound()))
    assert list(sim.executed) == [MsgType.SHUFFLE, MsgType.END_ROUND] and sim.replays == 0


def test_clear_fault_ack_comes_before_fault_cleared() -> None:
    """CLEAR_FAULT: the ACK first, then one FAULT_CLEARED per cleared bit (docs/protocols.md
    5.5)."""
    sim, frames = _attached()
    sim.inject(FaultSpec(FaultKind.JAM))
    sim.inject(FaultSpec(FaultKind.DOOR_OPEN))
    frames.clear()
    sim.receive(encode_message(3, ClearFault()))
    types = [f.type for f in frames]
    assert types == [MsgType.ACK, MsgType.FAULT_CLEARED, MsgType.FAULT_CLEARED]


def test_legacy_mode_diverges_where_the_document_forbids() -> None:
    """``conformance="legacy"`` plays the old firmware: FAULT_CLEARED before the ACK, a NAK to
    an EVENT_ACK, SHUFFLE accepted without END_ROUND, an exposed card also a fault."""
    sim, frames = _attached(conformance=Conformance.LEGACY)
    sim.inject(FaultSpec(FaultKind.JAM))
    frames.clear()
    sim.receive(encode_message(3, ClearFault()))
    assert [f.type for f in frames] == [MsgType.FAULT_CLEARED, MsgType.ACK]
    frames.clear()
    sim.receive(_wire(1, 0, MsgType.EVENT_ACK, b"\x00\x01"))
    assert [f.type for f in frames] == [MsgType.NAK]
    sim.receive(encode_message(4, Shuffle()))
    sim.tick(sim.clock())
    sim.receive(encode_message(5, Shuffle()))
    assert [f for f in frames if f.seq == 5][0].type == MsgType.ACK


def test_a_planned_fault_fires_once_at_its_own_event() -> None:
    """Planned on the device's own count: not before its event, once at it, never again; a
    new plan replaces the last, ``None`` drops it, and event 0 is refused by name."""
    plan = FaultPlan("hand")
    spec = FaultSpec(FaultKind.JAM)
    plan.set(spec, 3)
    assert plan.take(1) is None and plan.take(2) is None
    assert plan.take(3) is spec and plan.take(3) is None
    plan.set(spec, 2)
    plan.set(FaultSpec(FaultKind.EXPOSED), 4)
    assert plan.take(2) is None and plan.take(4) == FaultSpec(FaultKind.EXPOSED)
    plan.set(spec, 5)
    plan.set(None, 1)
    assert plan.take(5) is None
    with pytest.raises(FaultSpecError, match="hand 1 or later, got 0"):
        plan.set(spec, 0)


def test_a_fault_the_device_cannot_produce_is_refused_when_planned() -> None:
    """Planning a kind the shuffler has no mechanism for is refused naming what it supports,
    as arming it is: never a plan that silently never fires."""
    with pytest.raises(FaultSpecError, match="supports"):
        ShufflerSim(seed=3).plan(FaultSpec(FaultKind.DOUBLE_READ), hand=1)
