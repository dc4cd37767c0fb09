"""Byte transports: open a port, move bytes in and out, report a disconnect.

This layer knows nothing of frames or cards (pymodbus keeps ``transport/`` apart the same way), so
the framed link, the barcode-scanner dialects and the Bee-Tek parser all sit on one seam. A read
timeout returns ``b""`` and is *not* a disconnect: a quiet shoe is normal, an unplugged one is
not. Serial ports are opened only with ``serial.serial_for_url(url, exclusive=True)`` so that a
config string alone chooses ``/dev/serial/by-id/...``, ``socket://host:port`` or ``loop://``.

The read timeout is *not* a latency: a read returns as soon as the first byte arrives, whatever
the timeout. It only bounds how long a reader waits on a quiet link before its idle hook runs
(:data:`READ_TIMEOUT_SECONDS`), and a stop does not wait it out: :meth:`Transport.cancel_read`
wakes a blocked read.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import Any

import serial
import structlog

from drivers.errors import DeviceDisconnected, DriverTimeoutError, OpenFailed

log = structlog.get_logger(__name__)

READ_TIMEOUT_SECONDS = 0.5
"""How long a read waits for a first byte. Every wake-up of an idle table costs CPU on the Pi, so
this is long; it is short enough for the framed link's heartbeat supervision (3 silent seconds
are noticed within half a second). While a dialect waits for an answer that it resends on a
timeout, the reader shortens it (:meth:`drivers.runner.DeviceRunner.idle_timeout`)."""


class Transport(ABC):
    """A bidirectional byte pipe to one device. Not thread-safe by itself: the runner serialises
    writes with one lock and reads from one thread."""

    url: str

    @abstractmethod
    def open(self) -> None:
        """Open the link; raise :class:`OpenFailed` naming the URL and the cause."""

    @abstractmethod
    def read(self, max_bytes: int = 4096) -> bytes:
        """Return what arrived (at most ``max_bytes``), waiting up to the read timeout for the
        first byte; ``b""`` on timeout. Raise :class:`DeviceDisconnected` when the link is gone."""

    @abstractmethod
    def write(self, data: bytes) -> None:
        """Write all of ``data``; raise :class:`DeviceDisconnected` or :class:`DriverTimeoutError`."""

    @abstractmethod
    def close(self) -> None:
        """Release the handle. Idempotent: the runner closes on every disconnect and on exit."""

    def cancel_read(self) -> None:  # noqa: B027 - optional: not every transport can
        """Make a read blocked in another thread return ``b""`` now, so that stopping a reader
        does not wait out the read timeout. Safe from any thread, also when closed; a
        transport that cannot do it does nothing (its reader stops at the next timeout)."""

    def limit_read_timeout(self, seconds: float | None) -> None:  # noqa: B027 - optional
        """Let the next reads wait at most ``seconds`` (``None``: the transport's own read
        timeout again). The reader's thread calls it, between reads, while its dialect has
        something pending that it resends on a timeout; a transport whose timeout is short
        anyway ignores it."""

    @property
    @abstractmethod
    def is_open(self) -> bool:
        """Whether a handle is held."""

    def __enter__(self) -> Transport:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


class SerialTransport(Transport):
    """A pyserial port: RS-232, USB-CDC, a pty, ``socket://`` or ``loop://``.

    ``read`` uses the pyserial idiom ``read(in_waiting or 1)``: it returns as soon as the first
    byte arrives instead of waiting for ``max_bytes``, which is what keeps the event latency far
    below one frame time at 115200 baud.
    """

    def __init__(self, url: str, *, baudrate: int = 115200,
                 read_timeout: float = READ_TIMEOUT_SECONDS,
                 write_timeout: float = 1.0, **serial_kwargs: Any) -> None:
        if not isinstance(url, str) or not url.strip():
            raise OpenFailed(f"serial URL must be a non-empty string, got {url!r}")
        self.url = url
        self.baudrate = baudrate
        self.read_timeout = read_timeout
        self.write_timeout = write_timeout
        self._serial_kwargs = serial_kwargs
        self._port: serial.SerialBase | None = None
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        port = self._port
        return port is not None and bool(port.is_open)

    def open(self) -> None:
        if self.is_open:
            return
        try:
            port = serial.serial_for_url(
                self.url, exclusive=True, baudrate=self.baudrate, timeout=self.read_timeout,
                write_timeout=self.write_timeout, **self._serial_kwargs,
            )
        except (serial.SerialException, OSError, ValueError) as e:
            raise OpenFailed(f"cannot open {self.url}: {e}") from e
        self._port = port
        log.debug("transport_open", url=self.url, baudrate=self.baudrate)

    def _require(self) -> serial.SerialBase:
        port = self._port
        if port is None or not port.is_open:
            raise DeviceDisconnected(f"{self.url} is not open")
        return port

    def read(self, max_bytes: int = 4096) -> bytes:
        port = self._require()
        try:
            waiting = port.in_waiting
            data = port.read(min(max(waiting, 1), max_bytes))
            # socket:// reports in_waiting as 0/1 only, so keep draining while bytes are ready.
            while data and len(data) < max_bytes:
                more = port.in_waiting
                if not more:
                    break
                data += port.read(min(more, max_bytes - len(data)))
        except (serial.SerialException, OSError, TypeError, AttributeError) as e:
            # TypeError/AttributeError: pyserial's posix read on a handle closed under it.
            raise DeviceDisconnected(f"{self.url} disconnected: {e}") from e
        return bytes(data)

    def write(self, data: bytes) -> None:
        port = self._require()
        try:
            port.write(data)
        except serial.SerialTimeoutException as e:
            raise DriverTimeoutError(f"write to {self.url} timed out after "
                                     f"{self.write_timeout:g} s") from e
        except (serial.SerialException, OSError, TypeError, AttributeError) as e:
            raise DeviceDisconnected(f"{self.url} disconnected on write: {e}") from e

    def limit_read_timeout(self, seconds: float | None) -> None:
        timeout = self.read_timeout if seconds is None else min(seconds, self.read_timeout)
        port = self._port
        if port is None or port.timeout == timeout:
            return
        try:
            port.timeout = timeout  # pyserial re-reads the termios settings: only on a change
        except (serial.SerialException, OSError, ValueError) as e:
            log.debug("transport_timeout_not_set", url=self.url, error=str(e))

    def cancel_read(self) -> None:
        # Under the lock that close() holds: pyserial cancels by writing to a pipe of the
        # port's, and that descriptor must not be closed (and its number reused) meanwhile.
        with self._lock:
            port = self._port
            cancel = getattr(port, "cancel_read", None)  # posix ports and loop://, not socket://
            if port is None or cancel is None or not port.is_open:
                return
            try:
                cancel()
            except (serial.SerialException, OSError) as e:
                log.debug("transport_cancel_read_error", url=self.url, error=str(e))

    def close(self) -> None:
        with self._lock:
            port, self._port = self._port, None
            if port is None:
                return
            try:
                port.close()
            except (serial.SerialException, OSError) as e:
                log.debug("transport_close_error", url=self.url, error=str(e))
        log.debug("transport_closed", url=self.url)
