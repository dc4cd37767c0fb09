"""A shoe driver for the line-oriented serial dialects, on :class:`drivers.runner.DeviceRunner`.

The runner owns the port, the reader thread and reconnects; this class only feeds bytes to a
pure decoder and hands each decoded message to the dialect's ``handle``. Partial input is kept
across reads (a code may arrive split over two reads) and dropped on a disconnect, because bytes
from before an unplug cannot be joined to bytes after it.
"""

from __future__ import annotations

import queue
from typing import Any, Protocol

from drivers.events import DeviceEvent
from drivers.runner import DeviceRunner
from drivers.shoe.codes import Garbage
from drivers.shoe.tracker import ShoeTracker
from drivers.transport import READ_TIMEOUT_SECONDS, SerialTransport, Transport

MAX_BUFFER = 4096


class Decoder(Protocol):
    def decode(self, buf: bytes) -> tuple[int, Any]: ...

    def reset(self) -> None: ...


class LineShoe(DeviceRunner):
    """Common reader for the scanner and Bee-Tek dialects."""

    def __init__(self, url: str | Transport, events: queue.Queue[DeviceEvent], *, name: str,
                 decoder: Decoder, baudrate: int, tracker_options: dict[str, Any],
                 read_timeout: float = READ_TIMEOUT_SECONDS, **runner_options: Any) -> None:
        transport = (url if isinstance(url, Transport)
                     else SerialTransport(url, baudrate=baudrate, read_timeout=read_timeout))
        super().__init__(name, transport, events, **runner_options)
        self.decoder = decoder
        self.tracker = ShoeTracker(name, self.emit, self.clock, **tracker_options)
        self._buf = b""

    @property
    def link_errors(self) -> int:
        return self.tracker.link_errors

    def new_shoe(self) -> None:
        """Tell the driver a fresh deck was loaded (resets duplicate detection and the index)."""
        self.tracker.new_shoe()

    def on_bytes(self, data: bytes) -> None:
        buf = self._buf + data
        while buf:
            consumed, message = self.decoder.decode(buf)
            if consumed == 0:
                break
            buf = buf[consumed:]
            if message is not None:
                self.handle(message)
        if len(buf) > MAX_BUFFER:  # a decoder that waits forever must not grow us without bound
            self.tracker.garbage(Garbage("receive buffer overflow", len(buf), buf[:64]))
            buf = b""
        self._buf = buf

    def on_disconnected(self, reason: str) -> None:
        if self._buf:
            self.tracker.garbage(Garbage("partial message lost in a disconnect", len(self._buf),
                                         self._buf))
            self._buf = b""
        self.decoder.reset()
        super().on_disconnected(reason)

    def handle(self, message: object) -> None:
        raise NotImplementedError


