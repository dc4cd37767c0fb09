"""Raw frames to and from a device under test.

Unlike :class:`drivers.framed.link.FramedLink` this client has no reader thread, no retries and
no opinions: a scenario sends exactly the bytes it wants (a corrupted CRC, a repeated SEQ, a
frame of another version) and reads back everything the device sends, with the time it came,
so it can check the order of frames as well as their content. Events are acknowledged as they
arrive unless a scenario turns that off to watch the device resend them.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from drivers.backoff import ExponentialBackoff
from drivers.conformance.fields import Breach, check_frame
from drivers.errors import DeviceDisconnected, DriverError, ProtocolError
from drivers.framed.codec import REPLIES, decode_message, encode_message
from drivers.framed.event_messages import EventMessage
from drivers.framed.crc import crc16
from drivers.framed.framing import HEADER, Dropped, Frame, scan, stuff
from drivers.framed.messages import EventAck, Heartbeat, Message, Nak
from drivers.transport import Transport

POLL_SECONDS = 0.02
REOPEN_MAX_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Received:
    """One thing the device sent: a frame (with its message when it decodes) or a drop."""

    at: float
    frame: Frame | None = None
    message: Message | None = None
    dropped: Dropped | None = None
    error: str = ""
    raw: bytes = b""
    """The bytes as they came off the line (for the hex a failure shows)."""
    first_copy: bool = False
    """An event whose id this boot had not sent before (a resend or repeat is not)."""
    reused: bool = False
    """An event whose id this boot had already sent with other content (3.4 forbids it:
    the host would drop it as a copy)."""
    breach: Breach | None = None
    """The first field of the frame out of the document's range (:mod:`.fields`)."""

    @property
    def is_reply(self) -> bool:
        return self.frame is not None and self.frame.type in REPLIES

    @property
    def hex(self) -> str:
        return hex_bytes(self.raw)

    def describe(self) -> str:
        """What arrived, in the document's words, with its bytes in hex."""
        if self.dropped is not None:
            why = _DROP_WORDS.get(self.dropped.reason.value, self.dropped.reason.value)
            seq = f", SEQ {self.dropped.seq}" if self.dropped.seq is not None else ""
            return f"a frame dropped for {why}{seq} [{self.hex}]"
        if self.message is None or self.frame is None:
            return f"an undecodable frame ({self.error}) [{self.hex}]"
        return f"{message_name(self.message)} with SEQ {self.frame.seq} [{self.hex}]"


_DROP_WORDS = {"crc": "a bad CRC (2.1)", "length": "a LEN that disagrees with its bytes (2.1)",
               "version": "an unknown version (2.1)", "bad_escape": "a bad escape (2.2)",
               "short": "being shorter than 7 bytes (2.1)", "truncated": "being truncated",
               "too_long": "having no ETX", "garbage": "bytes outside a frame"}


def hex_bytes(data: bytes) -> str:
    return data.hex(" ").upper()


def message_name(message: Message) -> str:
    """``NAK(CRC)``, ``ACK``, ``HAND_READY``: a message as the document names it."""
    if isinstance(message, Nak):
        return f"NAK({message.reason.name})"
    return message.TYPE.name


def frame_bytes(seq: int, type_: int, payload: bytes = b"", *, version: int = 1,
                length: int | None = None, crc_flip: int = 0) -> bytes:
    """A frame as a device under test must cope with: any version, a ``LEN`` that disagrees
    with the payload, a CRC damaged by ``crc_flip`` (XORed into its low byte)."""
    body = HEADER.pack(version, seq, type_, len(payload) if length is None else length) + payload
    body += (crc16(body) ^ crc_flip).to_bytes(2, "big")
    return b"\x02" + stuff(body) + b"\x03"


class Wire:
    """A synchronous framed-link client over an open-able :class:`Transport`."""

    def __init__(self, transport: Transport, *, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self.transport = transport
        self.clock = clock
        self._buf = bytearray()
        self._seen_ids: dict[int, tuple[int, bytes]] = {}
        """Event ids this boot has sent, with their type and payload (so a resend is told
        from a new event, and an id used again for another event is caught)."""
        self.received: list[Received] = []
        self.auto_ack = True
        self.boot_id: int | None = None
        self.reconnects = 0
        self._reopen = ExponentialBackoff(POLL_SECONDS, REOPEN_MAX_SECONDS).retries()
        """Waits between reopens of a port that went away (``drivers.backoff``)."""
        self._cursor = 0
        """Index of the first received item no :meth:`wait` or :meth:`listen` has looked at."""
        self._seq = secrets.randbelow(255)

    def open(self) -> None:
        self.transport.open()
        self.transport.limit_read_timeout(POLL_SECONDS)

    def close(self) -> None:
        self.transport.close()

    def next_seq(self) -> int:
        self._seq = self._seq % 255 + 1
        return self._seq

    # sending ------------------------------------------------------------------------------
    def raw(self, data: bytes) -> None:
        self.transport.write(data)

    def send(self, message: Message, seq: int | None = None) -> bytes:
        """Send ``message`` (with a fresh SEQ unless given); returns the bytes sent."""
        data = encode_message(self.next_seq() if seq is None else seq, message)
        self.raw(data)
        return data

    def ack(self, event_id: int) -> None:
        self.raw(encode_message(0, EventAck(event_id)))

    # receiving ----------------------------------------------------------------------------
    def pump(self) -> list[Received]:
        """Read what has arrived (waiting at most one poll), decode it and keep it. A port that
        goes away (a device power-cycled on USB) is reopened on a later call; ``reconnects``
        counts it, and the host must then send RESYNC (protocols.md 3.3)."""
        if not self.transport.is_open:
            try:
                self.transport.open()
                self.transport.limit_read_timeout(POLL_SECONDS)
            except DriverError:
                # not back yet: wait, longer each time (the caller's deadline bounds the loop)
                time.sleep(self._reopen.failed())
                return []
            self._reopen.reset()
            self._buf.clear()
            self.reconnects += 1
        try:
            data = self.transport.read()
        except DeviceDisconnected:
            self.transport.close()
            return []
        out: list[Received] = []
        now = self.clock()
        self._buf += data or b""
        while self._buf:
            consumed, item = scan(self._buf)
            if consumed == 0:
                break
            raw = bytes(self._buf[:consumed])
            del self._buf[:consumed]
            if item is not None:
                out.append(self._take(now, item, raw))
        self.received.extend(out)
        return out

    def _take(self, now: float, item: Frame | Dropped, raw: bytes) -> Received:
        breach = check_frame(raw)
        if isinstance(item, Dropped):
            return Received(now, dropped=item, raw=raw, breach=breach)
        try:
            message = decode_message(item)
        except ProtocolError as error:
            return Received(now, frame=item, error=str(error), raw=raw, breach=breach)
        first = reused = False
        if isinstance(message, Heartbeat):
            if self.boot_id is not None and message.boot_id != self.boot_id:
                self._seen_ids.clear()  # a new boot numbers its events from 1 again (3.4)
            self.boot_id = message.boot_id
        elif isinstance(message, EventMessage):
            content = (item.type, item.payload)
            known = self._seen_ids.setdefault(message.event_id, content)
            first = known is content
            reused = known != content
            if self.auto_ack:
                self.ack(message.event_id)
        return Received(now, frame=item, message=message, raw=raw, first_copy=first,
                        reused=reused, breach=breach)

    def mark(self) -> int:
        """Where the next item will be stored: ``received[mark:]`` is what came after."""
        self.pump()
        return len(self.received)

    def skip_seen(self) -> None:
        """Let later waits look only at what arrives from now on."""
        self._cursor = len(self.received)

    def _next(self, deadline: float) -> Received | None:
        """The next item no wait has looked at yet, reading until ``deadline`` for one."""
        while self._cursor >= len(self.received):
            if self.clock() >= deadline:
                return None
            self.pump()
        item = self.received[self._cursor]
        self._cursor += 1
        return item

    def wait(self, match: Callable[[Received], bool], timeout: float) -> Received | None:
        """The next item ``match`` accepts (items before it are passed over, in arrival order),
        or ``None`` at the deadline."""
        deadline = self.clock() + timeout
        while (item := self._next(deadline)) is not None:
            if match(item):
                return item
        return None

    def listen(self, seconds: float) -> list[Received]:
        """Every item not yet looked at, plus everything received during ``seconds``."""
        start = self._cursor
        deadline = self.clock() + seconds
        while self.clock() < deadline:
            self.pump()
        self._cursor = len(self.received)
        return self.received[start:]

    def reply_to(self, seq: int, timeout: float) -> Received | None:
        """The reply (ACK, NAK or reply message) carrying ``seq``."""
        return self.wait(lambda r: r.is_reply and r.frame is not None and r.frame.seq == seq,
                         timeout)
