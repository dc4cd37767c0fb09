"""Simulator behaviour that does not need a host: seeds, fault vocabulary, replay rule."""

from __future__ import annotations

import pytest

from drivers.framed.codec import encode_message
from drivers.framed.framing import FrameDecoder
from drivers.framed.messages import Ack, DispenseHand, MsgType, Shuffle
from firmware_sim.faults import FaultKind, FaultSpec, FaultSpecError
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
    assert sim.executed == [MsgType.SHUFFLE] and sim.replays == 1
    assert sent[0] == sent[1] == encode_message(9, Ack())


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
    assert sim.executed == []


@pytest.mark.parametrize("spec", [FaultSpec(FaultKind.COUNT, 50), FaultSpec(FaultKind.DOUBLE_READ)])
def test_fault_errors_name_the_problem(spec: FaultSpec) -> None:
    """A count other than 51/53, or a fault the shuffler cannot produce, is a FaultSpecError."""
    with pytest.raises(FaultSpecError, match=spec.kind.value):
        ShufflerSim(faults=[spec])


def test_disconnect_needs_a_server() -> None:
    """Without a byte server a disconnect cannot be simulated; the error says so."""
    with pytest.raises(FaultSpecError, match="server"):
        ShufflerSim().inject(FaultSpec(FaultKind.DISCONNECT, 0.1))
