"""The drivers' exception tree.

``SerialException`` and ``USBError`` are translated at the driver boundary with
``raise ... from e`` so callers handle one tree. A timeout is not a disconnect: the two are kept
apart, because a quiet shoe is normal and an unplugged one is not.
"""

from __future__ import annotations

from enum import Enum


class DriverErrorCode(str, Enum):
    """Machine-readable reason carried by every :class:`DriverError`."""

    TIMEOUT = "timeout"
    DISCONNECTED = "disconnected"
    OPEN_FAILED = "open_failed"
    PROTOCOL = "protocol"
    NAK = "nak"
    DEVICE_FAULT = "device_fault"
    BAD_CONFIG = "bad_config"
    UNKNOWN_BARCODE = "unknown_barcode"


class DriverError(Exception):
    """Base of every error raised by :mod:`drivers`."""

    def __init__(self, message: str, code: DriverErrorCode = DriverErrorCode.PROTOCOL) -> None:
        super().__init__(message)
        self.code = code


class DriverTimeoutError(DriverError, TimeoutError):
    """The device did not answer in time. The link may still be up."""

    def __init__(self, message: str) -> None:
        super().__init__(message, DriverErrorCode.TIMEOUT)


class DeviceDisconnected(DriverError, ConnectionError):
    """The port or USB device went away (unplugged, closed, I/O error)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, DriverErrorCode.DISCONNECTED)


class OpenFailed(DriverError, OSError):
    """The port or USB device could not be opened (absent, busy, no permission)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, DriverErrorCode.OPEN_FAILED)


class ProtocolError(DriverError):
    """Bytes that do not form a valid frame or message."""

    def __init__(self, message: str) -> None:
        super().__init__(message, DriverErrorCode.PROTOCOL)


class CommandRejected(DriverError):
    """The device answered a command with NAK; ``reason`` says why."""

    def __init__(self, message: str, reason: object = None) -> None:
        super().__init__(message, DriverErrorCode.NAK)
        self.reason = reason


class DeviceFault(DriverError):
    """The device reports a fault that stops the requested operation."""

    def __init__(self, message: str) -> None:
        super().__init__(message, DriverErrorCode.DEVICE_FAULT)


class DriverConfigError(DriverError, ValueError):
    """A driver configuration (URL, dialect, deck map) that cannot be used."""

    def __init__(self, message: str) -> None:
        super().__init__(message, DriverErrorCode.BAD_CONFIG)


class UnknownBarcode(DriverError, ValueError):
    """A barcode that no deck map knows."""

    def __init__(self, message: str) -> None:
        super().__init__(message, DriverErrorCode.UNKNOWN_BARCODE)
