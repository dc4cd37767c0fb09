"""HidScannerSim enumerates as a boot keyboard with usbhid bound, and types codes as reports."""

from __future__ import annotations

import pytest
import usb.core
import usb.util

from drivers.decks import DeckMap
from drivers.shoe.hid_codec import HidKeyboardCodec, reports_for
from firmware_sim.usb.backend import SimUsbBackend
from firmware_sim.usb.hid_scanner import HidScannerSim


@pytest.fixture(name="sim")
def fixture_sim():
    sim = HidScannerSim(seed=3)
    yield sim
    sim.close()


@pytest.fixture(name="dev")
def fixture_dev(sim):
    dev = usb.core.find(idVendor=0x1209, idProduct=0x5CA1, backend=SimUsbBackend([sim]))
    yield dev
    usb.util.dispose_resources(dev)


def test_enumerates_as_boot_keyboard(dev):
    """Interface 0 is HID boot keyboard with an 8-byte interrupt IN endpoint 0x81."""
    intf = dev.get_active_configuration()[(0, 0)]
    assert (intf.bInterfaceClass, intf.bInterfaceSubClass, intf.bInterfaceProtocol) == (3, 1, 1)
    (ep,) = list(intf)
    assert (ep.bEndpointAddress, usb.util.endpoint_type(ep.bmAttributes), ep.wMaxPacketSize) == (
        0x81, usb.util.ENDPOINT_TYPE_INTR, 8)
    assert dev.is_kernel_driver_active(0)
    assert dev.serial_number == "HID0001"


def test_draw_types_the_barcode(sim, dev):
    """A draw is press/release reports for the barcode, then Enter."""
    dev.detach_kernel_driver(0)
    card = sim.draw()
    expected = reports_for(DeckMap.load("generic-code128").barcode_for(card))
    got = [bytes(dev.read(0x81, 8, 200)) for _ in expected]
    assert got == expected
    codec = HidKeyboardCodec()
    assert [m for m in map(codec.report, got) if m][0].text == (
        DeckMap.load("generic-code128").barcode_for(card))


def test_hid_class_requests_are_accepted(sim, dev):
    """SET_IDLE and SET_PROTOCOL(boot) succeed like on a real keyboard (pyusb claims first)."""
    dev.detach_kernel_driver(0)
    dev.ctrl_transfer(0x21, 0x0A, 0, 0)
    dev.ctrl_transfer(0x21, 0x0B, 0, 0)
    assert sim.protocol == 0


@pytest.fixture(name="id_sim")
def fixture_id_sim():
    sim = HidScannerSim(seed=3, report_id=4)
    yield sim
    sim.close()


@pytest.fixture(name="id_dev")
def fixture_id_dev(id_sim):
    dev = usb.core.find(idVendor=0x1209, idProduct=0x5CA1, backend=SimUsbBackend([id_sim]))
    dev.detach_kernel_driver(0)
    yield dev
    usb.util.dispose_resources(dev)


def test_report_id_scanner_sends_nine_byte_reports_until_boot_protocol(id_sim, id_dev):
    """In report protocol (its power-up state) each report is the ID then 8 bytes, on a 9-byte
    endpoint; after SET_PROTOCOL(boot) the reports are 8-byte boot reports, and the request is
    recorded as sent."""
    (ep,) = list(id_dev.get_active_configuration()[(0, 0)])
    assert ep.wMaxPacketSize == 9
    id_sim.type_code("1")
    assert bytes(id_dev.read(0x81, 9, 200))[:4] == bytes([4, 0, 0, 0x1E])
    id_dev.ctrl_transfer(0x21, 0x0B, 0, 0)
    assert id_sim.requests == [(0x21, 0x0B, 0, 0)]
    assert bytes(id_dev.read(0x81, 9, 200)) == bytes(8)  # the release report, now without ID


def test_report_descriptor_declares_the_id(id_dev):
    """GET_DESCRIPTOR(report, interface 0) returns the keyboard descriptor with 85 04 in it,
    as long as the HID descriptor says."""
    hid = bytes(id_dev.get_active_configuration()[(0, 0)].extra_descriptors)
    length = int.from_bytes(hid[7:9], "little")
    descriptor = bytes(id_dev.ctrl_transfer(0x81, 0x06, 0x2200, 0, length))
    assert len(descriptor) == length and descriptor[6:8] == bytes([0x85, 4])


def test_scanner_ignoring_boot_protocol_keeps_its_ids():
    """obeys_set_protocol=False: SET_PROTOCOL is recorded but the reports keep their ID."""
    sim = HidScannerSim(seed=3, report_id=4, obeys_set_protocol=False)
    dev = usb.core.find(idVendor=0x1209, idProduct=0x5CA1, backend=SimUsbBackend([sim]))
    try:
        dev.detach_kernel_driver(0)
        dev.ctrl_transfer(0x21, 0x0B, 0, 0)
        sim.type_code("1")
        assert bytes(dev.read(0x81, 9, 200))[0] == 4
    finally:
        usb.util.dispose_resources(dev)
        sim.close()
