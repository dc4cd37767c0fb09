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


@pytest.mark.parametrize("line", [b"NR\r\n", b"nr\r\n", b"Nr\r", b" nr \n"])
def test_no_read_message_in_any_case_is_a_no_read(deck, line):
    """The scanner's no-read message is a NoRead in any case (a lowercase `nr` was a foreign
    card), and takes an index in the shoe."""
    shoe = ScannerShoe("loop://", queue.Queue(), deck=deck)
    [event] = _feed(shoe, line, [])
    assert isinstance(event, NoRead) and event.index_in_shoe == 1


def test_code_with_trailing_spaces_is_the_card(deck):
    """`100110  ` is TS, not foreign_card "100110  ": whitespace around a code is stripped."""
    shoe = ScannerShoe("loop://", queue.Queue(), deck=deck)
    [event] = _feed(shoe, b"100110  \r\n", [])
    assert isinstance(event, CardRead) and event.card.code == "TS"


@pytest.mark.parametrize(("line", "card"), [(b"1001100102\r", "2S"), (b"]C110]C1100102\r", "2S"),
                                            (b"]C1]C1100103\r", "3S")])
def test_code_behind_a_truncated_code_is_recovered(deck, line, card):
    """A truncated code (terminator lost) glued to a complete one costs a LinkError for the stub;
    the complete code behind it is the card, AIM ids included."""
    shoe = ScannerShoe("loop://", queue.Queue(), deck=deck)
    error, read = _feed(shoe, line, [])
    assert isinstance(error, LinkError) and isinstance(read, CardRead)
    assert read.card.code == card


@pytest.mark.parametrize("line", [b"Z100110\r", b"9999100110\r", b"1002100110\r"])
def test_noise_in_front_of_a_code_is_foreign_not_a_card(deck, line):
    """Bytes in front of a code that are not the start of one of this deck's barcodes make the
    line a foreign barcode: a card is never carved out of noise."""
    shoe = ScannerShoe("loop://", queue.Queue(), deck=deck)
    [event] = _feed(shoe, line, [])
    assert isinstance(event, ForeignCard) and event.barcode == line.strip().decode()


def test_beetek_lowercase_tags_are_read():
    """Bee-Tek tags and fields are case-insensitive: `<card:4s>` is 4S (it was "unknown
    message"), `<game>` a no-read, a lowercase warning a DeviceWarning with its code."""
    shoe = BeeTekShoe("loop://", queue.Queue())
    card, no_read, warning = _feed(shoe, b" [game]<card:4s>  [Game]<GAME> <w0x01> ", [])
    assert isinstance(card, CardRead) and card.card.code == "4S"
    assert isinstance(no_read, NoRead)
    assert isinstance(warning, DeviceWarning) and warning.code == "W0x01"
    assert warning.text == "shoe warning 0x01"


def test_trickled_overlong_line_is_one_link_error_and_no_card(deck):
    """Issue 10's phantom through the driver's byte path: an 81-byte line ending in TS's code,
    one byte per read, is one LinkError (logged, counted) and no card; the next line is read."""
    shoe = ScannerShoe("loop://", queue.Queue(), deck=deck)
    line = b"A" * 81 + b"100110\r\n"
    events = _feed(shoe, line + b"100101\r\n", [1] * len(line))
    assert [type(e) for e in events] == [LinkError, CardRead]
    assert events[1].card.code == "AS" and shoe.link_errors == 1
