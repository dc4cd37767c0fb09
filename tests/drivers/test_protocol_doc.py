"""Golden byte vectors and exchanges are read from docs/protocols.md, so the document, the
drivers and the simulator agree. The document's bytes were computed from its text alone
(binascii.crc_hqx), so a test here fails when the code, not the document, is wrong."""

from __future__ import annotations

import binascii
import re
from pathlib import Path
from typing import Any

import pytest

from controller.games.cards import parse_card, parse_cards
from drivers.events import Fault
from drivers.framed import event_messages, messages
from drivers.framed.codec import decode_message, encode_message
from drivers.framed.crc import crc16
from drivers.framed.framing import decode
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.shuffler import ShufflerSim

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocols.md"
BLOCK = re.compile(r"```frame\n(.*?)```", re.S)
EXCHANGE = re.compile(r"```exchange\n(.*?)```", re.S)
BOOT_ID = 0x1A2B3C4D


def _vectors() -> list[dict[str, str]]:
    out = []
    for body in BLOCK.findall(DOC.read_text(encoding="utf-8")):
        fields = dict(line.split(": ", 1) for line in body.strip().splitlines())
        out.append(fields)
    return out


def _exchanges() -> list[tuple[str, list[str], list[tuple[bytes, bytes]]]]:
    """Each exchange: its name, the situation it starts from, and (host bytes, the device's
    documented answer) pairs."""
    out = []
    for body in EXCHANGE.findall(DOC.read_text(encoding="utf-8")):
        name, given, steps = "", [], []
        for line in body.strip().splitlines():
            key, _, value = line.partition(":")
            value = value.strip()
            if key == "name":
                name = value
            elif key == "given":
                given = [g.strip() for g in value.split(",") if g.strip()]
            elif key == "host":
                steps.append((bytes.fromhex(value), b""))
            elif key == "device" and value != "none":
                host, device = steps[-1]
                steps[-1] = (host, device + bytes.fromhex(value))
        out.append((name, given, steps))
    return out


VECTORS = _vectors()
EXCHANGES = _exchanges()
NAMESPACE: dict[str, Any] = {
    **{k: v for k, v in vars(messages).items() if not k.startswith("__")},
    **{k: v for k, v in vars(event_messages).items() if not k.startswith("__")},
    "Fault": Fault, "card": parse_card, "cards": lambda text: parse_cards(text.split()),
}


def test_doc_has_vectors_for_every_message_type() -> None:
    """Every message class has at least one worked example in the document."""
    from drivers.framed.codec import MESSAGE_CLASSES

    named = {v["message"].split("(")[0] for v in VECTORS}
    assert {cls.__name__ for cls in MESSAGE_CLASSES.values()} <= named


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_golden_vector(vector: dict[str, str]) -> None:
    """The message encodes to exactly the documented bytes, and those bytes decode back to it."""
    message = eval(vector["message"], NAMESPACE)  # noqa: S307 - our own document
    wire = bytes.fromhex(vector["hex"])
    assert encode_message(int(vector["seq"], 16), message) == wire
    consumed, frame = decode(wire)
    assert consumed == len(wire) and frame is not None
    assert decode_message(frame) == message


def test_doc_states_crc_check_value() -> None:
    """The check value quoted in the document is the standard one, and the code computes it."""
    assert "0x29B1" in DOC.read_text(encoding="utf-8")
    assert binascii.crc_hqx(b"123456789", 0xFFFF) == crc16(b"123456789") == 0x29B1


def _device_in(given: list[str]) -> tuple[ShufflerSim, list[bytes]]:
    """A simulated shuffler in the exchange's situation, on a stopped clock (uptime 0, no
    heartbeat or resend falls due), with what it has sent so far discarded.

    ``shuffled``: SHUFFLE done (event 1), events acknowledged; ``shuffled-unacked``: the same,
    event 1 left unacknowledged; ``jam``: a jam raised (the next event), acknowledged."""
    now = 1000.0
    sim = ShufflerSim(seed=1, shuffle_seconds=0.0, dispense_seconds=0.0, take_seconds=None,
                      clock=lambda: now)
    sim.boot_id = BOOT_ID
    sent: list[bytes] = []
    sim.attach(sent.append)
    sim.tick(now)
    for step in given:
        if step.startswith("shuffled"):
            sim.receive(encode_message(1, messages.Shuffle()))
            sim.tick(now)
        elif step == "jam":
            sim.inject(FaultSpec(FaultKind.JAM))
        else:
            raise AssertionError(f"unknown situation {step!r} in docs/protocols.md")
        if step != "shuffled-unacked":
            for event_id in range(1, sim.unacked_events + 2):
                sim.receive(encode_message(0, messages.EventAck(event_id)))
    sent.clear()
    return sim, sent


def test_doc_has_exchanges() -> None:
    """The normative exchanges are there: NAK rules, RESYNC, END_ROUND, CLEAR_FAULT order."""
    assert {"corrupted-command", "other-version", "resync-run-again", "event-ack",
            "shuffle-needs-end-round", "clear-fault", "end-round-during-a-fault"} <= \
        {name for name, _, _ in EXCHANGES}


@pytest.mark.parametrize(("name", "given", "steps"), EXCHANGES, ids=[e[0] for e in EXCHANGES])
def test_exchange(name: str, given: list[str], steps: list[tuple[bytes, bytes]]) -> None:
    """The simulator answers each documented host frame with exactly the documented bytes,
    and with nothing where the document says ``none``."""
    sim, sent = _device_in(given)
    for host, device in steps:
        sent.clear()
        sim.receive(host)
        assert b"".join(sent).hex(" ").upper() == device.hex(" ").upper(), name
