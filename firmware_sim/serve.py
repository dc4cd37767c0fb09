"""Serve a simulated device over a real pty or a loopback TCP socket.

The contract between a simulated device and the byte pipe is :class:`SimDevice`: the server calls
``attach(send)`` when a host connects, ``receive(data)`` with every chunk the host writes,
``tick(now)`` about every ``TICK_SECONDS`` (heartbeats, autodraw; but see idle ticking below),
and ``detach()`` when the host goes away. ``send`` is thread-safe and passes every chunk through
the server's manipulator, the fault-injection hook (pymodbus's ``NullModem.set_manipulator``): it
may split, corrupt or drop bytes by returning a different list of chunks.

A pty server keeps a stable symlink (``link``) that follows the current pty, like a udev name, so
that ``unplug()``/``replug()`` can emulate a device that disappears and comes back on the same
path. A TCP server keeps its port; unplugging closes the connection.

**Idle ticking** (``idle_tick=``, used by the table service, where the simulator runs for months
beside an idle table). The tick is fast (``TICK_SECONDS``) while the link is *busy*: for
``BUSY_SECONDS`` after a host connects or writes (a command, an event acknowledgement), or after
the device sends from another thread (an event raised by a dealer's action); every timed step of
the simulators (a shuffle finishing, an event resent every 0.3 s until acknowledged, a stall
ending) follows one of those within that window. Otherwise the server ticks every ``idle_tick``
seconds, in step with the device's own periodic output: the next idle tick is ``idle_tick``
after the last tick in which the device sent something by itself (its heartbeat), so a device
whose heartbeat period is ``idle_tick`` still beats exactly that often. Without ``idle_tick``
the tick is always fast (the drivers' tests, the command line).
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
import tty
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

TICK_SECONDS = 0.05
BUSY_SECONDS = 2.0
"""How long after the last traffic the link counts as busy (fast ticks); see the module doc."""
Manipulator = Callable[[bytes], list[bytes]]


class SimDevice(Protocol):
    """What a simulated device offers the byte server."""

    def attach(self, send: Callable[[bytes], None]) -> None: ...

    def receive(self, data: bytes) -> None: ...

    def tick(self, now: float) -> None: ...

    def detach(self) -> None: ...


class _Server:
    """Shared machinery: one thread moves bytes between the link and the device, and ticks it."""

    def __init__(self, device: SimDevice, name: str, idle_tick: float | None = None) -> None:
        if idle_tick is not None and idle_tick < TICK_SECONDS:
            raise ValueError(f"idle_tick must be at least {TICK_SECONDS} s, got {idle_tick}")
        self.device = device
        self.idle_tick = idle_tick
        self._manipulator: Manipulator | None = None
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"sim-{name}", daemon=True)
        self.bytes_to_host = 0
        self.bytes_from_host = 0
        self._busy_until = 0.0
        self._ticking = False
        self._spoke = False
        self._spoke_at: float | None = None
        """When the device last sent something from inside a tick (its heartbeat)."""
        self._wake_lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    # fault injection -----------------------------------------------------------------------
    def set_manipulator(self, manipulator: Manipulator | None) -> None:
        """Install (or remove with ``None``) a hook that rewrites every outgoing chunk."""
        self._manipulator = manipulator

    def _send(self, data: bytes) -> None:
        chunks = self._manipulator(data) if self._manipulator else [data]
        with self._write_lock:
            for chunk in chunks:
                if chunk:
                    self._write(chunk)
                    self.bytes_to_host += len(chunk)
        if threading.current_thread() is not self._thread:
            self.busy()  # a dealer's action: an event that waits for its acknowledgement
        elif self._ticking:
            self._spoke = True

    # ticking --------------------------------------------------------------------------------
    def busy(self) -> None:
        """Tick fast for the next ``BUSY_SECONDS`` (wakes an idle server at once; a busy one
        ticks within ``TICK_SECONDS`` anyway)."""
        now = time.monotonic()
        was_idle = now >= self._busy_until
        self._busy_until = now + BUSY_SECONDS
        if was_idle and self.idle_tick is not None:
            self._wake()

    def _wake(self) -> None:
        with self._wake_lock:
            if self._wake_w >= 0:
                with contextlib.suppress(OSError):  # full: a wake-up is pending anyway
                    os.write(self._wake_w, b"\0")

    def _drain_wake(self) -> None:
        with contextlib.suppress(OSError):  # BlockingIOError once it is empty
            while os.read(self._wake_r, 512):
                pass

    def _due(self, last: float) -> float:
        """When the tick after the one at ``last`` is due (see the module doc)."""
        if self.idle_tick is None or time.monotonic() < self._busy_until:
            return last + TICK_SECONDS
        spoke = self._spoke_at
        if spoke is not None and spoke + self.idle_tick > last:
            return spoke + self.idle_tick
        return last + self.idle_tick

    def _tick(self, now: float) -> None:
        self._ticking, self._spoke = True, False
        try:
            self.device.tick(now)
        finally:
            self._ticking = False
        if self._spoke:
            self._spoke_at = now

    def _wait(self, watch: Sequence[int | socket.socket], due: float) -> list[Any]:
        """Wait for ``watch`` or the wake-up pipe until ``due``; the ready ones. Raises
        OSError/ValueError when a descriptor was closed under us."""
        timeout = max(0.0, due - time.monotonic())
        ready, _, _ = select.select([self._wake_r, *watch], [], [], timeout)
        if self._wake_r in ready:
            self._drain_wake()
        return ready

    # lifecycle ------------------------------------------------------------------------------
    def start(self) -> _Server:
        self._busy_until = time.monotonic() + BUSY_SECONDS  # the greeting is due now
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        self._close_link()
        with self._wake_lock:
            for fd in (self._wake_r, self._wake_w):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._wake_r = self._wake_w = -1

    def __enter__(self) -> _Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # subclass hooks -------------------------------------------------------------------------
    def _write(self, chunk: bytes) -> None:
        raise NotImplementedError

    def _close_link(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        raise NotImplementedError


class PtyServer(_Server):
    """Serves ``device`` on a fresh pty; ``path`` is the slave side a driver opens."""

    def __init__(self, device: SimDevice, *, link: str | os.PathLike[str] | None = None,
                 name: str = "pty", idle_tick: float | None = None,
                 tick_on_command: bool = False) -> None:
        super().__init__(device, name, idle_tick)
        self.link = Path(link) if link is not None else None
        self.tick_on_command = tick_on_command
        """Tick right after bytes from the host, so that a step a command started with no
        duration (the service's simulators: zero shuffle and dispense times) completes once the
        command is answered rather than at the next tick."""
        self._master = -1
        self._slave = -1
        self.path = ""
        self._plugged = threading.Event()
        self._open_pty()

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        if self.link is not None:
            tmp = self.link.with_name(self.link.name + ".new")
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            tmp.symlink_to(self.path)
            tmp.replace(self.link)
        self.device.attach(self._send)
        self._plugged.set()
        self.busy()

    def unplug(self) -> None:
        """The device disappears: the pty is closed, the host's next I/O fails, and the link
        goes too, as udev removes a device's name on unplug. (A link left pointing at the old
        pty lets a host reopen that pty number once the kernel hands it to someone else.)"""
        self._plugged.clear()
        with self._write_lock:
            self.device.detach()
            self._close_fds()
        if self.link is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()

    def replug(self) -> None:
        """The device comes back on a new pty; ``link`` (if any) now points at it."""
        with self._write_lock:
            self._open_pty()

    def _close_fds(self) -> None:
        for fd in (self._master, self._slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = -1

    def _write(self, chunk: bytes) -> None:
        view = memoryview(chunk)
        while view and self._master >= 0:
            try:
                written = os.write(self._master, view)
            except BlockingIOError:
                select.select([], [self._master], [], 0.05)
                continue
            except OSError:
                return
            view = view[written:]

    def _close_link(self) -> None:
        with self._write_lock:
            self._close_fds()
        if self.link is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.is_set():
            master = self._master if self._plugged.is_set() else -1
            try:
                ready = self._wait([master] if master >= 0 else [], self._due(last))
            except (OSError, ValueError):
                continue  # fd closed under us by unplug(): it is no longer plugged
            if master >= 0 and master in ready:
                try:
                    data = os.read(master, 4096)
                except OSError:  # BlockingIOError, InterruptedError, or closed by unplug()
                    data = b""
                if data:
                    self.bytes_from_host += len(data)
                    self._busy_until = time.monotonic() + BUSY_SECONDS
                    self.device.receive(data)
                    if self.tick_on_command:
                        last = 0.0  # tick now (see __init__)
            now = time.monotonic()
            if now >= self._due(last):
                last = now
                if self._plugged.is_set():  # an unplugged device is not ticked
                    self._tick(now)


class TcpServer(_Server):
    """Serves ``device`` to one TCP client at a time on ``host:port`` (port 0 picks one)."""

    def __init__(self, device: SimDevice, host: str = "127.0.0.1", port: int = 0,
                 name: str = "tcp", idle_tick: float | None = None) -> None:
        super().__init__(device, name, idle_tick)
        self._listener = socket.create_server((host, port))
        self._listener.setblocking(False)
        self.host, self.port = self._listener.getsockname()[:2]
        self._client: socket.socket | None = None

    @property
    def url(self) -> str:
        """The pyserial URL a driver opens: ``socket://host:port``."""
        return f"socket://{self.host}:{self.port}"

    def unplug(self) -> None:
        """Drop the current connection; the next one is accepted as a replug."""
        with self._write_lock:
            self._drop_client()

    def replug(self) -> None:
        """Nothing to do: the listener keeps accepting."""

    def _drop_client(self) -> None:
        if self._client is not None:
            self.device.detach()
            with contextlib.suppress(OSError):
                self._client.close()
            self._client = None

    def _write(self, chunk: bytes) -> None:
        if self._client is None:
            return
        try:
            self._client.sendall(chunk)
        except OSError:
            pass

    def _close_link(self) -> None:
        with self._write_lock:
            self._drop_client()
        with contextlib.suppress(OSError):
            self._listener.close()

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.is_set():
            client = self._client
            watched: socket.socket = client if client is not None else self._listener
            try:
                ready = self._wait([watched], self._due(last))
            except (OSError, ValueError):
                ready = []
            if client is None and watched in ready:
                try:
                    conn, _ = self._listener.accept()
                except OSError:
                    conn = None
                if conn is not None:
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    with self._write_lock:
                        self._client = conn
                    self.device.attach(self._send)
                    self._busy_until = time.monotonic() + BUSY_SECONDS
            elif client is not None and watched in ready:
                try:
                    data = client.recv(4096)
                except OSError:
                    data = b""
                if data:
                    self.bytes_from_host += len(data)
                    self._busy_until = time.monotonic() + BUSY_SECONDS
                    self.device.receive(data)
                else:
                    with self._write_lock:
                        self._drop_client()
            now = time.monotonic()
            if now >= self._due(last):
                last = now
                if self._client is not None:
                    self._tick(now)
