"""Golden byte vectors read from docs/protocols-shoes.md, so the document and the code agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.games.cards import parse_card
from drivers.decks import DeckMap
from drivers.shoe.beetek_codec import (
    BeeTekAlarm,
    BeeTekCard,
    BeeTekCodec,
    BeeTekNoRead,
    BeeTekWarning,
)
from drivers.shoe.codes import Garbage, ScannedCode
from drivers.shoe.hid_codec import HidKeyboardCodec, reports_for
from drivers.shoe.scanner_codec import ScannerCodec

from .streams import decode_all

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocols-shoes.md"
BLOCK = re.compile(r"^```golden (\w+)([^\n]*)\n(.*?)^```", re.S | re.M)


def _vectors(kind: str) -> list[tuple[dict[str, str], str, str]]:
    found = []
    for match in BLOCK.finditer(DOC.read_text(encoding="utf-8")):
        if match[1] != kind:
            continue
        options = dict(opt.split("=", 1) for opt in match[2].split())
        for line in match[3].splitlines():
            if "=>" in line:
                left, right = line.split("=>", 1)
                found.append((options, left.strip(), right.strip()))
    assert found, f"no golden {kind} vectors in {DOC}"
    return found


def _expect(kind: str, text: str) -> list[object]:
    out: list[object] = []
    for item in filter(None, (part.strip() for part in text.split(";"))):
        word, _, rest = item.partition(" ")
        if word == "garbage":
            out.append(Garbage)
        elif word == "code":
            code, _, aim = rest.partition(" ")
            out.append(ScannedCode(code, aim or None))
        elif word in ("card", "burn"):
            section = "Manual Burn Cards" if word == "burn" else "Game"
            out.append(BeeTekCard(parse_card(rest), section, burn=word == "burn"))
        elif word == "noread":
            out.append(BeeTekNoRead("Game"))
        elif word == "alarm":
            code, _, alarm_text = rest.partition(" ")
            out.append(BeeTekAlarm(code, alarm_text, "GameAlarm"))
        elif word == "warning":
            out.append(BeeTekWarning(rest, ""))
        else:
            raise AssertionError(f"unknown expectation {item!r} in golden {kind} block")
    return out


def _same(got: list[object], want: list[object]) -> bool:
    return len(got) == len(want) and all(
        isinstance(g, Garbage) if w is Garbage else g == w for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize(("options", "hexbytes", "expected"), _vectors("scanner"))
def test_scanner_vectors(options, hexbytes, expected):
    """Each scanner line in the doc decodes to the documented codes."""
    codec = ScannerCodec(prefix=bytes.fromhex(options.get("prefix", "")),
                         suffix=bytes.fromhex(options.get("suffix", "")))
    got, rest = decode_all(codec.decode, bytes.fromhex(hexbytes))
    assert _same(got, _expect("scanner", expected)), got
    assert rest == b""


@pytest.mark.parametrize(("options", "hexbytes", "expected"), _vectors("beetek"))
def test_beetek_vectors(options, hexbytes, expected):
    """Each Bee-Tek line in the doc decodes to the documented messages."""
    got, _ = decode_all(BeeTekCodec().decode, bytes.fromhex(hexbytes))
    assert _same(got, _expect("beetek", expected)), got


@pytest.mark.parametrize(("options", "hexbytes", "expected"), _vectors("hid"))
def test_hid_vectors(options, hexbytes, expected):
    """Each run of HID reports in the doc decodes to the documented code."""
    got, rest = decode_all(HidKeyboardCodec().decode, bytes.fromhex(hexbytes))
    assert _same(got, _expect("hid", expected)), got
    assert rest == b""


@pytest.mark.parametrize(("options", "left", "barcode"), _vectors("deck"))
def test_deck_vectors(options, left, barcode):
    """The doc's deck-map examples are what the shipped maps print and read."""
    name, code = left.split()
    deck = DeckMap.load(name)
    assert deck.barcode_for(parse_card(code)) == barcode
    assert deck.lookup(barcode) == parse_card(code)


def test_simulators_emit_the_documented_bytes():
    """The simulators' encoders produce the doc's example bytes (sim and doc cannot drift)."""
    first = _vectors("beetek")[0]
    assert BeeTekCodec.encode(BeeTekCard(parse_card("4S"), "Game")).hex(" ") == first[1]
    aim = ScannerCodec().encode(ScannedCode("100138", "]C1"))
    assert aim.hex(" ") == _vectors("scanner")[0][1]
    assert b"".join(reports_for("1001")).hex(" ") == _vectors("hid")[0][1]
