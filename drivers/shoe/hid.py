"""Shoe driver for a USB barcode scanner in HID keyboard mode, read with pyusb.

:class:`HidTransport` is the USB end of the :class:`drivers.transport.Transport` seam, so the
shoe reuses the runner's reader thread, backoff and offline/online reporting. Opening follows the
order a Linux host needs: find the device (``usb.core.find(..., backend=backend)``), set a
configuration *only if none is active* (setting it again would reset the device and re-bind
usbhid; configuring binds usbhid anyway), detach the kernel driver if it holds the keyboard
interface, claim the interface. Closing
releases the interface and re-attaches the kernel driver we detached, so the scanner types into
the console again. Each interrupt transfer is one 8-byte report; a read timeout is an idle scanner,
not a disconnect. ``USBError`` never escapes: it becomes :class:`OpenFailed` or
:class:`DeviceDisconnected` with ``raise ... from e``.
"""

from __future__ import annotations

import errno
import queue
from typing import Any

import structlog
import usb.core
import usb.util

from drivers.decks import DeckMap
from drivers.errors import ConfigError, DeviceDisconnected, OpenFailed, ProtocolError
from drivers.events import DeviceEvent
from drivers.runner import DeviceRunner
from drivers.shoe.codes import Garbage, ScannedCode
from drivers.shoe.hid_codec import REPORT_SIZE, HidKeyboardCodec
from drivers.shoe.scanner_codec import NO_READ_TEXT
from drivers.shoe.tracker import ShoeTracker
from drivers.transport import Transport
from drivers.usb_find import find_device

log = structlog.get_logger(__name__)

HID_CLASS = 0x03
BOOT_KEYBOARD = 0x01


def parse_usb_url(url: str) -> tuple[int, int, str | None]:
    """``usb:VID:PID[:SERIAL]`` with hex ids, e.g. ``usb:1209:5ca1:HID0001``; the bulk link's
    ``usb://VVVV:PPPP[/SERIAL]`` form is accepted too, so one URL form works for both."""
    if url.startswith("usb://"):
        from drivers.usb_bulk import parse_usb_url as parse_bulk_url

        return parse_bulk_url(url)
    parts = url.split(":")
    if len(parts) not in (3, 4) or parts[0] != "usb":
        raise ConfigError(f"USB url must be usb:VID:PID[:SERIAL] (hex ids), got {url!r}")
    try:
        vid, pid = int(parts[1], 16), int(parts[2], 16)
    except ValueError as error:
        raise ConfigError(f"USB url {url!r}: vendor and product ids must be hex") from error
    return vid, pid, (parts[3] or None) if len(parts) == 4 else None


class HidTransport(Transport):
    """One HID boot-keyboard interface's interrupt IN endpoint; ``read`` returns one report."""

    def __init__(self, *, vendor_id: int, product_id: int, serial: str | None = None,
                 backend: Any = None, read_timeout_ms: int = 50) -> None:
        self.vendor_id, self.product_id, self.serial = vendor_id, product_id, serial
        self.url = f"usb:{vendor_id:04x}:{product_id:04x}" + (f":{serial}" if serial else "")
        self.backend = backend
        self.read_timeout_ms = read_timeout_ms
        self._dev: usb.core.Device | None = None
        self._intf = 0
        self._ep = 0
        self._detached = False

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
        try:
            dev.get_active_configuration()
        except usb.core.USBError:  # pyusb's "Configuration not set": none active yet
            dev.set_configuration()  # the OS may now bind its driver, so detach comes after
        intf = _keyboard_interface(dev.get_active_configuration())
        self._intf = intf.bInterfaceNumber
        if dev.is_kernel_driver_active(self._intf):
            dev.detach_kernel_driver(self._intf)
            self._detached = True
        usb.util.claim_interface(dev, self._intf)
        endpoint = usb.util.find_descriptor(intf, custom_match=lambda e: (
            usb.util.endpoint_direction(e.bEndpointAddress) == usb.util.ENDPOINT_IN
            and usb.util.endpoint_type(e.bmAttributes) == usb.util.ENDPOINT_TYPE_INTR))
        if endpoint is None:
            raise usb.core.USBError(f"interface {self._intf} has no interrupt IN endpoint")
        self._ep = endpoint.bEndpointAddress

    def read(self, max_bytes: int = REPORT_SIZE) -> bytes:
        dev = self._dev
        if dev is None:
            raise DeviceDisconnected(f"{self.url} is not open")
        try:
            return bytes(dev.read(self._ep, max(max_bytes, REPORT_SIZE), self.read_timeout_ms))
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
            if self._detached:
                dev.attach_kernel_driver(self._intf)
        except usb.core.USBError as e:  # unplugged: nothing left to give back
            level = log.debug if e.errno == errno.ENODEV else log.warning
            level("hid_close_error", url=self.url, error=str(e))
        finally:
            self._detached = False
            usb.util.dispose_resources(dev)
        log.debug("hid_closed", url=self.url)


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
                 read_timeout_ms: int = 50, **runner_options: Any) -> None:
        transport = HidTransport(vendor_id=vendor_id, product_id=product_id, serial=serial,
                                 backend=backend, read_timeout_ms=read_timeout_ms)
        super().__init__(name, transport, events, **runner_options)
        self._aim = aim
        self.codec = HidKeyboardCodec(aim=aim)
        self.tracker = ShoeTracker(name, self.emit, self.clock, deck=deck,
                                   no_read_text=no_read_text)

    @property
    def link_errors(self) -> int:
        return self.tracker.link_errors

    def new_shoe(self) -> None:
        self.tracker.new_shoe()

    def on_bytes(self, data: bytes) -> None:
        message = self.codec.report(data)
        if isinstance(message, ScannedCode):
            self.tracker.code(message)
        elif isinstance(message, Garbage):
            self.tracker.garbage(message)

    def on_disconnected(self, reason: str) -> None:
        self.codec = HidKeyboardCodec(aim=self._aim)  # keys typed before the unplug are lost
        super().on_disconnected(reason)
