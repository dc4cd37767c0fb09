"""HidScannerShoe through SimUsbBackend: the USB open/close protocol, cards, faults, replug."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.decks import DeckMap
from drivers.errors import DriverConfigError
from drivers.events import (
    CardRead,
    DeviceOffline,
    DeviceOnline,
    DeviceWarning,
    Fault,
    FaultRaised,
    ForeignCard,
    LinkError,
    NoRead,
)
from drivers.shoe import open_shoe
from drivers.shoe.hid import HidScannerShoe, parse_usb_url
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.usb.backend import SimUsbBackend
from firmware_sim.usb.device import LibusbCode, usb_error
from firmware_sim.usb.hid_scanner import HidScannerSim

from .conftest import FAST_BACKOFF
from .waiting import assert_quiet, take, wait_for


@pytest.fixture(name="deck")
def fixture_deck() -> DeckMap:
    return DeckMap.load("generic-code128")


@pytest.fixture(name="sim")
def fixture_sim(deck):
    sim = HidScannerSim(seed=5, deck=deck)
    yield sim
    sim.close()


@pytest.fixture(name="backend")
def fixture_backend(sim) -> SimUsbBackend:
    return SimUsbBackend([sim])


@pytest.fixture(name="shoe")
def fixture_shoe(backend, sim, events, deck):
    shoe = HidScannerShoe(events, vendor_id=sim.vendor_id, product_id=sim.product_id,
                          serial="HID0001", backend=backend, deck=deck, backoff=FAST_BACKOFF)
    shoe.start()
    wait_for(events, DeviceOnline)
    yield shoe
    shoe.close()


@contextmanager
def running(events, sim, deck, backend=None, **options) -> Iterator[tuple[HidScannerShoe,
                                                                          SimUsbBackend]]:
    """A started HID shoe on ``sim`` (plugged into ``backend`` or a fresh one), online."""
    backend = backend or SimUsbBackend([sim])
    shoe = HidScannerShoe(events, vendor_id=sim.vendor_id, product_id=sim.product_id,
                          backend=backend, deck=deck, backoff=FAST_BACKOFF, **options)
    shoe.start()
    try:
        wait_for(events, DeviceOnline)
        yield shoe, backend
    finally:
        shoe.close()


def test_open_detaches_kernel_driver_and_does_not_reconfigure(shoe, backend, sim):
    """Kernel driver detached, configuration left alone (already 1), interface claimed."""
    state = backend.state(sim)
    assert state.history == ["open", "detach:0", "claim:0"]
    assert state.kernel_driver == {0: False} and state.claimed == {0}
    assert state.configuration == 1


def test_open_asks_for_boot_protocol(shoe, sim):
    """At open the driver sends the HID class request SET_PROTOCOL(boot) to the keyboard's
    interface: bmRequestType 0x21, bRequest 0x0B, wValue 0, wIndex 0 (HID 1.11 7.2.6)."""
    assert (0x21, 0x0B, 0, 0) in sim.requests
    assert sim.protocol == 0


def test_close_releases_and_keeps_usbhid_away(shoe, backend, sim):
    """On close the interface is released and usbhid is *not* re-attached: a scanner bound to
    usbhid would type its barcodes into the Pi's console while the service is down."""
    shoe.close()
    state = backend.state(sim)
    assert state.history[-2:] == ["release:0", "close"]
    assert state.kernel_driver == {0: False} and not state.claimed


def test_close_gives_the_keyboard_back_when_asked(backend, sim, events, deck):
    """give_back_keyboard=True (a desk, not a table) re-attaches usbhid on close."""
    with running(events, sim, deck, backend, give_back_keyboard=True):
        pass
    state = backend.state(sim)
    assert state.history[-3:] == ["release:0", "attach:0", "close"]
    assert state.kernel_driver == {0: True}


@pytest.mark.parametrize("obeys", [True, False], ids=["obeys-boot", "ignores-boot"])
def test_scanner_with_report_ids_is_read(events, deck, obeys):
    """A scanner whose report descriptor declares a Report ID is read whether it obeys
    SET_PROTOCOL(boot) (8-byte reports) or ignores it (9-byte reports, ID first: they were
    "9-byte report, expected 8" for every report)."""
    sim = HidScannerSim(seed=2, deck=deck, report_id=3, obeys_set_protocol=obeys)
    try:
        with running(events, sim, deck) as (shoe, _):
            assert (0x21, 0x0B, 0, 0) in sim.requests
            assert shoe.hid.report_id == 3
            drawn = [sim.draw() for _ in range(3)]
            assert [e.card for e in take(events, 3)] == drawn
            assert shoe.link_errors == 0
    finally:
        sim.close()


class _RefusesBootProtocol(HidScannerSim):
    """A scanner that STALLs SET_PROTOCOL and so stays in report protocol, IDs and all."""

    def on_control(self, request_type, request, value, index, data, length):
        if (request_type, request) == (0x21, 0x0B):
            self.requests.append((request_type, request, value, index))
            raise usb_error(LibusbCode.PIPE, "SET_PROTOCOL not supported (STALL)")
        return super().on_control(request_type, request, value, index, data, length)


def test_scanner_that_stalls_set_protocol_is_still_read(events, deck):
    """A STALLed SET_PROTOCOL is logged, not fatal: the driver reads the 9-byte reports."""
    sim = _RefusesBootProtocol(seed=4, deck=deck, report_id=1)
    try:
        with running(events, sim, deck) as (shoe, _):
            assert sim.requests == [(0x21, 0x0B, 0, 0)] and sim.protocol == 1
            card = sim.draw()
            assert wait_for(events, CardRead).card == card and shoe.link_errors == 0
    finally:
        sim.close()


def test_unconfigured_device_is_configured_once(events, deck):
    """With no active configuration the driver sets one, then detaches the bound driver."""
    sim = HidScannerSim(seed=1, deck=deck)
    sim.initial_configuration = 0
    with running(events, sim, deck) as (_, backend):
        assert backend.state(sim).history == ["open", "set_configuration:1", "detach:0",
                                              "claim:0"]


def test_cards_are_read(shoe, sim, events):
    """Each typed barcode is one CardRead in draw order."""
    drawn = [sim.draw() for _ in range(5)]
    assert [e.card for e in take(events, 5)] == drawn


def test_idle_read_timeouts_are_not_disconnects(events, backend, sim, deck):
    """Many read timeouts on an idle scanner produce no offline event."""
    with running(events, sim, deck, backend, read_timeout_ms=20) as (shoe, _):
        assert_quiet(events, 0.4)
        assert shoe.online


@pytest.mark.parametrize(("kind", "expected"), [
    (FaultKind.FOREIGN, ForeignCard), (FaultKind.NO_READ, NoRead),
])
def test_foreign_and_no_read(shoe, sim, events, kind, expected):
    """Foreign decks and the no-read message map to ForeignCard and NoRead."""
    sim.inject(FaultSpec(kind))
    sim.draw()
    assert isinstance(wait_for(events, expected), expected)


@pytest.mark.parametrize("kind", [FaultKind.DOUBLE_READ, FaultKind.REPEAT_EVENT])
def test_double_read(shoe, sim, events, kind):
    """A code typed twice is one CardRead and a double_read warning."""
    sim.inject(FaultSpec(kind))
    card = sim.draw()
    read, warning = take(events, 2)
    assert read.card == card and isinstance(warning, DeviceWarning)


def test_duplicate(shoe, sim, events):
    """A card already dealt (not the previous one) is a DUPLICATE_CARD fault."""
    sim.draw()
    sim.draw()
    sim.inject(FaultSpec(FaultKind.DUPLICATE))
    sim.draw()
    take(events, 2)
    assert wait_for(events, FaultRaised).fault is Fault.DUPLICATE_CARD


def test_truncated_code(shoe, sim, events):
    """Keystrokes cut before Enter are dropped as a LinkError; the next card is read."""
    sim.inject(FaultSpec(FaultKind.TRUNCATE))
    sim.draw()
    card = sim.draw()
    error, read = take(events, 2)
    assert isinstance(error, LinkError) and read.card == card


def test_stall_then_burst(shoe, sim, events):
    """Reports held back by a stall all arrive afterwards, in order."""
    sim.inject(FaultSpec(FaultKind.STALL, 0.3))
    drawn = [sim.draw() for _ in range(3)]
    assert_quiet(events, 0.15)
    assert [e.card for e in take(events, 3)] == drawn


def test_unplug_replug(shoe, backend, sim, events):
    """Unplug is DeviceOffline; the backoff loop finds the replugged device: DeviceOnline."""
    backend.unplug(sim)
    wait_for(events, DeviceOffline)
    backend.plug(sim)
    wait_for(events, DeviceOnline)
    assert backend.state(sim).history == ["open", "detach:0", "claim:0"]
    card = sim.draw()
    assert wait_for(events, CardRead).card == card


def test_disconnect_fault(shoe, sim, events):
    """The disconnect fault unplugs and replugs by itself."""
    sim.inject(FaultSpec(FaultKind.DISCONNECT, 0.2))
    sim.draw()
    wait_for(events, DeviceOffline)
    wait_for(events, DeviceOnline)


def test_absent_device_is_offline_with_reason(events, deck):
    """No matching device (here: wrong serial) is one DeviceOffline naming the URL."""
    backend = SimUsbBackend([HidScannerSim(seed=1)])
    shoe = HidScannerShoe(events, vendor_id=0x1209, product_id=0x5CA1, serial="OTHER",
                          backend=backend, deck=deck, backoff=FAST_BACKOFF)
    shoe.start()
    try:
        event = wait_for(events, DeviceOffline)
        assert "no USB device usb:1209:5ca1:OTHER" in event.reason
        assert_quiet(events, 0.3)
    finally:
        shoe.close()


def test_open_shoe_hid_url(backend, sim):
    """open_shoe("hid", "usb:VID:PID:SERIAL") builds a working HID shoe."""
    events: queue.Queue = queue.Queue()
    shoe = open_shoe("hid", "usb:1209:5ca1:HID0001", events, backend=backend,
                     backoff=FAST_BACKOFF)
    shoe.start()
    try:
        wait_for(events, DeviceOnline)
        card = sim.draw()
        assert wait_for(events, CardRead).card == card
    finally:
        shoe.close()


@pytest.mark.parametrize("url", ["usb:1209", "tty:1209:5ca1", "usb:xyz:5ca1"])
def test_bad_usb_urls(url):
    """A malformed usb: URL is a DriverConfigError that shows the expected form."""
    with pytest.raises(DriverConfigError, match="usb"):
        parse_usb_url(url)


@settings(max_examples=500, deadline=None)
@given(reports=st.lists(st.binary(min_size=0, max_size=10), max_size=60))
def test_report_path_survives_any_transfers(reports):
    """Any sequence of transfers (right size or not) gives only typed events, garbage counted."""
    deck = DeckMap.load("generic-code128")
    events: queue.Queue = queue.Queue()
    shoe = HidScannerShoe(events, vendor_id=1, product_id=2, backend=SimUsbBackend(), deck=deck)
    for report in reports:
        shoe.on_bytes(report)
    out = [events.get_nowait() for _ in range(events.qsize())]
    assert all(isinstance(e, (CardRead, DeviceWarning, FaultRaised, ForeignCard, LinkError,
                              NoRead)) for e in out)
    assert shoe.link_errors == sum(isinstance(e, LinkError) for e in out)
