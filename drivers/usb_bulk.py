"""The framed link over a USB vendor-class bulk endpoint pair.

A shuffler that enumerates as a raw USB device (class 0xFF, one bulk IN and one bulk OUT
endpoint) carries exactly the bytes it would send on RS-232, so the same framing, link and device
code drive it; only this transport differs. The device is found only with
``usb.core.find(idVendor=..., idProduct=..., backend=backend)``: on the Pi ``backend=None`` picks
libusb, in tests a :class:`firmware_sim.usb.backend.SimUsbBackend` stands in.

``USBTimeoutError`` on a read is a quiet device (``b""``), any other ``USBError`` is a disconnect:
libusb reports an unplugged device as ENODEV/EIO/EPIPE on the next transfer.

A read asks for one packet (``wMaxPacketSize``), so it completes with the first packet the
device sends, full or short; asking for more would make libusb wait for a short packet after a
full one and, on a timeout, drop what it had. The read timeout is the serial transport's
(:data:`drivers.transport.READ_TIMEOUT_SECONDS`, it was 50 ms: twenty wake-ups a second on an
idle table), shortened by :meth:`limit_read_timeout` while the link waits to resend.
"""

from __future__ import annotations

import re
from typing import Any

import structlog
import usb.core
import usb.util

from drivers.errors import DeviceDisconnected, DriverConfigError, DriverTimeoutError, OpenFailed
from drivers.transport import READ_TIMEOUT_SECONDS, Transport
from drivers.usb_find import active_configuration, claim, endpoint, find_device

log = structlog.get_logger(__name__)

_USB_URL = re.compile(r"^usb://([0-9a-fA-F]{4}):([0-9a-fA-F]{4})(?:/(.+))?$")


def parse_usb_url(url: str) -> tuple[int, int, str | None]:
    """``usb://VVVV:PPPP[/SERIAL]`` -> (vendor id, product id, serial or None)."""
    match = _USB_URL.match(url.strip())
    if match is None:
        raise DriverConfigError(f"not a USB URL: {url!r} (expected usb://VVVV:PPPP[/SERIAL], "
                                "hex ids)")
    return int(match[1], 16), int(match[2], 16), match[3]


class UsbBulkTransport(Transport):
    """Bytes over a vendor-class interface's bulk IN/OUT endpoints."""

    def __init__(self, vendor_id: int, product_id: int, *, backend: Any = None,
                 serial_number: str | None = None, interface: int = 0,
                 read_timeout: float = READ_TIMEOUT_SECONDS, write_timeout: float = 1.0) -> None:
        self.vendor_id, self.product_id = vendor_id, product_id
        self.backend = backend
        self.serial_number = serial_number
        self.interface = interface
        self.read_timeout_ms = max(1, int(read_timeout * 1000))
        self._limit_ms: int | None = None
        self.write_timeout_ms = max(1, int(write_timeout * 1000))
        suffix = f"/{serial_number}" if serial_number else ""
        self.url = f"usb://{vendor_id:04x}:{product_id:04x}{suffix}"
        self._dev: Any = None
        self._ep_in: Any = None
        self._ep_out: Any = None

    @classmethod
    def from_url(cls, url: str, **options: Any) -> UsbBulkTransport:
        vendor_id, product_id, serial = parse_usb_url(url)
        return cls(vendor_id, product_id, serial_number=serial, **options)

    @property
    def is_open(self) -> bool:
        return self._dev is not None

    def open(self) -> None:
        if self._dev is not None:
            return
        dev = find_device(self.vendor_id, self.product_id, self.serial_number, self.backend,
                          self.url)
        try:
            self._claim(dev)
        except usb.core.USBError as e:
            usb.util.dispose_resources(dev)
            raise OpenFailed(f"cannot claim {self.url}: {e}") from e
        self._dev = dev
        log.debug("usb_open", url=self.url)

    def _claim(self, dev: Any) -> None:
        intf = active_configuration(dev)[(self.interface, 0)]
        claim(dev, self.interface)
        bulk = usb.util.ENDPOINT_TYPE_BULK
        self._ep_in = endpoint(intf, usb.util.ENDPOINT_IN, bulk)
        self._ep_out = endpoint(intf, usb.util.ENDPOINT_OUT, bulk)
        if self._ep_in is None or self._ep_out is None:
            usb.util.release_interface(dev, self.interface)
            raise OpenFailed(f"{self.url} interface {self.interface} has no bulk IN/OUT pair")

    def read(self, max_bytes: int = 4096) -> bytes:
        dev, ep = self._dev, self._ep_in
        if dev is None:
            raise DeviceDisconnected(f"{self.url} is not open")
        timeout = self.read_timeout_ms if self._limit_ms is None else self._limit_ms
        try:
            return bytes(ep.read(min(max_bytes, ep.wMaxPacketSize), timeout=timeout))
        except usb.core.USBTimeoutError:
            return b""
        except usb.core.USBError as e:
            raise DeviceDisconnected(f"{self.url} disconnected: {e}") from e

    def limit_read_timeout(self, seconds: float | None) -> None:
        self._limit_ms = (None if seconds is None
                          else max(1, min(self.read_timeout_ms, int(seconds * 1000))))

    def write(self, data: bytes) -> None:
        dev, ep = self._dev, self._ep_out
        if dev is None:
            raise DeviceDisconnected(f"{self.url} is not open")
        try:
            ep.write(data, timeout=self.write_timeout_ms)
        except usb.core.USBTimeoutError as e:
            raise DriverTimeoutError(f"write to {self.url} timed out") from e
        except usb.core.USBError as e:
            raise DeviceDisconnected(f"{self.url} disconnected on write: {e}") from e

    def close(self) -> None:
        dev, self._dev = self._dev, None
        if dev is None:
            return
        try:
            usb.util.release_interface(dev, self.interface)
        except usb.core.USBError as e:
            log.debug("usb_release_failed", url=self.url, error=str(e))
        usb.util.dispose_resources(dev)
        log.debug("usb_closed", url=self.url)
