"""Shoe driver for a USB barcode scanner in HID keyboard mode, read with pyusb.

:class:`HidTransport` is the USB end of the :class:`drivers.transport.Transport` seam, so the
shoe reuses the runner's reader thread, backoff and offline/online reporting. Opening follows the
order a Linux host needs: find the device (``usb.core.find(..., backend=backend)``), set a
configuration *only if none is active* (setting it again would reset the device and re-bind
usbhid; configuring binds usbhid anyway), detach the kernel driver if it holds the keyboard
interface, claim the interface, ask for boot protocol (HID class request SET_PROTOCOL, value 0:
boot reports are 8 bytes without a Report ID) and read the report descriptor to learn whether
the keyboard's reports carry a Report ID anyway (a scanner may ignore SET_PROTOCOL; the codec then
strips the ID from its 9-byte reports). Closing releases the interface and, by default, does
*not* give it back to usbhid: a scanner bound to usbhid types its barcodes into the Pi's console
while the service is down (docs/protocols-shoes.md, "HID"; ``give_back_keyboard=True`` restores
it, for a desk). Each interrupt transfer is one report, read with the endpoint's packet size so a
transfer ends at the first report; a read timeout is an idle scanner, not a disconnect.
``USBError`` never escapes: it becomes :class:`OpenFailed` or :class:`DeviceDisconnected` with
``raise ... from e``.
"""

from __future__ import annotations

import errno
import queue
from typing import Any

import structlog
import usb.core
import usb.util

from drivers.decks import DeckMap
from drivers.errors import DeviceDisconnected, DriverConfigError, OpenFailed, ProtocolError
from drivers.events import DeviceEvent
from drivers.runner import DeviceRunner
from drivers.shoe.codes import Garbage, ScannedCode
from drivers.shoe.hid_codec import REPORT_SIZE, HidKeyboardCodec, keyboard_report_id
from drivers.shoe.scanner_codec import NO_READ_TEXT
from drivers.shoe.tracker import ShoeTracker
from drivers.transport import Transport
from drivers.usb_find import active_configuration, claim, endpoint, find_device

log = structlog.get_logger(__name__)

HID_CLASS = 0x03
BOOT_SUBCLASS = 0x01
BOOT_KEYBOARD = 0x01
SET_PROTOCOL = (0x21, 0x0B)  # class request to an interface, host to device (HID 1.11 7.2.6)
BOOT_PROTOCOL = 0
GET_REPORT_DESCRIPTOR = (0x81, 0x06, 0x2200)  # standard GET_DESCRIPTOR, interface, type 0x22
HID_DESCRIPTOR_TYPE = 0x21
MAX_REPORT_DESCRIPTOR = 1024
READ_TIMEOUT_MS = 500
"""An idle scanner's reader wakes twice a second, not twenty times (it was 50 ms): a read
returns at the first report whatever the timeout, so only a stop waits for it, at most this."""


def parse_usb_url(url: str) -> tuple[int, int, str | None]:
    """``usb:VID:PID[:SERIAL]`` with hex ids, e.g. ``usb:1209:5ca1:HID0001``; the bulk link's
    ``usb://VVVV:PPPP[/SERIAL]`` form is accepted too, so one URL form works for both."""
    if url.startswith("usb://"):
        from drivers.usb_bulk import parse_usb_url as parse_bulk_url

        return parse_bulk_url(url)
    parts = url.split(":")
    if len(parts) not in (3, 4) or parts[0] != "usb":
        raise DriverConfigError(f"USB url must be usb:VID:PID[:SERIAL] (hex ids), got {url!r}")
    try:
        vid, pid = int(parts[1], 16), int(parts[2], 16)
    except ValueError as error:
        raise DriverConfigError(f"USB url {url!r}: vendor and product ids must be hex") from error
    return vid, pid, (parts[3] or None) if len(parts) == 4 else None


class HidTransport(Transport):
    """One HID boot-keyboard interface's interrupt IN endpoint; ``read`` returns one report."""

    def __init__(self, *, vendor_id: int, product_id: int, serial: str | None = None,
                 backend: Any = None, read_timeout_ms: int = READ_TIMEOUT_MS,
                 give_back_keyboard: bool = False) -> None:
        self.vendor_id, self.product_id, self.serial = vendor_id, product_id, serial
        self.url = f"usb:{vendor_id:04x}:{product_id:04x}" + (f":{serial}" if serial else "")
        self.backend = backend
        self.read_timeout_ms = read_timeout_ms
        self.give_back_keyboard = give_back_keyboard
        self._dev: usb.core.Device | None = None
        self._intf = 0
        self._ep = 0
        self._packet = REPORT_SIZE
        self._detached = False
        self.report_id: int | None = None
        """The keyboard's Report ID from the report descriptor (None: none, or unreadable)."""

    @property
    def is_open(self) -> bool:
        return self._dev is not None

    def open(self) -> None:
        if self._dev is not None:
            return
        dev = find_device(self.vendor_id, self.product_id, self.serial, self.backend, self.url)
        try:
            self._setup(dev)
        except usb.core.USBError as e:
            self._dev = dev
            self.close()
            raise OpenFailed(f"cannot open {self.url}: {e}") from e
        self._dev = dev
        log.debug("hid_open", url=self.url, interface=self._intf, endpoint=hex(self._ep))

    def _setup(self, dev: usb.core.Device) -> None:
        intf = _keyboard_interface(active_configuration(dev))
        self._intf = intf.bInterfaceNumber
        self._detached = claim(dev, self._intf)
        interrupt_in = endpoint(intf, usb.util.ENDPOINT_IN, usb.util.ENDPOINT_TYPE_INTR)
        if interrupt_in is None:
            raise usb.core.USBError(f"interface {self._intf} has no interrupt IN endpoint")
        self._ep = interrupt_in.bEndpointAddress
        self._packet = max(REPORT_SIZE, interrupt_in.wMaxPacketSize)
        if intf.bInterfaceSubClass == BOOT_SUBCLASS:
            self._set_boot_protocol(dev)
        self.report_id = self._read_report_id(dev, intf)

    def _set_boot_protocol(self, dev: usb.core.Device) -> None:
        """SET_PROTOCOL(boot): 8-byte reports without a Report ID. A scanner that STALLs it is
        read in report protocol (the codec strips an ID), so a refusal is logged, not fatal."""
        try:
            dev.ctrl_transfer(*SET_PROTOCOL, BOOT_PROTOCOL, self._intf)
        except usb.core.USBError as e:
            log.warning("hid_set_protocol_refused", url=self.url, error=str(e))

    def _read_report_id(self, dev: usb.core.Device, intf: Any) -> int | None:
        """The keyboard's Report ID from the interface's report descriptor (None if it has none
        or it cannot be read: the codec then learns an ID from a 9-byte report)."""
        length = _report_descriptor_length(bytes(intf.extra_descriptors))
        try:
            descriptor = bytes(dev.ctrl_transfer(*GET_REPORT_DESCRIPTOR, self._intf, length))
        except usb.core.USBError as e:
            log.warning("hid_report_descriptor_unreadable", url=self.url, error=str(e))
            return None
        return keyboard_report_id(descriptor)

    def read(self, max_bytes: int = REPORT_SIZE) -> bytes:
        dev = self._dev
        if dev is None:
            raise DeviceDisconnected(f"{self.url} is not open")
        try:
            return bytes(dev.read(self._ep, self._packet, self.read_timeout_ms))
        except usb.core.USBTimeoutError:
            return b""  # an idle scanner
        except usb.core.USBError as e:
            raise DeviceDisconnected(f"{self.url} disconnected: {e}") from e

    def write(self, data: bytes) -> None:
        raise ProtocolError(f"{self.url}: a keyboard-mode scanner takes no commands")

    def close(self) -> None:
        dev, self._dev = self._dev, None
        if dev is None:
            return
        try:
            usb.util.release_interface(dev, self._intf)
            if self._detached and self.give_back_keyboard:
                dev.attach_kernel_driver(self._intf)
        except usb.core.USBError as e:  # unplugged: nothing left to give back
            level = log.debug if e.errno == errno.ENODEV else log.warning
            level("hid_close_error", url=self.url, error=str(e))
        finally:
            self._detached = False
            usb.util.dispose_resources(dev)
        log.debug("hid_closed", url=self.url)


def _report_descriptor_length(hid_descriptor: bytes) -> int:
    """wDescriptorLength of the report descriptor from the HID class descriptor (HID 1.11
    6.2.1) that follows the interface descriptor; a generous default when it is missing."""
    if len(hid_descriptor) >= 9 and hid_descriptor[1] == HID_DESCRIPTOR_TYPE:
        return int.from_bytes(hid_descriptor[7:9], "little") or MAX_REPORT_DESCRIPTOR
    return MAX_REPORT_DESCRIPTOR


def _keyboard_interface(config: Any) -> Any:
    interfaces = list(config)
    for intf in interfaces:
        if intf.bInterfaceClass == HID_CLASS and intf.bInterfaceProtocol == BOOT_KEYBOARD:
            return intf
    if not interfaces:
        raise usb.core.USBError("device has no interfaces")
    return interfaces[0]


class HidScannerShoe(DeviceRunner):
    """``HidScannerShoe(events, vendor_id=0x1209, product_id=0x5ca1, deck=deck)``."""

    def __init__(self, events: queue.Queue[DeviceEvent], *, vendor_id: int, product_id: int,
                 deck: DeckMap, serial: str | None = None, backend: Any = None,
                 name: str = "shoe", no_read_text: str | None = NO_READ_TEXT, aim: bool = True,
                 read_timeout_ms: int = READ_TIMEOUT_MS, give_back_keyboard: bool = False,
                 **runner_options: Any) -> None:
        transport = HidTransport(vendor_id=vendor_id, product_id=product_id, serial=serial,
                                 backend=backend, read_timeout_ms=read_timeout_ms,
                                 give_back_keyboard=give_back_keyboard)
        super().__init__(name, transport, events, **runner_options)
        self.hid = transport
        self._aim = aim
        self.codec = HidKeyboardCodec(aim=aim)
        self.tracker = ShoeTracker(name, self.emit, self.clock, deck=deck,
                                   no_read_text=no_read_text)

    @property
    def link_errors(self) -> int:
        return self.tracker.link_errors

    def new_shoe(self) -> None:
        self.tracker.new_shoe()

    def on_connected(self) -> None:
        self.codec = HidKeyboardCodec(aim=self._aim, report_id=self.hid.report_id)
        super().on_connected()

    def on_bytes(self, data: bytes) -> None:
        message = self.codec.report(data)
        if isinstance(message, ScannedCode):
            self.tracker.code(message)
        elif isinstance(message, Garbage):
            self.tracker.garbage(message)

    def on_disconnected(self, reason: str) -> None:
        self.codec = HidKeyboardCodec(aim=self._aim)  # keys typed before the unplug are lost
        super().on_disconnected(reason)
