"""USB descriptor specs of simulated devices and their wire encoding (USB 2.0 chapter 9).

The specs are what :class:`firmware_sim.usb.backend.SimUsbBackend` hands pyusb as attribute
objects; the byte encoders answer GET_DESCRIPTOR control requests, so ``usb.util.get_string`` and
a raw descriptor dump see exactly what a real device would send.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum


class Transfer(IntEnum):
    """bmAttributes transfer type of an endpoint."""

    CONTROL = 0
    ISOCHRONOUS = 1
    BULK = 2
    INTERRUPT = 3


class InterfaceClass(IntEnum):
    HID = 0x03
    VENDOR = 0xFF


@dataclass(frozen=True, slots=True)
class EndpointSpec:
    address: int                     # bit 7 set = IN
    transfer: Transfer
    max_packet: int = 64
    interval: int = 0


@dataclass(frozen=True, slots=True)
class InterfaceSpec:
    number: int
    cls: int
    endpoints: tuple[EndpointSpec, ...]
    subclass: int = 0
    protocol: int = 0
    alt: int = 0
    name: str | None = None
    kernel_driver: bool = False      # bound by the OS at plug time (usbhid, cdc_acm, ...)
    extra: bytes = b""               # class descriptors after the interface (e.g. HID 0x21)


@dataclass(frozen=True, slots=True)
class ConfigurationSpec:
    value: int
    interfaces: tuple[InterfaceSpec, ...]
    attributes: int = 0x80           # bus powered
    max_power_ma: int = 100


def device_bytes(fields: Mapping[str, int]) -> bytes:
    """The 18-byte device descriptor."""
    return struct.pack(
        "<BBHBBBBHHHBBBB", 18, 1, fields["bcdUSB"], fields["bDeviceClass"],
        fields["bDeviceSubClass"], fields["bDeviceProtocol"], fields["bMaxPacketSize0"],
        fields["idVendor"], fields["idProduct"], fields["bcdDevice"], fields["iManufacturer"],
        fields["iProduct"], fields["iSerialNumber"], fields["bNumConfigurations"],
    )


def configuration_bytes(config: ConfigurationSpec, names: Mapping[int, int]) -> bytes:
    """Configuration descriptor followed by every interface, class and endpoint descriptor."""
    body = b""
    for position, intf in enumerate(config.interfaces):
        body += struct.pack("<BBBBBBBBB", 9, 4, intf.number, intf.alt, len(intf.endpoints),
                            intf.cls, intf.subclass, intf.protocol, names.get(position, 0))
        body += intf.extra
        for ep in intf.endpoints:
            body += struct.pack("<BBBBHB", 7, 5, ep.address, int(ep.transfer), ep.max_packet,
                                ep.interval)
    interfaces = len({i.number for i in config.interfaces})
    head = struct.pack("<BBHBBBBB", 9, 2, 9 + len(body), interfaces, config.value, 0,
                       config.attributes, config.max_power_ma // 2)
    return head + body


def string_bytes(text: str) -> bytes:
    """A string descriptor: bLength, type 3, UTF-16LE text."""
    encoded = text.encode("utf-16-le")[:252]
    return bytes([2 + len(encoded), 3]) + encoded
