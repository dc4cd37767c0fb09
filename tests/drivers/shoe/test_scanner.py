"""ScannerShoe against ScannerShoeSim over real ptys and TCP: cards, every fault, replug."""

from __future__ import annotations

import time

import pytest

from drivers.decks import DeckMap
from drivers.events import (
    CardRead,
    DeviceOffline,
    DeviceWarning,
    Fault,
    FaultRaised,
    ForeignCard,
    LinkError,
    NoRead,
)
from drivers.shoe.scanner import ScannerShoe
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.scanner import ScannerShoeSim

from .conftest import FAST_BACKOFF
from .waiting import assert_quiet, online, take, wait_for


@pytest.fixture(name="deck")
def fixture_deck() -> DeckMap:
    return DeckMap.load("generic-code128")


@pytest.fixture(name="sim")
def fixture_sim(deck) -> ScannerShoeSim:
    return ScannerShoeSim(seed=7, deck=deck)


@pytest.fixture(name="shoe")
def fixture_shoe(serve, sim, events, deck):
    served = serve(sim)
    shoe = ScannerShoe(served.url, events, deck=deck, backoff=FAST_BACKOFF)
    shoe.start()
    online(events, sim)
    yield shoe
    shoe.close()


def test_each_draw_is_one_card_read(shoe, sim, events):
    """Every card drawn past the scanner arrives once, in order, with its index in the shoe."""
    drawn = [sim.draw() for _ in range(5)]
    reads = take(events, 5)
    assert [(e.card, e.index_in_shoe, e.burn) for e in reads] == [
        (card, i, False) for i, card in enumerate(drawn, 1)]


def test_foreign_deck_card_is_reported_foreign(shoe, sim, events):
    """A card of another deck id is ForeignCard carrying that deck id, never a CardRead."""
    sim.inject(FaultSpec(FaultKind.FOREIGN))
    sim.draw()
    event = wait_for(events, ForeignCard)
    assert event.deck_id == "2002" and event.barcode.startswith("2002")


def test_duplicate_card_raises_fault(shoe, sim, events):
    """A card already dealt from this shoe is FaultRaised(DUPLICATE_CARD), not a CardRead."""
    first = sim.draw()
    sim.draw()
    sim.inject(FaultSpec(FaultKind.DUPLICATE))
    sim.draw()
    take(events, 2)
    event = wait_for(events, FaultRaised)
    assert event.fault is Fault.DUPLICATE_CARD and first.code in event.detail


def test_no_read_message_is_no_read(shoe, sim, events):
    """The scanner's NR message is a NoRead and still takes an index in the shoe."""
    sim.inject(FaultSpec(FaultKind.NO_READ))
    sim.draw()
    assert wait_for(events, NoRead).index_in_shoe == 1


@pytest.mark.parametrize("kind", [FaultKind.DOUBLE_READ, FaultKind.REPEAT_EVENT])
def test_double_read_gives_one_card_and_a_warning(shoe, sim, events, kind):
    """The same code twice in a row is one CardRead plus a double_read warning."""
    sim.inject(FaultSpec(kind))
    card = sim.draw()
    read, warning = take(events, 2)
    assert read.card == card and isinstance(warning, DeviceWarning)
    assert warning.code == "double_read"
    assert_quiet(events)


def test_truncated_code_is_dropped_and_next_card_read(shoe, sim, events):
    """A truncated line (terminator lost) costs a LinkError; the following card is read."""
    sim.inject(FaultSpec(FaultKind.TRUNCATE))
    sim.draw()
    card = sim.draw()
    error, read = take(events, 2)
    assert isinstance(error, LinkError) and error.dropped > 0
    assert read.card == card and shoe.link_errors == 1


def test_stall_holds_then_bursts(shoe, sim, events):
    """During a stall nothing arrives; then every held card arrives in order."""
    sim.inject(FaultSpec(FaultKind.STALL, 0.3))
    started = time.monotonic()
    drawn = [sim.draw() for _ in range(3)]
    reads = take(events, 3)
    assert time.monotonic() - started >= 0.25
    assert [e.card for e in reads] == drawn


def test_disconnect_reports_offline_then_online(shoe, sim, events):
    """Unplug and replug: DeviceOffline once, DeviceOnline after reconnecting, cards resume."""
    sim.inject(FaultSpec(FaultKind.DISCONNECT, 0.2))
    sim.draw()
    wait_for(events, DeviceOffline)
    online(events, sim)
    card = sim.draw()
    assert wait_for(events, CardRead).card == card


def test_line_noise_is_counted_and_card_survives(shoe, sim, events):
    """Noise injected on the wire is one counted LinkError; the card behind it is read."""
    served_server = sim._link
    served_server.set_manipulator(lambda data: [b"\x00\xfe\x07\r\n", data])
    card = sim.draw()
    served_server.set_manipulator(None)
    error, read = take(events, 2)
    assert isinstance(error, LinkError) and read.card == card
    assert shoe.link_errors == 1


def test_new_shoe_forgets_dealt_cards(shoe, sim, events):
    """After new_shoe() a card dealt from the previous shoe is not a duplicate."""
    card = sim.draw()
    wait_for(events, CardRead)
    shoe.new_shoe()
    sim.output(sim.line_for(sim.deck.barcode_for(card)))
    read = wait_for(events, CardRead)
    assert read.card == card and read.index_in_shoe == 1


@pytest.mark.parametrize(("ending", "prefix", "suffix", "aim"), [
    ("cr", b"", b"", None), ("lf", b"", b"", "]C1"), ("crlf", b"\x02", b"\x03", "]C1"),
])
def test_scanner_configurations(serve, events, ending, prefix, suffix, aim):
    """Line endings, STX/ETX wrapping and AIM ids as programmed into the scanner all decode."""
    deck = DeckMap.load("house-s2")
    sim = ScannerShoeSim(seed=3, deck=deck, ending=ending, prefix=prefix, suffix=suffix, aim=aim)
    served = serve(sim)
    shoe = ScannerShoe(served.url, events, deck=deck, prefix=prefix, suffix=suffix,
                       backoff=FAST_BACKOFF)
    shoe.start()
    try:
        online(events, sim)
        drawn = [sim.draw() for _ in range(3)]
        assert [e.card for e in take(events, 3)] == drawn
    finally:
        shoe.close()


def test_barcode_of_another_vendor_is_foreign_without_deck(serve, events):
    """A barcode that is no card of the configured vendor is ForeignCard with no deck id."""
    sim = ScannerShoeSim(seed=1, deck="generic-code128")
    served = serve(sim)
    shoe = ScannerShoe(served.url, events, deck=DeckMap.load("house-s2"), backoff=FAST_BACKOFF)
    shoe.start()
    try:
        online(events, sim)
        sim.draw()
        event = wait_for(events, ForeignCard)
        assert event.deck_id is None
    finally:
        shoe.close()
