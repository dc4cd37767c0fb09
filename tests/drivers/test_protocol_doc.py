"""Golden byte vectors are read from docs/protocols.md, so the document and the code agree."""

from __future__ import annotations

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

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocols.md"
BLOCK = re.compile(r"```frame\n(.*?)```", re.S)


def _vectors() -> list[dict[str, str]]:
    out = []
    for body in BLOCK.findall(DOC.read_text(encoding="utf-8")):
        fields = dict(line.split(": ", 1) for line in body.strip().splitlines())
        out.append(fields)
    return out


VECTORS = _vectors()
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
    """The check value quoted in the document is the one the code computes."""
    assert "0x29B1" in DOC.read_text(encoding="utf-8")
    assert crc16(b"123456789") == 0x29B1
