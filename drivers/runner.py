"""One reader thread per device, with reconnect and backoff (pyserial's ``serial.threaded``).

The runner owns the life cycle every driver shares: open the transport, read, hand bytes to the
dialect's hooks, and when the port disappears close the old handle, report the device offline
*once*, and reopen with exponential, jittered backoff (:mod:`drivers.backoff`) until it comes
back. A dialect only writes hooks:

* ``on_connected()`` - the transport is open (default: emit :class:`DeviceOnline`);
* ``on_bytes(data)`` - bytes arrived;
* ``on_idle(now)`` - called after every read, data or timeout (heartbeats, silence detection):
  at once after bytes arrived, and at least once per read timeout, which is long on a quiet
  link (``drivers.transport.READ_TIMEOUT_SECONDS``) and shortened while ``idle_timeout()``
  says something is pending;
* ``idle_timeout()`` - ``None`` (the default), or how soon ``on_idle`` must run again because
  the dialect waits for an answer it resends on a timeout;
* ``on_disconnected(reason)`` - the link went away or could not be opened (default: emit
  :class:`DeviceOffline` once per outage).

An exception from a hook is logged and turned into a :class:`LinkError` event; it never kills the
thread, because a dead reader on the table's Pi means cards silently stop arriving.
"""

from __future__ import annotations

import queue
import threading
import time
from abc import ABC
from collections.abc import Callable

import structlog

from drivers.backoff import ExponentialBackoff
from drivers.errors import DeviceDisconnected, DriverConfigError, DriverError
from drivers.events import DeviceEvent, DeviceOffline, DeviceOnline, LinkError
from drivers.transport import Transport

log = structlog.get_logger(__name__)

JOIN_SECONDS = 2.0


class DeviceRunner(ABC):
    """Base of every device driver: a transport, a reader thread, one event queue."""

    log_rx: bool = True
    """Log each read's bytes at DEBUG; off for a device whose bytes are a credential (a badge
    reader types the badge id)."""

    def __init__(self, name: str, transport: Transport, events: queue.Queue[DeviceEvent], *,
                 backoff: tuple[float, float] = (0.1, 2.0),
                 clock: Callable[[], float] = time.monotonic,
                 jitter: Callable[[], float] | None = None) -> None:
        first, ceiling = backoff
        if not (0 < first <= ceiling):
            raise DriverConfigError(f"backoff must be (first, max) with 0 < first <= max, got "
                                    f"{backoff}")
        self.name = name
        self.transport = transport
        self.events = events
        self.backoff = (float(first), float(ceiling))
        self.jitter = jitter
        """Where the backoffs' jitter comes from (``[0, 1]``): ``None``, the process's random
        stream; a simulated device with a seed passes one derived from it, so its reconnects
        are paced the same every run (``tablectl bench --seed``)."""
        self.reopen = ExponentialBackoff(*self.backoff) if jitter is None else \
            ExponentialBackoff(*self.backoff, random=jitter)
        """The waits before each reopen: doubling from ``first`` to ``max``, jittered so that
        the readers a hub reset dropped together do not reopen in step (``drivers.backoff``)."""
        self.clock = clock
        self.log = log.bind(device=name, url=getattr(transport, "url", "?"))
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._online = False
        self._offline_reported = False
        self.connected = threading.Event()
        self.last_error = ""  # why the last open failed or the link last dropped
        self.link_epoch = 0
        """How many times the link was closed: a write that names the epoch it began in is
        refused once the link it was meant for has gone (:meth:`write`)."""

    # life cycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the reader thread (once)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"device-{self.name}",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop and join the reader thread, then close the transport. Idempotent. The blocked
        read is cancelled, so closing does not wait out the (long) read timeout."""
        self._stop.set()
        self.transport.cancel_read()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=JOIN_SECONDS)
            if thread.is_alive():
                self.log.warning("reader_thread_did_not_stop")
        with self._write_lock:
            self.transport.close()
        self.connected.clear()

    @property
    def running(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive() and not self._stop.is_set()

    def __enter__(self) -> DeviceRunner:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # outputs ----------------------------------------------------------------------------------
    def emit(self, event: DeviceEvent) -> None:
        """Put one typed event on the table's queue."""
        self.events.put(event)

    def write(self, data: bytes, *, epoch: int | None = None) -> None:
        """Write bytes to the device from any thread; one lock keeps frames whole. ``epoch``
        (:attr:`link_epoch` when a command was first sent): refused if the link has been closed
        since, so a command is never resent on the next link, where the device would take it
        for a new one (the same sequence number is a replay only on the link it was sent on)."""
        with self._write_lock:
            self.log.debug("tx", hex=data.hex(" "))
            if epoch is not None and epoch != self.link_epoch:
                raise DeviceDisconnected(f"{self.name}: the link went down under the command; "
                                         "it is not sent again on the new link")
            if not self.transport.is_open:
                raise DeviceDisconnected(f"{self.name}: {self.transport.url} is not connected")
            self.transport.write(data)

    def mark_online(self, event: DeviceOnline | None = None) -> None:
        """Report the device online, once per outage (subclasses may add identity/boot id)."""
        if self._online:
            return
        self._online = True
        self._offline_reported = False
        self.last_error = ""  # the outage is over: its cause is no longer the device's state
        self.emit(event or DeviceOnline(self.name, self.clock()))

    def mark_offline(self, reason: str) -> None:
        """Report the device offline, once per outage."""
        if self._offline_reported:
            return
        self._online = False
        self._offline_reported = True
        self.emit(DeviceOffline(self.name, self.clock(), reason=reason))

    @property
    def online(self) -> bool:
        return self._online

    # hooks ------------------------------------------------------------------------------------
    def on_connected(self) -> None:
        self.mark_online()

    def on_bytes(self, data: bytes) -> None:  # noqa: B027 - optional hook
        """Bytes arrived from the device."""

    def on_idle(self, now: float) -> None:  # noqa: B027 - optional hook
        """Called after every read, whether or not bytes arrived."""

    def idle_timeout(self) -> float | None:
        """How soon :meth:`on_idle` must run again, while something is pending that it
        resends on a timeout; ``None`` (nothing pending): the transport's read timeout, which
        is long, so that an idle table's reader rarely wakes."""
        return None

    def on_disconnected(self, reason: str) -> None:
        self.mark_offline(reason)

    # the reader thread ------------------------------------------------------------------------
    def _hook(self, name: str, *args: object) -> None:
        try:
            getattr(self, name)(*args)
        except Exception as error:  # noqa: BLE001 - the reader must survive any hook bug
            self.log.exception("hook_failed", hook=name, error=repr(error))
            try:
                self.emit(LinkError(self.name, self.clock(), reason=f"{name}: {error!r}"))
            except Exception:  # noqa: BLE001 - a broken queue must not kill the thread either
                self.log.exception("emit_failed")

    def _run(self) -> None:
        retries = self.reopen.retries()
        while not self._stop.is_set():
            try:
                self.transport.open()
            except Exception as error:  # noqa: BLE001 - an open that fails in any way is retried
                if not isinstance(error, DriverError):
                    # A transport bug, not a device state: log it loudly, but keep the reader
                    # alive and keep retrying, as for any device that cannot be opened.
                    self.log.exception("open_failed_unexpectedly", error=repr(error))
                self.last_error = str(error)
                self._hook("on_disconnected", str(error))
                self._stop.wait(retries.failed())  # first, 2x, 4x ... max, jittered
                continue
            retries.reset()
            self.connected.set()
            self.log.debug("connected")
            self._hook("on_connected")
            reason = self._pump()
            self.connected.clear()
            with self._write_lock:
                self.transport.close()
                self.link_epoch += 1
            if self._stop.is_set():
                break
            self.last_error = reason
            self.log.info("disconnected", reason=reason)
            self._hook("on_disconnected", reason)
            self._stop.wait(self.reopen.delay(1))  # a lost link: reopen after the first wait

    def _idle_timeout(self) -> float | None:
        try:
            return self.idle_timeout()
        except Exception as error:  # noqa: BLE001 - a hook bug must not stop the reader
            self.log.exception("hook_failed", hook="idle_timeout", error=repr(error))
            return None

    def _pump(self) -> str:
        """Read until the link drops or we are stopped; return the reason."""
        while not self._stop.is_set():
            self.transport.limit_read_timeout(self._idle_timeout())
            try:
                data = self.transport.read()
            except DeviceDisconnected as error:
                return str(error)
            except Exception as error:  # noqa: BLE001 - an unknown transport error is a drop
                self.log.exception("read_failed")
                return f"read failed: {error!r}"
            if data:
                if self.log_rx:
                    self.log.debug("rx", hex=data.hex(" "))
                self._hook("on_bytes", data)
            self._hook("on_idle", self.clock())
        return "closed"
