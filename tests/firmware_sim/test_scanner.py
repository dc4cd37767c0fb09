"""ScannerShoeSim emits the exact bytes a programmed scanner sends; shuffles are seeded."""

from __future__ import annotations

import pytest

from drivers.decks import DeckMap
from firmware_sim.faults import FaultKind, FaultSpec, FaultSpecError
from firmware_sim.scanner import ScannerShoeSim


@pytest.fixture(name="sent")
def fixture_sent() -> list[bytes]:
    return []


def _sim(sent: list[bytes], **options) -> ScannerShoeSim:
    sim = ScannerShoeSim(**options)
    sim.attach(sent.append)
    return sim


def test_seed_makes_the_shuffle_reproducible():
    """The same seed deals the same order; different seeds differ."""
    orders = [[ScannerShoeSim(seed=s).draw() for _ in range(10)] for s in (4, 4, 5)]
    assert orders[0] == orders[1] != orders[2]


def test_unseeded_shuffles_differ():
    """Without a seed the order comes from secrets: two shoes (almost surely) differ."""
    assert [c.code for c in ScannerShoeSim().cards] != [c.code for c in ScannerShoeSim().cards]


def test_exact_line_bytes(sent):
    """Prefix, AIM id, code, suffix and ending are sent exactly as configured."""
    sim = _sim(sent, seed=1, deck="house-s2", ending="cr", prefix=b"\x02", suffix=b"\x03",
               aim="]A0")
    card = sim.draw()
    assert sent == [b"\x02]A0" + DeckMap.load("house-s2").barcode_for(card).encode()
                    + b"\x03\r"]


@pytest.mark.parametrize(("kind", "check"), [
    (FaultKind.NO_READ, lambda out, line: out == [b"NR\r\n"]),
    (FaultKind.DOUBLE_READ, lambda out, line: out == [line + line]),
    (FaultKind.REPEAT_EVENT, lambda out, line: out == [line + line]),
    (FaultKind.TRUNCATE, lambda out, line: out == [line[: len(line) // 2]]),
    (FaultKind.FOREIGN, lambda out, line: out[0].startswith(b"2002")),
])
def test_fault_bytes(sent, kind, check):
    """Each fault changes the next line the way the documentation says."""
    reference = ScannerShoeSim(seed=9)
    line = reference.line_for(reference.deck.barcode_for(reference.cards[0]))
    sim = _sim(sent, seed=9, faults=[FaultSpec(kind)])
    sim.draw()
    assert check(sent, line)


def test_stall_holds_until_tick(sent):
    """While stalled, output is held; a tick after the stall bursts it in one write."""
    sim = _sim(sent, seed=2, faults=[FaultSpec(FaultKind.STALL, 0.2)])
    sim.draw()
    sim.draw()
    assert sent == []
    sim.tick(float("inf"))
    assert len(sent) == 1 and sent[0].count(b"\r\n") == 2


def test_unsupported_fault_is_an_error():
    """Asking for a fault the scanner cannot produce is a clear FaultSpecError."""
    with pytest.raises(FaultSpecError, match="cannot simulate fault 'jam'"):
        ScannerShoeSim(faults=[FaultSpec(FaultKind.JAM)])


def test_disconnect_needs_a_link():
    """The disconnect fault without a bound server says what is missing."""
    sim = ScannerShoeSim(seed=1, faults=[FaultSpec(FaultKind.DISCONNECT, 0.1)])
    with pytest.raises(FaultSpecError, match="bind_link"):
        sim.draw()


def test_empty_shoe_reloads():
    """After 52 cards the shoe reloads a fresh shuffled deck."""
    sim = ScannerShoeSim(seed=3)
    first = [sim.draw() for _ in range(52)]
    assert len(set(first)) == 52 and sim.draw() is not None
