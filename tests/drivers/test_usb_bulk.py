"""The framed link over USB bulk endpoints, through the in-process pyusb backend (no patching)."""

from __future__ import annotations

import queue
from collections.abc import Iterator

import pytest

from drivers.errors import DriverConfigError, OpenFailed
from drivers.events import (
    CardSetDispensed, DeviceEvent, DeviceOffline, DeviceOnline, HandTaken, ShuffleDone,
)
from drivers.shuffler import Shuffler
from drivers.usb_bulk import UsbBulkTransport, parse_usb_url
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.shuffler import ShufflerSim
from firmware_sim.usb.backend import SimUsbBackend
from firmware_sim.usb.bulk import BulkFramedUsbDevice, serve_usb
from tests.drivers.sim_fixtures import fixture_events, next_event  # noqa: F401 - fixture


@pytest.fixture(name="usb_sim")
def fixture_usb_sim() -> Iterator[tuple[SimUsbBackend, BulkFramedUsbDevice]]:
    backend, device = serve_usb(ShufflerSim(seed=3))
    yield backend, device
    device.close()


@pytest.fixture(name="shuffler")
def fixture_shuffler(usb_sim: tuple[SimUsbBackend, BulkFramedUsbDevice],
                     events: queue.Queue[DeviceEvent]) -> Iterator[Shuffler]:
    backend, device = usb_sim
    transport = UsbBulkTransport(device.vendor_id, device.product_id, backend=backend)
    with Shuffler(transport, events, backoff=(0.05, 0.2)) as shuffler:
        next_event(events, DeviceOnline)
        yield shuffler


def test_round_over_usb(shuffler: Shuffler, usb_sim: tuple[SimUsbBackend, BulkFramedUsbDevice],
                        events: queue.Queue[DeviceEvent]) -> None:
    """Identify, shuffle and a hand over bulk endpoints, with the same protocol code; the
    transport set the configuration (none was active) and claimed the interface."""
    backend, device = usb_sim
    assert shuffler.identify().serial == "SIM-HF3-0001"
    shuffler.shuffle()
    next_event(events, ShuffleDone)
    shuffler.dispense_hand()
    assert len(next_event(events, CardSetDispensed).cards) == 3
    next_event(events, HandTaken)
    assert backend.state(device).history[:3] == ["open", "set_configuration:1", "claim:0"]


def test_lost_ack_over_usb(shuffler: Shuffler, usb_sim: tuple[SimUsbBackend, BulkFramedUsbDevice],
                           events: queue.Queue[DeviceEvent]) -> None:
    """The replay-on-retry rule holds over USB too: one hand for one dispense."""
    _, device = usb_sim
    shuffler.shuffle()
    next_event(events, ShuffleDone)
    device.sim.inject(FaultSpec(FaultKind.LOST_ACK))
    shuffler.dispense_hand()
    next_event(events, CardSetDispensed)
    assert shuffler.meters().hands == 1


def test_unplug_replug_usb(shuffler: Shuffler, usb_sim: tuple[SimUsbBackend, BulkFramedUsbDevice],
                           events: queue.Queue[DeviceEvent]) -> None:
    """ENODEV on unplug is a disconnect: offline, then online again after the replug."""
    _, device = usb_sim
    device.sim.inject(FaultSpec(FaultKind.DISCONNECT, 0.2))
    next_event(events, DeviceOffline)
    next_event(events, DeviceOnline)
    assert shuffler.status().boot_id == device.sim.boot_id


def test_absent_device_open_failed() -> None:
    """No matching device: OpenFailed naming the URL."""
    transport = UsbBulkTransport(0x1209, 0xDEAD, backend=SimUsbBackend())
    with pytest.raises(OpenFailed, match="usb://1209:dead"):
        transport.open()


def test_usb_url() -> None:
    """usb://VVVV:PPPP[/SERIAL] parses; anything else is a DriverConfigError naming the format."""
    assert parse_usb_url("usb://1209:5348/SN1") == (0x1209, 0x5348, "SN1")
    with pytest.raises(DriverConfigError, match="usb://VVVV:PPPP"):
        parse_usb_url("usb:1209")
