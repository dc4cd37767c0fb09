"""The kiosk's USB HID badge reader: a supervisor's badge read while the dealer's screen waits.

A badge reader is a HID boot keyboard like the shoe's keyboard-mode scanner, so it is read by
the same code (:class:`drivers.shoe.hid.HidTransport`, :class:`drivers.shoe.hid_codec.
HidKeyboardCodec`) in a :class:`drivers.runner.DeviceRunner` thread, which reopens an
unplugged reader with bounded backoff and never dies on bad input. Each Enter-terminated line
is one badge read. A badge id is a credential: no line is ever logged, shown or journaled (the
runner's byte log is off for this device, and a dropped line is logged by *why* only).

The reader belongs to the kiosk, not to any session: a read goes to the one screen on loopback
that is waiting for it (:class:`BadgeWaiters`, fed from ``POST /dealer/supervisor/badge``) and
is dropped when none is, so a badge swiped at an idle table logs nobody in anywhere.
"""

from __future__ import annotations

import asyncio
import ipaddress
import queue
import threading
from collections.abc import Callable
from typing import Any

import structlog

from controller.web.auth import MAX_BADGE_CHARS
from drivers.events import DeviceEvent
from drivers.runner import DeviceRunner
from drivers.shoe.codes import Garbage, ScannedCode, printable
from drivers.shoe.hid import READ_TIMEOUT_MS, HidTransport, parse_usb_url
from drivers.shoe.hid_codec import HidKeyboardCodec

log = structlog.get_logger(__name__)

BADGE_WAIT_SECONDS = 30.0
"""How long the supervisor dialog waits for a badge before it answers "no badge read"."""
BACKOFF = (0.5, 10.0)
"""Reopening an unplugged reader: from half a second, doubling up to ten."""


class BadgeWaiters:
    """The one screen waiting for the next badge read; thread-safe (the reader thread delivers,
    the event loop waits). A newer wait replaces an older one, which ends with nothing: the
    kiosk has one reader and one person presenting a badge at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: tuple[asyncio.AbstractEventLoop, asyncio.Future[str | None]] | None = None

    async def wait(self, timeout: float = BADGE_WAIT_SECONDS) -> str | None:
        """The next badge read within ``timeout`` seconds, or None (timed out, or replaced)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()
        with self._lock:
            older, self._waiting = self._waiting, (loop, future)
        if older is not None:
            older[0].call_soon_threadsafe(_settle, older[1], None)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return None
        finally:
            with self._lock:
                if self._waiting is not None and self._waiting[1] is future:
                    self._waiting = None

    @property
    def waiting(self) -> bool:
        with self._lock:
            return self._waiting is not None

    def deliver(self, badge: str) -> bool:
        """Hand a read to the waiting screen (from any thread); False when nobody waits."""
        with self._lock:
            found, self._waiting = self._waiting, None
        if found is None:
            return False
        found[0].call_soon_threadsafe(_settle, found[1], badge)
        return True


def _settle(future: asyncio.Future[str | None], value: str | None) -> None:
    if not future.done():
        future.set_result(value)


class BadgeReader(DeviceRunner):
    """``BadgeReader(deliver, vendor_id=..., product_id=...)``: ``deliver(badge)`` for each good
    read, from the reader thread; it answers whether anyone was waiting."""

    log_rx = False
    """The runner's per-read byte log would be the badge id, keystroke by keystroke."""

    def __init__(self, deliver: Callable[[str], bool], *, vendor_id: int, product_id: int,
                 serial: str | None = None, backend: Any = None,
                 read_timeout_ms: int = READ_TIMEOUT_MS,
                 backoff: tuple[float, float] = BACKOFF) -> None:
        transport = HidTransport(vendor_id=vendor_id, product_id=product_id, serial=serial,
                                 backend=backend, read_timeout_ms=read_timeout_ms)
        unused: queue.Queue[DeviceEvent] = queue.Queue()  # never filled: see emit()
        super().__init__("badge-reader", transport, unused, backoff=backoff)
        self.hid = transport
        self.deliver = deliver
        self.codec = HidKeyboardCodec(aim=False)
        self.reads = 0
        """Good reads (handed on or not); for tests and the status."""
        self.dropped = 0
        """Lines that were not a badge (too long, unmapped keys, not printable)."""

    def emit(self, event: DeviceEvent) -> None:
        """Online/offline is logged (once per outage, as the runner reports it), not queued:
        no table thread consumes this reader's events."""
        self.log.info("badge_reader_" + type(event).__name__.lower(),
                      reason=getattr(event, "reason", None))

    def on_connected(self) -> None:
        self.codec = HidKeyboardCodec(aim=False, report_id=self.hid.report_id)
        super().on_connected()

    def on_disconnected(self, reason: str) -> None:
        self.codec = HidKeyboardCodec(aim=False)  # keys typed before the unplug are lost
        super().on_disconnected(reason)

    def on_bytes(self, data: bytes) -> None:
        message = self.codec.report(data)
        if isinstance(message, Garbage):
            self._drop("unreadable keys, or too long")  # never message.reason: it quotes the keys typed
        elif isinstance(message, ScannedCode):
            self.line(message.text)

    def line(self, text: str) -> None:
        """One Enter-terminated line (stripped): a badge read, or dropped and logged."""
        if len(text) > MAX_BADGE_CHARS:
            self._drop(f"longer than {MAX_BADGE_CHARS} characters")
        elif not printable(text):
            self._drop("not printable")
        else:
            self.reads += 1
            if not self.deliver(text):
                self.log.info("badge_read_unclaimed", why="no screen is waiting for a badge")

    def _drop(self, why: str) -> None:
        self.dropped += 1
        self.log.warning("badge_read_dropped", why=why)


def open_badge_reader(url: str, deliver: Callable[[str], bool], *, backend: Any = None,
                      **options: Any) -> BadgeReader:
    """The reader at ``usb:VID:PID[:SERIAL]`` (not started); a bad url is ``DriverConfigError``."""
    vendor_id, product_id, serial = parse_usb_url(url)
    return BadgeReader(deliver, vendor_id=vendor_id, product_id=product_id, serial=serial,
                       backend=backend, **options)


def is_loopback_address(address: str) -> bool:
    """The client is on this machine (the kiosk's own browser)."""
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
