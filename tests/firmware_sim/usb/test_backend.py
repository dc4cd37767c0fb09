"""SimUsbBackend behaves like pyusb's libusb1 backend for usb.core / usb.util callers."""

from __future__ import annotations

import errno

import pytest
import usb.control
import usb.core
import usb.util

from firmware_sim.usb.backend import (
    ConfigurationSpec,
    EndpointSpec,
    InterfaceSpec,
    SimUsbBackend,
    SimUsbDevice,
    Transfer,
)


class EchoDevice(SimUsbDevice):
    """Vendor-class bulk pair that echoes OUT data on IN, unconfigured at plug."""

    product_id = 0x0E40
    serial = "ECHO1"
    initial_configuration = 0
    configurations = (ConfigurationSpec(1, (InterfaceSpec(0, 0xFF, (
        EndpointSpec(0x01, Transfer.BULK), EndpointSpec(0x82, Transfer.BULK)), name="link"),)),)

    def on_out(self, endpoint: int, data: bytes) -> None:
        self.queue_in(0x82, data)


@pytest.fixture(name="echo")
def fixture_echo() -> EchoDevice:
    return EchoDevice()


@pytest.fixture(name="backend")
def fixture_backend(echo) -> SimUsbBackend:
    return SimUsbBackend([echo])


@pytest.fixture(name="dev")
def fixture_dev(backend):
    dev = usb.core.find(idVendor=0x1209, idProduct=0x0E40, backend=backend)
    assert dev is not None
    yield dev
    usb.util.dispose_resources(dev)


def test_find_matches_ids_and_serial(backend, dev):
    """usb.core.find selects by ids and by string descriptors read through GET_DESCRIPTOR."""
    assert usb.core.find(idVendor=0x1209, idProduct=0x0E41, backend=backend) is None
    assert usb.core.find(backend=backend, serial_number="ECHO1") is not None
    assert (dev.manufacturer, dev.product, dev.serial_number) == (
        "tablectl", "simulated device", "ECHO1")
    assert usb.util.get_string(dev, dev[0][(0, 0)].iInterface) == "link"


def test_configuration_descriptor_bytes_are_well_formed(dev):
    """A raw GET_DESCRIPTOR(configuration) returns the full 9+9+7+7 byte hierarchy."""
    raw = bytes(usb.control.get_descriptor(dev, 255, usb.util.DESC_TYPE_CONFIG, 0))
    assert raw[:2] == b"\x09\x02" and int.from_bytes(raw[2:4], "little") == len(raw) == 32


def test_unconfigured_device_needs_set_configuration(backend, echo, dev):
    """Configuration 0 means none active: pyusb says so until set_configuration."""
    with pytest.raises(usb.core.USBError):
        dev.get_active_configuration()
    dev.set_configuration()
    assert dev.get_active_configuration().bConfigurationValue == 1
    assert backend.state(echo).history[-1] == "set_configuration:1"


def test_bulk_echo_and_timeout(dev):
    """Bulk OUT reaches on_out; an empty IN times out with USBTimeoutError (ETIMEDOUT)."""
    dev.set_configuration()
    assert dev.write(0x01, b"ping") == 4
    assert bytes(dev.read(0x82, 64, 100)) == b"ping"
    with pytest.raises(usb.core.USBTimeoutError) as caught:
        dev.read(0x82, 64, 20)
    assert caught.value.errno == errno.ETIMEDOUT and caught.value.backend_error_code == -7


def test_unplug_fails_handles_and_replug_reenumerates(backend, echo, dev):
    """After unplug a handle fails with ENODEV; replug gives a new address and fresh state."""
    dev.set_configuration()
    address = dev.address
    backend.unplug(echo)
    with pytest.raises(usb.core.USBError) as caught:
        dev.write(0x01, b"x")
    assert caught.value.errno == errno.ENODEV
    assert usb.core.find(idVendor=0x1209, idProduct=0x0E40, backend=backend) is None
    backend.plug(echo)
    again = usb.core.find(idVendor=0x1209, idProduct=0x0E40, backend=backend)
    assert again.address != address and backend.state(echo).configuration == 0
    usb.util.dispose_resources(again)


def test_kernel_driver_blocks_claim_and_set_configuration():
    """A bound kernel driver makes claim and set_configuration EBUSY until detached."""
    class Keyboard(SimUsbDevice):
        configurations = (ConfigurationSpec(1, (InterfaceSpec(0, 0x03, (
            EndpointSpec(0x81, Transfer.INTERRUPT, 8, 1),), subclass=1, protocol=1,
            kernel_driver=True),)),)

    keyboard = Keyboard()
    backend = SimUsbBackend([keyboard])
    dev = usb.core.find(backend=backend)
    assert dev.is_kernel_driver_active(0)
    for action in (lambda: usb.util.claim_interface(dev, 0), lambda: dev.set_configuration()):
        with pytest.raises(usb.core.USBError) as caught:
            action()
        assert caught.value.errno == errno.EBUSY
    dev.detach_kernel_driver(0)
    usb.util.claim_interface(dev, 0)
    usb.util.release_interface(dev, 0)
    dev.attach_kernel_driver(0)
    assert backend.state(keyboard).history == ["open", "detach:0", "claim:0", "release:0",
                                               "attach:0"]
    usb.util.dispose_resources(dev)


def test_unknown_control_request_stalls(dev):
    """A class request the device does not implement is a STALL (EPIPE), as on hardware."""
    with pytest.raises(usb.core.USBError) as caught:
        dev.ctrl_transfer(0xC1, 0x01, 0, 0, 8)
    assert caught.value.errno == errno.EPIPE
