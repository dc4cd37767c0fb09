"""Finding one USB device by vendor, product and (optionally) serial number, and taking one of
its interfaces from the operating system.

Both USB transports (the HID scanner and the vendor-class bulk link) open devices the same way:
only through ``usb.core.find(..., backend=...)``, so a test hands in a simulated backend and
production uses libusb. A missing device is :class:`OpenFailed`, never ``None``. Both then take
an interface in the order a Linux host needs (:func:`active_configuration`, then
:func:`claim`: the configuration set only when none is active, the kernel's driver detached
only after that, since setting a configuration lets the OS bind its driver again), and look up
their endpoints by direction and type (:func:`endpoint`). One copy of each, here.
"""

from __future__ import annotations

from typing import Any

import usb.core
import usb.util

from drivers.errors import OpenFailed


def find_device(vendor_id: int, product_id: int, serial: str | None, backend: Any,
                url: str) -> Any:
    """The attached device with these ids (and serial, when given); ``url`` names it in errors."""

    def serial_matches(dev: Any) -> bool:
        if serial is None:
            return True
        try:
            return bool(usb.util.get_string(dev, dev.iSerialNumber) == serial)
        except (usb.core.USBError, ValueError):
            return False

    try:
        dev = usb.core.find(idVendor=vendor_id, idProduct=product_id, backend=backend,
                            custom_match=serial_matches)
    except usb.core.NoBackendError as e:
        raise OpenFailed(f"cannot enumerate {url}: no USB backend: install libusb-1.0 "
                         "(Debian: apt-get install libusb-1.0-0)") from e
    except (usb.core.USBError, ValueError) as e:
        raise OpenFailed(f"cannot enumerate {url}: {e}") from e
    if dev is None:
        raise OpenFailed(f"no USB device {url} is attached")
    return dev


def active_configuration(dev: Any) -> Any:
    """The device's active configuration, setting the first one only when none is active
    (pyusb's "Configuration not set"): re-setting an active one resets the device."""
    try:
        return dev.get_active_configuration()
    except usb.core.USBError:
        dev.set_configuration()
        return dev.get_active_configuration()


def claim(dev: Any, interface: int) -> bool:
    """Take ``interface`` from the OS: detach the kernel's driver if one is bound (after the
    configuration is set, :func:`active_configuration`), then claim it. ``True``: a kernel
    driver was detached (the HID keyboard driver, to be given back on close)."""
    detached = bool(dev.is_kernel_driver_active(interface))
    if detached:
        dev.detach_kernel_driver(interface)
    usb.util.claim_interface(dev, interface)
    return detached


def endpoint(intf: Any, direction: int, kind: int) -> Any:
    """The interface's first endpoint of ``direction`` (``usb.util.ENDPOINT_IN``/``OUT``) and
    ``kind`` (``usb.util.ENDPOINT_TYPE_BULK``, ``..._INTR``); ``None`` if it has none."""
    return usb.util.find_descriptor(intf, custom_match=lambda e: (
        usb.util.endpoint_direction(e.bEndpointAddress) == direction
        and usb.util.endpoint_type(e.bmAttributes) == kind))
