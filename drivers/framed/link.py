"""Host side of the framed link: request/response matching, retries, events, supervision.

* One command at a time. A command gets a fresh sequence number; a retry (after a timeout or a
  NAK CRC/LENGTH, i.e. the device never understood it) resends the *same* bytes, so the device
  replays its answer instead of executing twice: a lost ACK can never dispense a second hand.
* Device events carry an event id. The host acts on an id once per boot, so a resent event is
  not a second card, and every event it hands on carries its :class:`EventOrigin` (boot id,
  event id). By default the host acknowledges every copy (``EVENT_ACK``) on receipt. With
  ``deferred_ack=True`` it acknowledges only when told the event is durable
  (:meth:`FramedLink.acknowledge`, called by the journal after the record is on disk): until
  then the device keeps resending it, so a host killed in between gets the event again after
  its restart, and a hand is never lost. Copies that arrive before that are dropped unanswered;
  copies of an acknowledged event are acknowledged again (the first ACK was lost).
* On every connection the host first sends ``RESYNC``: the device answers with a heartbeat and
  every event it still holds, in id order, and only then ACKs. The device is reported online
  (:class:`DeviceOnline`) after that answer, so whatever it held before this host connected (a
  hand dispensed while the controller was down) is in the queue ahead of the online report and
  of anything new; commands wait (bounded) for it. A device that NAKs ``RESYNC`` or never
  answers it is taken as it comes after the retries. The online report carries no identity: the
  device's identity is asked separately and recorded only when it changes
  (:mod:`drivers.framed.identify`); one learned on an earlier connection may be another
  machine's.
* The device sends a heartbeat every second with its boot id. Three silent seconds make the
  device offline; a changed boot id is a reboot (pending commands fail: the device forgot them).

Everything here runs on the runner's reader thread except :meth:`request`, which any thread may
call; it blocks on a :class:`threading.Event` the reader sets.
"""

from __future__ import annotations

import queue
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from drivers.errors import (
    CommandRejected, DeviceDisconnected, DeviceFault, DriverError, DriverTimeoutError,
    ProtocolError,
)
from drivers.events import (
    DeviceEvent, DeviceOnline, DeviceRebooted, EventOrigin, LinkError,
)
from drivers.framed.codec import REPLIES, decode_message, encode_message
from drivers.framed.event_messages import EventMessage
from drivers.framed.framing import Dropped, Frame, FrameDecoder
from drivers.framed.messages import EventAck, Heartbeat, Message, Nak, NakReason, Resync
from drivers.runner import DeviceRunner
from drivers.transport import Transport
from drivers.window import RecentWindow

SILENCE_SECONDS = 3.0
SEEN_EVENTS = 1024
_RESEND_AT_ONCE = (NakReason.CRC, NakReason.LENGTH)


@dataclass(slots=True)
class _Pending:
    seq: int
    done: threading.Event = field(default_factory=threading.Event)
    reply: Message | None = None
    error: DriverError | None = None


@dataclass(slots=True)
class LinkStats:
    """Counters an integrator asks for first when a link misbehaves."""

    frames: int = 0
    bad_frames: int = 0
    bad_bytes: int = 0
    retries: int = 0
    duplicate_events: int = 0
    stale_replies: int = 0


class FramedLink(DeviceRunner):
    """A :class:`DeviceRunner` that speaks the framed link. Subclasses implement :meth:`on_event`."""

    def __init__(self, name: str, transport: Transport, events: queue.Queue[DeviceEvent], *,
                 attempt_timeout: float = 0.25, retries: int = 3,
                 silence: float = SILENCE_SECONDS, backoff: tuple[float, float] = (0.1, 2.0),
                 deferred_ack: bool = False,
                 clock: Callable[[], float] = time.monotonic,
                 jitter: Callable[[], float] | None = None) -> None:
        super().__init__(name, transport, events, backoff=backoff, clock=clock, jitter=jitter)
        self.deferred_ack = deferred_ack
        self.attempt_timeout = attempt_timeout
        self.retries = retries
        self.silence = silence
        self.decoder = FrameDecoder()
        self.stats = LinkStats()
        self.boot_id: int | None = None
        self.last_heartbeat: Heartbeat | None = None
        self._last_heard: float | None = None
        self._request_lock = threading.Lock()
        self._pending: _Pending | None = None
        self._seq = secrets.randbelow(255)  # a restarted host must not hit the device's replay
        self._seen: RecentWindow[int] = RecentWindow(SEEN_EVENTS)
        self._acknowledged: RecentWindow[int] = RecentWindow(SEEN_EVENTS)
        """Ids the host has acknowledged this boot (with ``deferred_ack``): a copy of one of
        them means the ACK was lost, and is acknowledged again."""
        self._ack_lock = threading.Lock()
        self._seq_lock = threading.Lock()
        self._resync_seq: int | None = None
        """The sequence number of this connection's RESYNC while it is unanswered."""
        self._resync_bytes = b""
        self._resync_sent_at = 0.0
        self._resync_attempts = 0
        self.resynced = threading.Event()
        """Set once the device has answered ``RESYNC`` on this connection (or was given up on)."""
        self._boot_known = False
        """A heartbeat on this connection has named the boot: until then an event cannot be
        told apart from an earlier boot's, so it is left unanswered (the device resends it)."""

    # commands (any thread) --------------------------------------------------------------------
    def _next_seq(self) -> int:
        with self._seq_lock:  # the reader thread takes one for RESYNC while a command may run
            self._seq = self._seq % 255 + 1  # 1..255; 0 marks unsolicited device frames
            return self._seq

    def request(self, message: Message) -> Message:
        """Send a command and return its reply (ACK or a reply message).

        Raises :class:`CommandRejected` (with the :class:`NakReason`) on NAK,
        :class:`DriverTimeoutError` after the retries, :class:`DeviceDisconnected` when the link
        is down, :class:`DeviceFault` when the device rebooted under the command.
        """
        if self.transport.is_open and not self.resynced.is_set():
            self.resynced.wait(self.attempt_timeout * (self.retries + 1))
        with self._request_lock:
            pending = _Pending(self._next_seq())
            data = encode_message(pending.seq, message)
            self._pending = pending
            try:
                return self._exchange(message, pending, data, self.link_epoch)
            finally:
                self._pending = None

    def _exchange(self, message: Message, pending: _Pending, data: bytes,
                  epoch: int) -> Message:
        """Send and resend ``data`` on the link of ``epoch`` only: a retry after the link
        dropped would reach a replugged device as a new command (it forgot the sequence
        number with the link) and be executed, a hand dispensed that the caller was told
        failed."""
        name = message.TYPE.name
        attempts = self.retries + 1
        for attempt in range(attempts):
            if pending.error is not None:  # the link dropped while the last try waited
                raise pending.error
            if attempt:
                self.stats.retries += 1
                self.log.info("retry", command=name, seq=pending.seq, attempt=attempt)
            pending.done.clear()
            pending.reply = None
            self.write(data, epoch=epoch)
            if not pending.done.wait(self.attempt_timeout):
                continue
            if pending.error is not None:
                raise pending.error
            reply = pending.reply
            if isinstance(reply, Nak):
                if reply.reason in _RESEND_AT_ONCE:
                    continue
                raise CommandRejected(f"{self.name} rejected {name}: {reply.reason.name}",
                                      reply.reason)
            assert reply is not None
            return reply
        raise DriverTimeoutError(f"{self.name}: no reply to {name} after {attempts} attempts "
                                 f"({attempts * self.attempt_timeout:g} s)")

    def _fail_pending(self, error: DriverError) -> None:
        """Fail the command in flight, unless its answer is already in: a reply read before a
        reboot's heartbeat (or a drop) answered the command, which the device executed, and the
        requesting thread only has not picked it up yet. Failing it then told the caller that a
        hand it had dispensed was not, and what followed depended on which thread ran first."""
        pending = self._pending
        if pending is not None and not (pending.done.is_set() and pending.reply is not None):
            pending.error = error
            pending.done.set()

    # reader-thread hooks ----------------------------------------------------------------------
    def on_connected(self) -> None:
        self.decoder.reset()
        self._boot_known = False
        self._last_heard = self.clock()
        self.resynced.clear()
        self._resync_seq = self._next_seq()
        self._resync_bytes = encode_message(self._resync_seq, Resync())
        self._resync_attempts = 0
        self._send_resync()

    def _send_resync(self) -> None:
        self._resync_attempts += 1
        self._resync_sent_at = self.clock()
        try:
            self.write(self._resync_bytes)
        except DriverError as error:  # the link is going down: on_disconnected follows
            self.log.info("resync_not_sent", error=str(error))

    def _resynced(self, reply: Message) -> None:
        self._resync_seq = None
        if isinstance(reply, Nak):
            self.log.info("resync_refused", reason=reply.reason.name)
        self.resynced.set()
        if not self.online:
            self.mark_online(DeviceOnline(self.name, self.clock(), boot_id=self.boot_id))

    def on_disconnected(self, reason: str) -> None:
        self.resynced.clear()
        self._resync_seq = None
        self._fail_pending(DeviceDisconnected(f"{self.name}: {reason}"))
        self.mark_offline(reason)

    def idle_timeout(self) -> float | None:
        """While RESYNC is unanswered, look again after one attempt's timeout (to resend it)."""
        return self.attempt_timeout if self._resync_seq is not None else None

    def on_idle(self, now: float) -> None:
        if self._resync_seq is not None and now - self._resync_sent_at > self.attempt_timeout:
            if self._resync_attempts <= self.retries:
                self.stats.retries += 1
                self._send_resync()
            else:  # an older device: no backlog guarantee, but not locked out either
                self.log.info("resync_unanswered", attempts=self._resync_attempts)
                self._resync_seq = None
                self.resynced.set()
        heard = self._last_heard
        if self.online and heard is not None and now - heard > self.silence:
            self.mark_offline(f"no frame for {self.silence:g} s")

    def on_bytes(self, data: bytes) -> None:
        for item in self.decoder.feed(data):
            if isinstance(item, Dropped):
                self._bad(item.reason.value, item.size)
            else:
                self._frame(item)

    def _bad(self, reason: str, size: int) -> None:
        self.stats.bad_frames += 1
        self.stats.bad_bytes += size
        self.log.warning("bad_frame", reason=reason, dropped=size)
        self.emit(LinkError(self.name, self.clock(), reason=reason, dropped=size))

    def _frame(self, frame: Frame) -> None:
        self.stats.frames += 1
        try:
            message = decode_message(frame)
        except ProtocolError as error:
            self._bad(f"message: {error}", len(frame.payload))
            return
        now = self.clock()
        self._last_heard = now
        if isinstance(message, Heartbeat):
            self._heartbeat(message)
        if not self.online and self.resynced.is_set():
            self.mark_online(DeviceOnline(self.name, now, boot_id=self.boot_id))
        if frame.type in REPLIES:
            if self._resync_seq is not None and self._resync_seq == frame.seq:
                self._resynced(message)
                return
            pending = self._pending
            if pending is not None and pending.seq == frame.seq:
                pending.reply = message
                pending.done.set()
            else:
                self.stats.stale_replies += 1
                self.log.debug("stale_reply", seq=frame.seq, type=message.TYPE.name)
        elif isinstance(message, EventMessage):
            self._event(message)

    def _heartbeat(self, beat: Heartbeat) -> None:
        old = self.boot_id
        self.last_heartbeat = beat
        if old is not None and beat.boot_id != old:
            self.log.warning("device_rebooted", old_boot_id=old, new_boot_id=beat.boot_id)
            with self._ack_lock:
                self._seen.clear()
                self._acknowledged.clear()
            self.boot_id = beat.boot_id
            self._fail_pending(DeviceFault(f"{self.name} rebooted during the command"))
            self.emit(DeviceRebooted(self.name, self.clock(), old_boot_id=old,
                                     new_boot_id=beat.boot_id))
            self.on_reboot()
        self.boot_id = beat.boot_id
        self._boot_known = True
        self.on_heartbeat(beat)

    def _event(self, message: EventMessage) -> None:
        event_id = message.event_id
        if not self._boot_known:
            self.log.debug("event_before_heartbeat", event_id=event_id)
            return
        with self._ack_lock:
            repeated = event_id in self._seen
            if not repeated:
                self._seen.add(event_id)
            answer = not self.deferred_ack or event_id in self._acknowledged
        if answer:
            self._send_ack(event_id)
        if repeated:
            self.stats.duplicate_events += 1
            self.log.debug("duplicate_event", event_id=event_id, answered=answer)
            return
        self.on_event(message)

    def _send_ack(self, event_id: int) -> None:
        try:
            self.write(encode_message(0, EventAck(event_id)))
        except DriverError as error:  # the device resends; the copy is answered then
            self.log.info("event_ack_failed", event_id=event_id, error=str(error))

    def origin(self, message: EventMessage) -> EventOrigin:
        """The origin an event decoded from ``message`` carries (this boot, its id)."""
        return EventOrigin(self.boot_id, message.event_id)

    # deferred acknowledgement (the journal's thread) -------------------------------------------
    def acknowledge(self, origin: EventOrigin) -> bool:
        """The event is durable: acknowledge it now. ``False`` (nothing sent) when it is from
        an earlier boot, whose events the device has forgotten."""
        with self._ack_lock:
            if origin.boot_id != self.boot_id:
                return False
            self._acknowledged.add(origin.event_id)
        self._send_ack(origin.event_id)
        return True

    def redeliver(self, origin: EventOrigin) -> None:
        """The event could not be made durable: forget it, so that the device's next resend is
        handed on again instead of being dropped as a copy."""
        with self._ack_lock:
            if origin.boot_id == self.boot_id:
                self._seen.discard(origin.event_id)

    # for subclasses ---------------------------------------------------------------------------
    identity = None  # set by a device subclass once identify() has answered

    def on_event(self, message: EventMessage) -> None:  # noqa: B027 - optional hook
        """A new (not repeated) device event."""

    def on_heartbeat(self, beat: Heartbeat) -> None:  # noqa: B027 - optional hook
        """Every heartbeat, after boot-id supervision."""

    def on_reboot(self) -> None:  # noqa: B027 - optional hook
        """The device came back with a new boot id."""

