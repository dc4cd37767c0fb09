"""The serial shoe drivers' byte path (LineShoe.on_bytes) never raises on any input.

These run the real decode -> tracker -> event path without a thread: whatever the wire delivers,
only typed events come out and every dropped run is a counted LinkError.
"""

from __future__ import annotations

import queue

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.decks import DeckMap
from drivers.events import (
    CardRead,
    DeviceWarning,
    DoubleFeed,
    FaultRaised,
    ForeignCard,
    LinkError,
    NoRead,
)
from drivers.shoe.beetek import BeeTekShoe
from drivers.shoe.scanner import ScannerShoe

from .streams import chunk_sizes, mutated

ALLOWED = (CardRead, DeviceWarning, DoubleFeed, FaultRaised, ForeignCard, LinkError, NoRead)
SCANNER_SAMPLE = b"100101\r\n]C1100102\n200203\r\nNR\r\n100101\r\n"
BEETEK_SAMPLE = (b" [Game]<Card:4S>  [Manual Burn Cards]<Card:H3>  [Game]<Game> "
                 b" [GameAlarm]<Alarm:E6 Double Card> <W0x01>  [Game]<Card:4S> ")


def _feed(shoe, data: bytes, chunks: list[int]) -> list[object]:
    pos = 0
    for size in [*chunks, len(data)]:
        shoe.on_bytes(data[pos:pos + size])
        pos += size
        if pos >= len(data):
            break
    out = []
    while not shoe.events.empty():
        out.append(shoe.events.get_nowait())
    return out


@pytest.fixture(name="deck", scope="module")
def fixture_deck() -> DeckMap:
    return DeckMap.load("generic-code128")


@settings(max_examples=600, deadline=None)
@given(data=st.data(), chunks=chunk_sizes)
def test_scanner_driver_survives_any_stream(deck, data, chunks):
    """Random or mutated scanner streams give only typed events; garbage is counted."""
    stream = data.draw(st.one_of(st.binary(max_size=200), mutated(SCANNER_SAMPLE)))
    shoe = ScannerShoe("loop://", queue.Queue(), deck=deck)
    events = _feed(shoe, stream, chunks)
    assert all(isinstance(e, ALLOWED) for e in events)
    assert shoe.link_errors == sum(isinstance(e, LinkError) for e in events)


@settings(max_examples=600, deadline=None)
@given(data=st.data(), chunks=chunk_sizes)
def test_beetek_driver_survives_any_stream(data, chunks):
    """Random or mutated Bee-Tek streams give only typed events; garbage is counted."""
    stream = data.draw(st.one_of(st.binary(max_size=200), mutated(BEETEK_SAMPLE)))
    shoe = BeeTekShoe("loop://", queue.Queue())
    events = _feed(shoe, stream, chunks)
    assert all(isinstance(e, ALLOWED) for e in events)
    assert shoe.link_errors == sum(isinstance(e, LinkError) for e in events)


def test_scanner_sample_events(deck):
    """The sample stream gives card, card, foreign, no-read and duplicate, in that order."""
    shoe = ScannerShoe("loop://", queue.Queue(), deck=deck)
    kinds = [type(e) for e in _feed(shoe, SCANNER_SAMPLE, [])]
    assert kinds == [CardRead, CardRead, ForeignCard, NoRead, FaultRaised]
