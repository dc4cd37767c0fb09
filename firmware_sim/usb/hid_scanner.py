"""A USB barcode scanner in HID keyboard mode, served through :class:`SimUsbBackend`.

It enumerates as a boot keyboard (interface class 0x03, subclass 1, protocol 1) with one
interrupt IN endpoint (0x81, 8-byte reports, 1 ms interval). As on a Linux host, usbhid is bound
at plug time (``kernel_driver=True``) and the kernel has already selected configuration 1, so a
driver must detach the kernel driver and must *not* set the configuration again. A draw types the
barcode as press/release report pairs followed by Enter. Faults as for the serial scanner, plus
``disconnect`` which unplugs the device from the backend and replugs it ARG seconds later.

``report_id=N`` emulates a scanner whose report descriptor declares Report ID N: in report
protocol (the state it powers up in) every report is 9 bytes, the ID first, and the endpoint's
packet size is 9. SET_PROTOCOL(boot) switches it to 8-byte boot reports, unless
``obeys_set_protocol=False`` (scanners that ignore it exist). Every class request the host
sends is recorded in ``requests`` as ``(bmRequestType, bRequest, wValue, wIndex)``, and GET_DESCRIPTOR
of the report descriptor (type 0x22) answers the descriptor, with or without the ID item.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence

from controller.games.cards import Card
from drivers.decks import DeckMap
from drivers.shoe.hid_codec import reports_for
from drivers.shoe.scanner_codec import NO_READ_TEXT
from firmware_sim.faults import FaultKind, FaultSpec, FaultSpecError
from firmware_sim.scanner import FOREIGN_DECK_IDS
from firmware_sim.shoe_deck import SimShoe
from firmware_sim.usb.device import NO_DEVICE_TEXT, LibusbCode, SimUsbDevice, usb_error
from firmware_sim.usb.descriptors import (
    ConfigurationSpec,
    EndpointSpec,
    InterfaceClass,
    InterfaceSpec,
    Transfer,
)

REPORT_ENDPOINT = 0x81
REPORT_DESCRIPTOR_TYPE = 0x22
_HID_SET_IDLE, _HID_SET_PROTOCOL = 0x0A, 0x0B
_KEYBOARD_HEAD = bytes.fromhex("05 01 09 06 a1 01")  # Generic Desktop, Keyboard, Application
_KEYBOARD_BODY = bytes.fromhex(
    "05 07 19 e0 29 e7 15 00 25 01 75 01 95 08 81 02"  # 8 modifier bits
    "95 01 75 08 81 01"                                # reserved byte
    "95 05 75 01 05 08 19 01 29 05 91 02 95 01 75 03 91 01"  # LED output report
    "95 06 75 08 15 00 25 65 05 07 19 00 29 65 81 00"  # six key slots
    "c0")
"""The boot keyboard report descriptor of HID 1.11 Appendix B.1 / E.6 (63 bytes)."""


def report_descriptor(report_id: int | None) -> bytes:
    """The keyboard's report descriptor, with a Report ID item when ``report_id`` is set."""
    item = b"" if report_id is None else bytes([0x85, report_id])
    return _KEYBOARD_HEAD + item + _KEYBOARD_BODY


def hid_descriptor(report_id: int | None) -> bytes:
    """HID class descriptor: HID 1.11, country 0, one report descriptor of its length."""
    length = len(report_descriptor(report_id))
    return bytes([9, 0x21, 0x11, 0x01, 0, 1, REPORT_DESCRIPTOR_TYPE, length & 0xFF, length >> 8])


def _configurations(report_id: int | None) -> tuple[ConfigurationSpec, ...]:
    packet = 8 if report_id is None else 9
    return (ConfigurationSpec(1, (
        InterfaceSpec(0, InterfaceClass.HID, (EndpointSpec(REPORT_ENDPOINT, Transfer.INTERRUPT,
                                                           packet, 1),),
                      subclass=1, protocol=1, name="Keyboard", kernel_driver=True,
                      extra=hid_descriptor(report_id)),
    )),)


class HidScannerSim(SimUsbDevice, SimShoe):
    """Keyboard-mode scanner; ``backend.plug(sim)`` makes it appear to ``usb.core.find``."""

    vendor_id = 0x1209
    product_id = 0x5CA1
    manufacturer = "tablectl"
    product = "Sim HID card scanner"
    device_class = 0x00
    initial_configuration = 1
    configurations = _configurations(None)

    SUPPORTED = frozenset({
        FaultKind.FOREIGN, FaultKind.DUPLICATE, FaultKind.NO_READ, FaultKind.DOUBLE_READ,
        FaultKind.REPEAT_EVENT, FaultKind.TRUNCATE, FaultKind.STALL, FaultKind.DISCONNECT,
    })

    def __init__(self, seed: int | None = None, faults: Sequence[FaultSpec] = (), *,
                 deck: DeckMap | str = "generic-code128", serial: str = "HID0001",
                 aim: str | None = None, no_read_text: str | None = NO_READ_TEXT,
                 report_id: int | None = None, obeys_set_protocol: bool = True) -> None:
        SimUsbDevice.__init__(self)
        self.report_id = report_id
        self.obeys_set_protocol = obeys_set_protocol
        self.configurations = _configurations(report_id)
        self.requests: list[tuple[int, int, int, int]] = []
        self.serial = serial
        self.deck = deck if isinstance(deck, DeckMap) else DeckMap.load(deck)
        self.foreign_deck = self.deck.with_deck_id(
            FOREIGN_DECK_IDS.get(self.deck.name, self.deck.deck_id))
        self.aim = aim
        self.no_read_text = no_read_text
        self._reports: deque[tuple[float, bytes]] = deque()
        self.protocol = 1  # report protocol until the host asks for boot protocol
        SimShoe.__init__(self, seed, faults)

    # typing -------------------------------------------------------------------------------------
    def type_code(self, text: str) -> None:
        """Queue the reports for ``text`` + Enter (held back while a stall is active)."""
        self._queue_reports(reports_for((self.aim or "") + text))

    def _queue_reports(self, reports: list[bytes]) -> None:
        not_before = self._hold_until
        with self._cond:
            self._reports.extend((not_before, r) for r in reports)
            self._cond.notify_all()

    def draw(self) -> Card | None:
        """Draw one card under the scanner; returns the card dealt (None for a foreign card)."""
        with self._lock:
            card, code = self.pick_barcode(self.deck, self.foreign_deck)
            if self.take_fault(FaultKind.NO_READ):
                if self.no_read_text is not None:
                    self.type_code(self.no_read_text)
                return card
            reports = reports_for((self.aim or "") + code)
            if self.take_fault(FaultKind.TRUNCATE):
                reports = reports[: max(2, (len(reports) - 2) // 2 // 2 * 2)]
            elif self.take_fault(FaultKind.DOUBLE_READ, FaultKind.REPEAT_EVENT):
                reports = reports + reports
            self._queue_reports(reports)
            disconnect = self.take_fault(FaultKind.DISCONNECT)
        if disconnect:
            self.disconnect_for(disconnect.arg or 0.5)
        return card

    # USB side -----------------------------------------------------------------------------------
    def poll_in(self, endpoint: int, size: int, timeout_ms: int) -> bytes:
        deadline = None if timeout_ms == 0 else time.monotonic() + timeout_ms / 1000.0
        with self._cond:
            while True:
                if not self._plugged:
                    raise usb_error(LibusbCode.NO_DEVICE, NO_DEVICE_TEXT)
                now = time.monotonic()
                if self._reports and self._reports[0][0] <= now:
                    return self._framed(self._reports.popleft()[1])
                wait = None if deadline is None else deadline - now
                if self._reports:
                    release = self._reports[0][0] - now
                    wait = release if wait is None else min(wait, release)
                if wait is not None and wait <= 0:
                    raise usb_error(LibusbCode.TIMEOUT, "Operation timed out")
                self._cond.wait(wait)

    def _framed(self, report: bytes) -> bytes:
        """A boot report in boot protocol; with the Report ID in front in report protocol."""
        if self.report_id is None or (self.protocol == 0 and self.obeys_set_protocol):
            return report
        return bytes([self.report_id]) + report

    def on_control(self, request_type: int, request: int, value: int, index: int,
                   data: bytes, length: int) -> bytes | None:
        self.requests.append((request_type, request, value, index))
        if request_type == 0x21 and request == _HID_SET_IDLE:
            return None
        if request_type == 0x21 and request == _HID_SET_PROTOCOL:
            self.protocol = value
            return None
        return super().on_control(request_type, request, value, index, data, length)

    def class_descriptor(self, kind: int, index: int, interface: int) -> bytes | None:
        if kind == REPORT_DESCRIPTOR_TYPE and interface == 0:
            return report_descriptor(self.report_id)
        return None

    def on_plug(self) -> None:
        self.protocol = 1  # a new enumeration powers up in report protocol

    def on_unplug(self) -> None:
        with self._cond:
            self._reports.clear()  # keystrokes in flight are lost with the cable

    def disconnect_for(self, seconds: float) -> None:
        backend = self.backend
        if backend is None:
            raise FaultSpecError("fault 'disconnect' needs the device plugged into a backend")
        backend.unplug(self)
        self._replug_timer = threading.Timer(seconds, backend.plug, args=(self,))
        self._replug_timer.name = "sim-usb-replug"
        self._replug_timer.daemon = True
        self._replug_timer.start()
