"""An in-process ``usb.backend.IBackend`` that hosts simulated USB devices.

Drivers find devices with ``usb.core.find(idVendor=..., idProduct=..., backend=backend)`` exactly
as on the Pi (pyusb's own tests fake a backend the same way), so no test ever patches ``usb``.

API (helper modules build on this):

- :class:`SimUsbDevice` describes one device: ``vendor_id``, ``product_id``, ``manufacturer``,
  ``product``, ``serial`` strings, ``device_class`` and one or more :class:`ConfigurationSpec` of
  :class:`InterfaceSpec` (``cls`` 0x03 HID, 0xFF vendor; ``kernel_driver=True`` when the OS binds
  a driver at plug time, e.g. usbhid) of :class:`EndpointSpec` (``address`` 0x81 = IN 1,
  ``transfer`` :class:`Transfer`). ``initial_configuration`` is the bConfigurationValue active
  right after plugging (1 when the kernel configured it, 0 for "unconfigured").
  Subclasses override ``on_out(endpoint, data)`` (host wrote to an OUT endpoint) and either
  override ``poll_in(endpoint, size, timeout_ms)`` or call ``queue_in(endpoint, packet)`` and let
  the default ``poll_in`` hand packets out one per transfer. ``poll_in`` raises
  ``usb.core.USBTimeoutError`` (errno ETIMEDOUT, backend code -7) when nothing arrives in time, as
  the libusb1 backend does, and ``USBError`` ENODEV (-4) once the device is unplugged.
  ``on_control(...)`` answers class/vendor control requests (default: STALL, EPIPE).
- :class:`SimUsbBackend` (``SimUsbBackend(devices)``) enumerates plugged devices.
  ``unplug(dev)`` makes every open handle fail with ENODEV and wakes blocked reads; ``plug(dev)``
  re-enumerates it at a new address with fresh state (kernel drivers bound again, initial
  configuration). Per plug it tracks the active configuration (0 = none), claimed interfaces and
  kernel-driver state per interface, with libusb's errors: claiming an interface a kernel driver
  holds, or setting a configuration while an interface is claimed or kernel-bound, is EBUSY.
  Setting a configuration binds the OS drivers of its interfaces (``kernel_driver=True``) again,
  as Linux probes new interfaces; so configure first, then detach, then claim.
  ``state(dev)`` returns a :class:`PlugState` snapshot and ``state(dev).history`` records calls
  such as ``"detach:0"``, ``"set_configuration:1"``, ``"claim:0"`` for tests.

:class:`SimUsbDevice`, :class:`LibusbCode` and :func:`usb_error` live in
:mod:`firmware_sim.usb.device` and are re-exported here.
"""

from __future__ import annotations

import array
import itertools
import threading
from dataclasses import dataclass, field

import usb.backend

from firmware_sim.usb.descriptors import (
    ConfigurationSpec,
    EndpointSpec,
    InterfaceSpec,
    Transfer,
    configuration_bytes,
    device_bytes,
    string_bytes,
)
from firmware_sim.usb.device import NO_DEVICE_TEXT, LibusbCode, SimUsbDevice, usb_error

__all__ = [
    "ConfigurationSpec", "EndpointSpec", "InterfaceSpec", "LibusbCode", "PlugState",
    "SimUsbBackend", "SimUsbDevice", "Transfer", "usb_error",
]


@dataclass(slots=True)
class PlugState:
    """Host-visible state of one enumeration of a device (reset by every plug)."""

    device: SimUsbDevice
    bus: int
    address: int
    configuration: int
    kernel_driver: dict[int, bool]
    claimed: set[int] = field(default_factory=set)
    alive: bool = True
    open_handles: int = 0
    history: list[str] = field(default_factory=list)

    def active_interfaces(self) -> tuple[InterfaceSpec, ...]:
        for config in self.device.configurations:
            if config.value == self.configuration:
                return config.interfaces
        return ()


@dataclass(slots=True)
class _Handle:
    plug: PlugState
    open: bool = True


class _Descriptor:
    """Plain attribute bag, the shape pyusb's ``_set_attr`` copies fields from."""

    def __init__(self, **fields: object) -> None:
        self.__dict__.update(fields)


class SimUsbBackend(usb.backend.IBackend):
    """Enumerates the plugged :class:`SimUsbDevice` objects and performs their transfers."""

    def __init__(self, devices: tuple[SimUsbDevice, ...] | list[SimUsbDevice] = ()) -> None:
        super().__init__()
        self._lock = threading.RLock()
        self._plugs: dict[int, PlugState] = {}  # id(device) -> current plug
        self._addresses = itertools.count(2)
        for device in devices:
            self.plug(device)

    # hot plug ---------------------------------------------------------------------------------
    def plug(self, device: SimUsbDevice) -> PlugState:
        """Enumerate ``device`` (again) at a new address with fresh host-side state."""
        with self._lock:
            if id(device) in self._plugs:
                return self._plugs[id(device)]
            config = device.initial_configuration
            plug = PlugState(device, bus=1, address=next(self._addresses), configuration=config,
                             kernel_driver={})
            for intf in plug.active_interfaces():
                plug.kernel_driver[intf.number] = intf.kernel_driver
            self._plugs[id(device)] = plug
            device.backend = self
        device._set_plugged(True)
        device.on_plug()
        return plug

    def unplug(self, device: SimUsbDevice) -> None:
        """Remove ``device``: open handles now fail with ENODEV, blocked reads wake up."""
        with self._lock:
            plug = self._plugs.pop(id(device), None)
            if plug is None:
                return
            plug.alive = False
        device._set_plugged(False)
        device.on_unplug()

    def is_plugged(self, device: SimUsbDevice) -> bool:
        with self._lock:
            return id(device) in self._plugs

    def state(self, device: SimUsbDevice) -> PlugState:
        """The current plug's state (KeyError if unplugged)."""
        with self._lock:
            return self._plugs[id(device)]

    # enumeration ------------------------------------------------------------------------------
    def enumerate_devices(self):  # type: ignore[no-untyped-def]
        with self._lock:
            return list(self._plugs.values())

    def get_parent(self, dev: PlugState) -> None:
        return None

    def get_device_descriptor(self, dev: PlugState) -> _Descriptor:
        d = dev.device
        return _Descriptor(
            bLength=18, bDescriptorType=1, bcdUSB=0x0200, bDeviceClass=d.device_class,
            bDeviceSubClass=0, bDeviceProtocol=0, bMaxPacketSize0=64, idVendor=d.vendor_id,
            idProduct=d.product_id, bcdDevice=d.bcd_device,
            iManufacturer=1 if d.manufacturer is not None else 0,
            iProduct=2 if d.product is not None else 0,
            iSerialNumber=3 if d.serial is not None else 0,
            bNumConfigurations=len(d.configurations), address=dev.address, bus=dev.bus,
            port_number=1, port_numbers=(1,), speed=3,
        )

    def get_configuration_descriptor(self, dev: PlugState, config: int) -> _Descriptor:
        c = self._config(dev, config)
        return _Descriptor(
            bLength=9, bDescriptorType=2, wTotalLength=len(configuration_bytes(c, {})),
            bNumInterfaces=len({i.number for i in c.interfaces}), bConfigurationValue=c.value,
            iConfiguration=0, bmAttributes=c.attributes, bMaxPower=c.max_power_ma // 2,
            extra_descriptors=[],
        )

    def get_interface_descriptor(self, dev: PlugState, intf: int, alt: int,
                                 config: int) -> _Descriptor:
        i = self._interface(dev, intf, alt, config)
        return _Descriptor(
            bLength=9, bDescriptorType=4, bInterfaceNumber=i.number, bAlternateSetting=i.alt,
            bNumEndpoints=len(i.endpoints), bInterfaceClass=i.cls, bInterfaceSubClass=i.subclass,
            bInterfaceProtocol=i.protocol,
            iInterface=dev.device.interface_string_index(config, intf),
            extra_descriptors=list(i.extra),
        )

    def get_endpoint_descriptor(self, dev: PlugState, ep: int, intf: int, alt: int,
                                config: int) -> _Descriptor:
        e = self._interface(dev, intf, alt, config).endpoints[ep]
        return _Descriptor(
            bLength=7, bDescriptorType=5, bEndpointAddress=e.address, bmAttributes=int(e.transfer),
            wMaxPacketSize=e.max_packet, bInterval=e.interval, bRefresh=0, bSynchAddress=0,
            extra_descriptors=[],
        )

    def _config(self, dev: PlugState, config: int) -> ConfigurationSpec:
        try:
            return dev.device.configurations[config]
        except IndexError:
            raise usb_error(LibusbCode.NOT_FOUND, f"no configuration index {config}") from None

    def _interface(self, dev: PlugState, intf: int, alt: int, config: int) -> InterfaceSpec:
        interfaces = self._config(dev, config).interfaces
        try:
            if alt != 0:
                raise IndexError(alt)  # one alternate setting per interface is all we simulate
            return interfaces[intf]
        except IndexError:
            raise usb_error(LibusbCode.NOT_FOUND, f"no interface index {intf}/{alt}") from None

    # handles ----------------------------------------------------------------------------------
    def open_device(self, dev: PlugState) -> _Handle:
        with self._lock:
            if not dev.alive:
                raise usb_error(LibusbCode.NO_DEVICE, NO_DEVICE_TEXT)
            dev.open_handles += 1
            dev.history.append("open")
            return _Handle(dev)

    def close_device(self, dev_handle: _Handle) -> None:
        with self._lock:
            if not dev_handle.open:
                return
            dev_handle.open = False
            plug = dev_handle.plug
            plug.open_handles -= 1
            plug.claimed.clear()  # closing usbfs releases claims; kernel drivers stay detached
            plug.history.append("close")

    def _live(self, handle: _Handle) -> PlugState:
        if not handle.open or not handle.plug.alive:
            raise usb_error(LibusbCode.NO_DEVICE, NO_DEVICE_TEXT)
        return handle.plug

    def _known_interface(self, plug: PlugState, intf: int) -> None:
        if intf not in {i.number for i in plug.active_interfaces()}:
            raise usb_error(LibusbCode.NOT_FOUND,
                            f"interface {intf} not in active configuration {plug.configuration}")

    # configuration and interfaces -------------------------------------------------------------
    def get_configuration(self, dev_handle: _Handle) -> int:
        with self._lock:
            return self._live(dev_handle).configuration

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        with self._lock:
            plug = self._live(dev_handle)
            if config_value not in {0, *(c.value for c in plug.device.configurations)}:
                raise usb_error(LibusbCode.NOT_FOUND, f"no configuration {config_value}")
            busy = plug.claimed or any(plug.kernel_driver.values())
            if busy:
                raise usb_error(LibusbCode.BUSY, "interfaces claimed or bound to a kernel driver")
            plug.configuration = config_value
            # the OS probes the new interfaces and binds its drivers, as Linux does
            plug.kernel_driver = {i.number: i.kernel_driver for i in plug.active_interfaces()}
            plug.history.append(f"set_configuration:{config_value}")

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        with self._lock:
            plug = self._live(dev_handle)
            self._known_interface(plug, intf)
            if altsetting != 0:
                raise usb_error(LibusbCode.NOT_FOUND, f"no alternate setting {altsetting}")

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        with self._lock:
            plug = self._live(dev_handle)
            self._known_interface(plug, intf)
            if plug.kernel_driver.get(intf):
                raise usb_error(LibusbCode.BUSY, f"interface {intf} is held by a kernel driver")
            plug.claimed.add(intf)
            plug.history.append(f"claim:{intf}")

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        with self._lock:
            plug = self._live(dev_handle)
            if intf not in plug.claimed:
                raise usb_error(LibusbCode.NOT_FOUND, f"interface {intf} is not claimed")
            plug.claimed.discard(intf)
            plug.history.append(f"release:{intf}")

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        with self._lock:
            plug = self._live(dev_handle)
            return plug.kernel_driver.get(intf, False)  # no such interface: no driver (ENODATA)

    def detach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        with self._lock:
            plug = self._live(dev_handle)
            self._known_interface(plug, intf)
            if not plug.kernel_driver.get(intf):
                raise usb_error(LibusbCode.NOT_FOUND, f"no kernel driver on interface {intf}")
            plug.kernel_driver[intf] = False
            plug.history.append(f"detach:{intf}")

    def attach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        with self._lock:
            plug = self._live(dev_handle)
            self._known_interface(plug, intf)
            if intf in plug.claimed or plug.kernel_driver.get(intf):
                raise usb_error(LibusbCode.BUSY, f"interface {intf} is claimed or already bound")
            plug.kernel_driver[intf] = True
            plug.history.append(f"attach:{intf}")

    # transfers --------------------------------------------------------------------------------
    def _endpoint(self, plug: PlugState, ep: int, intf: int) -> EndpointSpec:
        if intf not in plug.claimed:
            raise usb_error(LibusbCode.NOT_FOUND, f"interface {intf} not claimed")
        for i in plug.active_interfaces():
            if i.number == intf:
                for e in i.endpoints:
                    if e.address == ep:
                        return e
        raise usb_error(LibusbCode.NOT_FOUND, f"no endpoint 0x{ep:02x} on interface {intf}")

    def _read(self, dev_handle: _Handle, ep: int, intf: int, buff: array.array,
              timeout: int) -> int:
        with self._lock:
            plug = self._live(dev_handle)
            self._endpoint(plug, ep, intf)
        packet = plug.device.poll_in(ep, len(buff) * buff.itemsize, timeout)
        if len(packet) > len(buff) * buff.itemsize:
            raise usb_error(LibusbCode.OVERFLOW, f"{len(packet)}-byte packet, buffer too small")
        memoryview(buff).cast("B")[: len(packet)] = packet
        return len(packet)

    def _write(self, dev_handle: _Handle, ep: int, intf: int, data: array.array,
               timeout: int) -> int:
        with self._lock:
            plug = self._live(dev_handle)
            self._endpoint(plug, ep, intf)
        payload = data.tobytes()
        plug.device.on_out(ep, payload)
        return len(payload)

    bulk_read = intr_read = _read
    bulk_write = intr_write = _write

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        with self._lock:
            self._live(dev_handle)

    def reset_device(self, dev_handle: _Handle) -> None:
        with self._lock:
            plug = self._live(dev_handle)
            plug.claimed.clear()
            plug.history.append("reset")

    def ctrl_transfer(self, dev_handle: _Handle, bmRequestType: int, bRequest: int,
                      wValue: int, wIndex: int, data: array.array, timeout: int) -> int:
        with self._lock:
            plug = self._live(dev_handle)
        length = len(data) * data.itemsize
        device_to_host = bool(bmRequestType & 0x80)
        standard = (bmRequestType & 0x60) == 0
        if standard and bRequest == 0x06 and device_to_host:
            reply = self._descriptor(plug, wValue >> 8, wValue & 0xFF, wIndex)
        elif standard and bRequest == 0x08 and device_to_host:
            reply = bytes([plug.configuration])
        elif standard and bRequest == 0x09 and not device_to_host:
            self.set_configuration(dev_handle, wValue & 0xFF)
            return 0
        else:
            out = b"" if device_to_host else data.tobytes()
            reply = plug.device.on_control(bmRequestType, bRequest, wValue, wIndex, out, length)
            if not device_to_host:
                return length
            reply = reply or b""
        reply = reply[:length]
        memoryview(data).cast("B")[: len(reply)] = reply
        return len(reply)

    def _descriptor(self, plug: PlugState, kind: int, index: int, w_index: int = 0) -> bytes:
        device = plug.device
        if kind == 1:
            return device_bytes(self.get_device_descriptor(plug).__dict__)
        if kind == 2 and index < len(device.configurations):
            names = {n: device.interface_string_index(index, n)
                     for n in range(len(device.configurations[index].interfaces))}
            return configuration_bytes(device.configurations[index], names)
        if kind == 3:
            if index == 0:
                return bytes([4, 3, 0x09, 0x04])  # LANGID table: en-US
            text = device.strings().get(index)
            if text is not None:
                return string_bytes(text)
        if kind >= 0x21:  # a class descriptor (HID 0x21, report 0x22) of interface w_index
            found = device.class_descriptor(kind, index, w_index)
            if found is not None:
                return found
        raise usb_error(LibusbCode.PIPE, f"descriptor type {kind} index {index} (STALL)")
