"""Serve a simulated device over a real pty or a loopback TCP socket.

The contract between a simulated device and the byte pipe is :class:`SimDevice`: the server calls
``attach(send)`` when a host connects, ``receive(data)`` with every chunk the host writes,
``tick(now)`` about every ``TICK_SECONDS`` (heartbeats, autodraw), and ``detach()`` when the host
goes away. ``send`` is thread-safe and passes every chunk through the server's manipulator, the
fault-injection hook (pymodbus's ``NullModem.set_manipulator``): it may split, corrupt or drop
bytes by returning a different list of chunks.

A pty server keeps a stable symlink (``link``) that follows the current pty, like a udev name, so
that ``unplug()``/``replug()`` can emulate a device that disappears and comes back on the same
path. A TCP server keeps its port; unplugging closes the connection.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

TICK_SECONDS = 0.05
Manipulator = Callable[[bytes], list[bytes]]


class SimDevice(Protocol):
    """What a simulated device offers the byte server."""

    def attach(self, send: Callable[[bytes], None]) -> None: ...

    def receive(self, data: bytes) -> None: ...

    def tick(self, now: float) -> None: ...

    def detach(self) -> None: ...


class _Server:
    """Shared machinery: one thread moves bytes between the link and the device."""

    def __init__(self, device: SimDevice, name: str) -> None:
        self.device = device
        self._manipulator: Manipulator | None = None
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"sim-{name}", daemon=True)
        self.bytes_to_host = 0
        self.bytes_from_host = 0

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

    # lifecycle ------------------------------------------------------------------------------
    def start(self) -> _Server:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        self._close_link()

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
                 name: str = "pty") -> None:
        super().__init__(device, name)
        self.link = Path(link) if link is not None else None
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

    def unplug(self) -> None:
        """The device disappears: the pty is closed, the host's next I/O fails."""
        self._plugged.clear()
        with self._write_lock:
            self.device.detach()
            self._close_fds()

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
        next_tick = time.monotonic()
        while not self._stop.is_set():
            if not self._plugged.wait(TICK_SECONDS):
                continue
            master = self._master
            try:
                ready, _, _ = select.select([master], [], [], TICK_SECONDS)
            except (OSError, ValueError):
                continue  # fd closed under us by unplug()
            if ready:
                try:
                    data = os.read(master, 4096)
                except (BlockingIOError, InterruptedError):
                    data = b""
                except OSError:
                    data = b""
                if data:
                    self.bytes_from_host += len(data)
                    self.device.receive(data)
            now = time.monotonic()
            if now >= next_tick:
                next_tick = now + TICK_SECONDS
                self.device.tick(now)


class TcpServer(_Server):
    """Serves ``device`` to one TCP client at a time on ``host:port`` (port 0 picks one)."""

    def __init__(self, device: SimDevice, host: str = "127.0.0.1", port: int = 0,
                 name: str = "tcp") -> None:
        super().__init__(device, name)
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
        next_tick = time.monotonic()
        while not self._stop.is_set():
            client = self._client
            watch = [client] if client is not None else [self._listener]
            try:
                ready, _, _ = select.select(watch, [], [], TICK_SECONDS)
            except (OSError, ValueError):
                ready = []
            if ready and client is None:
                try:
                    conn, _ = self._listener.accept()
                except OSError:
                    conn = None
                if conn is not None:
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    with self._write_lock:
                        self._client = conn
                    self.device.attach(self._send)
            elif ready and client is not None:
                try:
                    data = client.recv(4096)
                except OSError:
                    data = b""
                if data:
                    self.bytes_from_host += len(data)
                    self.device.receive(data)
                else:
                    with self._write_lock:
                        self._drop_client()
            now = time.monotonic()
            if now >= next_tick:
                next_tick = now + TICK_SECONDS
                if self._client is not None:
                    self.device.tick(now)
