"""The simulated USB device base class and the libusb-style errors it raises.

See :mod:`firmware_sim.usb.backend` for the API overview; this module holds what a device
simulation subclasses (:class:`SimUsbDevice`) and the one way to raise a pyusb error exactly as
the libusb1 backend does (:func:`usb_error`).
"""

from __future__ import annotations

import errno
import threading
from collections import deque
from enum import IntEnum
from typing import TYPE_CHECKING

import usb.core

from firmware_sim.usb.descriptors import ConfigurationSpec

if TYPE_CHECKING:
    from firmware_sim.usb.backend import SimUsbBackend

NO_DEVICE_TEXT = "No such device (it may have been disconnected)"


class LibusbCode(IntEnum):
    """libusb-1.0 error codes, carried in ``USBError.backend_error_code`` as libusb1 does."""

    IO = -1
    ACCESS = -3
    NO_DEVICE = -4
    NOT_FOUND = -5
    BUSY = -6
    TIMEOUT = -7
    OVERFLOW = -8
    PIPE = -9


_ERRNO = {
    LibusbCode.IO: errno.EIO, LibusbCode.ACCESS: errno.EACCES, LibusbCode.NO_DEVICE: errno.ENODEV,
    LibusbCode.NOT_FOUND: errno.ENOENT, LibusbCode.BUSY: errno.EBUSY,
    LibusbCode.TIMEOUT: errno.ETIMEDOUT, LibusbCode.OVERFLOW: errno.EOVERFLOW,
    LibusbCode.PIPE: errno.EPIPE,
}


def usb_error(code: LibusbCode, detail: str) -> usb.core.USBError:
    """The exception the libusb1 backend would raise for ``code`` (timeouts are their own type)."""
    cls = usb.core.USBTimeoutError if code is LibusbCode.TIMEOUT else usb.core.USBError
    return cls(detail, int(code), _ERRNO[code])


class SimUsbDevice:
    """A simulated USB device: descriptors plus the hooks a simulation overrides."""

    vendor_id = 0x1209
    product_id = 0x0001
    manufacturer: str | None = "tablectl"
    product: str | None = "simulated device"
    serial: str | None = "SIM0001"
    device_class = 0x00
    bcd_device = 0x0100
    initial_configuration = 1
    configurations: tuple[ConfigurationSpec, ...] = ()

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._in: dict[int, deque[bytes]] = {}
        self._plugged = False
        self.backend: SimUsbBackend | None = None

    # strings ----------------------------------------------------------------------------------
    def strings(self) -> dict[int, str]:
        """String descriptor table: 1 manufacturer, 2 product, 3 serial, 4.. interface names."""
        table = {1: self.manufacturer, 2: self.product, 3: self.serial}
        index = 4
        for config in self.configurations:
            for intf in config.interfaces:
                if intf.name:
                    table[index] = intf.name
                index += 1
        return {k: v for k, v in table.items() if v is not None}

    def interface_string_index(self, config_index: int, intf_index: int) -> int:
        flat = [i for c in self.configurations for i in c.interfaces]
        position = sum(len(c.interfaces) for c in self.configurations[:config_index]) + intf_index
        return 4 + position if flat[position].name else 0

    # data path --------------------------------------------------------------------------------
    def queue_in(self, endpoint: int, packet: bytes) -> None:
        """Make ``packet`` the next transfer(s) the host reads from IN ``endpoint``."""
        with self._cond:
            self._in.setdefault(endpoint, deque()).append(bytes(packet))
            self._cond.notify_all()

    def pending_in(self, endpoint: int) -> int:
        with self._cond:
            return len(self._in.get(endpoint, ()))

    def poll_in(self, endpoint: int, size: int, timeout_ms: int) -> bytes:
        """Block up to ``timeout_ms`` (0 = forever) for the next IN packet of ``endpoint``."""
        deadline = None if timeout_ms == 0 else timeout_ms / 1000.0
        with self._cond:
            ok = self._cond.wait_for(
                lambda: not self._plugged or bool(self._in.get(endpoint)), timeout=deadline)
            if not self._plugged:
                raise usb_error(LibusbCode.NO_DEVICE, NO_DEVICE_TEXT)
            if not ok:
                raise usb_error(LibusbCode.TIMEOUT, "Operation timed out")
            return self._in[endpoint].popleft()

    def on_out(self, endpoint: int, data: bytes) -> None:
        """The host wrote ``data`` to OUT ``endpoint``. Default: discard."""

    def on_control(self, request_type: int, request: int, value: int, index: int,
                   data: bytes, length: int) -> bytes | None:
        """A class or vendor control request. Return IN data (or None for OUT); default STALL."""
        raise usb_error(LibusbCode.PIPE, f"request 0x{request:02x} not supported (STALL)")

    def class_descriptor(self, kind: int, index: int, interface: int) -> bytes | None:
        """A class-specific descriptor asked for with GET_DESCRIPTOR (e.g. the HID report
        descriptor, type 0x22, of ``interface``); None STALLs, as for an unknown descriptor."""
        return None

    def on_plug(self) -> None:
        """Called after the device is enumerated (again)."""

    def on_unplug(self) -> None:
        """Called after the device disappeared; pending IN data is lost, as on real hardware."""

    def _set_plugged(self, plugged: bool) -> None:
        with self._cond:
            self._plugged = plugged
            if not plugged:
                self._in.clear()
            self._cond.notify_all()
