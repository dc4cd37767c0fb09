"""Finding one USB device by vendor, product and (optionally) serial number.

Both USB transports (the HID scanner and the vendor-class bulk link) open devices the same way:
only through ``usb.core.find(..., backend=...)``, so a test hands in a simulated backend and
production uses libusb. A missing device is :class:`OpenFailed`, never ``None``.
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
