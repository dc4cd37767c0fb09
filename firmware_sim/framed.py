"""Device side of the framed link, shared by the simulated shuffler and framed shoe.

What real firmware must do (docs/protocols.md, the MUSTs of sections 2-4), and so what this does:

* reply to every command with the same sequence number; on a *repeated* sequence number replay
  the stored reply instead of executing again (a lost ACK never dispenses a second hand);
* NAK a frame whose CRC is wrong with ``NAK(CRC)``, one whose length is wrong with
  ``NAK(LENGTH)``, both with the sequence number from its header, and a well-formed frame of a
  protocol version it does not speak with ``NAK(UNKNOWN)``; never answer an ``EVENT_ACK``;
* send every event with an event id and resend it every ``EVENT_RESEND_SECONDS`` until the host
  answers ``EVENT_ACK``;
* send a heartbeat with the boot id every second;
* answer ``RESYNC`` (a host that has just connected) by sending a heartbeat and every
  unacknowledged event in id order, and only then the ACK; a ``RESYNC`` is always run again,
  never replayed, and it clears the reply store;
* send the events a command causes (``FAULT_CLEARED`` after ``CLEAR_FAULT``) after its reply.

``conformance=Conformance.LEGACY`` plays an older, non-conforming firmware instead (the one the
conformance kit must fail): events before the reply, a NAK to every ``EVENT_ACK``,
``NAK(LENGTH)`` for a frame of another version, a replayed ``RESYNC``; the shuffler adds its own
divergences (:mod:`firmware_sim.shuffler`).

Link-level faults live here (bad CRC, truncated frame, stall then burst, repeated event, lost ACK,
disconnect, reboot); card-level faults live in the device subclasses.

``attach`` may be called with the byte server's write lock held, so it must not send: the
greeting (heartbeat plus unacknowledged events) goes out on the next ``tick``.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from typing import Protocol

import structlog

from drivers.errors import ProtocolError
from drivers.framed.codec import COMMANDS, decode_message, encode_message
from drivers.framed.event_messages import EventMessage
from drivers.framed.framing import ETX, STX, DropReason, Dropped, FrameDecoder, stuff, unstuff
from drivers.framed.messages import (
    Ack, DeviceState, EventAck, Heartbeat, IdentityReply, Message, MsgType, Nak, NakReason,
)
from firmware_sim.faults import FaultKind, FaultSpec, FaultSpecError

log = structlog.get_logger(__name__)

HEARTBEAT_SECONDS = 1.0
EXECUTED_KEPT = 1024
"""The newest commands :attr:`FramedSimDevice.executed` keeps for a test or a benchmark to read.
Bounded because a simulated device runs inside ``tablectl run``'s process at a bench table:
an unbounded list grew the service by about 43 bytes a round (8 bytes a command), 4.3 MB in
100,000 rounds. :attr:`FramedSimDevice.commands_executed` counts them all."""
EVENT_RESEND_SECONDS = 0.3
LINK_FAULTS = frozenset({
    FaultKind.BAD_CRC, FaultKind.TRUNCATE, FaultKind.STALL, FaultKind.REPEAT_EVENT,
    FaultKind.LOST_ACK, FaultKind.DISCONNECT, FaultKind.REBOOT,
})


def with_bad_crc(data: bytes) -> bytes:
    """The frame in ``data`` with its CRC's low byte flipped, stuffed again. Flipping the last
    wire byte before ETX instead breaks the frame's escape whenever that CRC byte was stuffed
    (the receiver then drops it as a bad escape, SEQ unknown): not the bad CRC that was asked
    for, and which SEQ it hits depends on the session's history."""
    body = unstuff(data[1:-1])
    if body is None:
        raise ValueError("not one well-formed frame")
    return bytes((STX,)) + stuff(body[:-1] + bytes((body[-1] ^ 0x5A,))) + bytes((ETX,))


class Conformance(str, Enum):
    """Which firmware a simulator plays: the document's (``strict``) or an older, divergent one
    (``legacy``) for testing that the conformance kit tells them apart."""

    STRICT = "strict"
    LEGACY = "legacy"


class Pluggable(Protocol):
    def unplug(self) -> None: ...

    def replug(self) -> None: ...


class FramedSimDevice:
    """A :class:`firmware_sim.serve.SimDevice` speaking the framed link. Subclasses implement
    :meth:`execute` (command -> reply), :meth:`on_tick` and :meth:`on_reboot`."""

    SUPPORTED_FAULTS: frozenset[FaultKind] = LINK_FAULTS
    heartbeat_seconds: float = HEARTBEAT_SECONDS
    """How often the device beats (3.6: every second); a test variant may change it."""
    resend_seconds: float = EVENT_RESEND_SECONDS
    """How often an unacknowledged event is resent (3.4: SHOULD 0.3 s)."""

    def __init__(self, seed: int | None = None, faults: Sequence[FaultSpec] = (), *,
                 identity: IdentityReply, clock: Callable[[], float] = time.monotonic,
                 conformance: Conformance = Conformance.STRICT) -> None:
        self.seed = seed
        self.conformance = Conformance(conformance)
        self.rng: random.Random | None = random.Random(seed) if seed is not None else None
        self.identity = identity
        self.clock = clock
        self.lock = threading.RLock()
        self._send: Callable[[bytes], None] | None = None
        self._greet = False
        self.decoder = FrameDecoder()
        self.boot_id = self._new_boot_id()
        self.booted_at = clock()
        self._next_beat = 0.0
        self._last: tuple[int, int, bytes] | None = None  # seq, type, reply bytes
        self._event_id = 0
        self._unacked: dict[int, list[object]] = {}  # id -> [bytes, last sent]
        self._corrupt_next = self._truncate_next = self._lose_next_reply = False
        self._repeat_next_event = False
        self._stall_until: float | None = None
        self._held: list[bytes] = []
        self._followups: list[Callable[[], None]] = []
        self.unplug_hook: Callable[[float], None] | None = None
        self.unplugs = 0
        """How often the cable came out (the ``disconnect`` fault): a person at the device
        tells a draw the cable came out under from one that went out."""
        self.executed: deque[MsgType] = deque(maxlen=EXECUTED_KEPT)
        """The newest commands executed, oldest first (replays excluded)."""
        self.commands_executed = 0
        self.replays = 0
        self.naks_sent = 0
        self.answers_resync = True
        """False plays an older firmware that does not know ``RESYNC`` (NAK UNKNOWN)."""
        for spec in faults:
            self.inject(spec)

    # randomness: reproducible with a seed, otherwise from the OS CSPRNG -----------------------
    def randbelow(self, n: int) -> int:
        return self.rng.randrange(n) if self.rng is not None else secrets.randbelow(n)

    def _new_boot_id(self) -> int:
        return self.randbelow(0xFFFFFFFF) + 1

    # SimDevice --------------------------------------------------------------------------------
    def attach(self, send: Callable[[bytes], None]) -> None:
        self._send = send
        self._greet = True
        self._last = None           # a new connection: a stale seq must not replay
        self.decoder.reset()

    def detach(self) -> None:
        self._send = None

    def receive(self, data: bytes) -> None:
        with self.lock:
            for item in self.decoder.feed(data):
                if isinstance(item, Dropped):
                    self._dropped(item)
                else:
                    self._frame(item.seq, item.type, item)

    def tick(self, now: float) -> None:
        with self.lock:
            if self._greet and self._send is not None:
                self._greet = False
                self._heartbeat(now)
                for entry in self._unacked.values():
                    self._out(entry[0])  # type: ignore[arg-type]
                    entry[1] = now
            if now >= self._next_beat:
                self._heartbeat(now)
            for entry in list(self._unacked.values()):
                if now - entry[1] >= self.resend_seconds:  # type: ignore[operator]
                    entry[1] = now
                    self._out(entry[0])  # type: ignore[arg-type]
            if self._stall_until is not None and now >= self._stall_until:
                self._stall_until = None
                burst, self._held = b"".join(self._held), []
                self._raw(burst)
            self.on_tick(now)

    # subclass hooks ---------------------------------------------------------------------------
    def execute(self, message: Message) -> Message:
        raise NotImplementedError

    def on_tick(self, now: float) -> None:
        """Timed behaviour (shuffle finishing, hand taken, autodraw)."""

    def on_reboot(self) -> None:
        """Forget volatile state after a reboot."""

    def state(self) -> DeviceState:
        return DeviceState.IDLE

    def fault_word(self) -> int:
        return 0

    # faults -----------------------------------------------------------------------------------
    def inject(self, spec: FaultSpec) -> None:
        """Apply a fault now or arm it for the next matching frame or operation."""
        if spec.kind not in self.SUPPORTED_FAULTS:
            known = ", ".join(sorted(k.value for k in self.SUPPORTED_FAULTS))
            raise FaultSpecError(f"{type(self).__name__} cannot produce fault "
                                 f"{spec.kind.value!r}; it supports: {known}")
        with self.lock:
            self.apply_fault(spec)

    def apply_fault(self, spec: FaultSpec) -> None:
        kind = spec.kind
        if kind is FaultKind.BAD_CRC:
            self._corrupt_next = True
        elif kind is FaultKind.TRUNCATE:
            self._truncate_next = True
        elif kind is FaultKind.STALL:
            self._stall_until = self.clock() + (spec.arg if spec.arg is not None else 0.5)
        elif kind is FaultKind.REPEAT_EVENT:
            self._repeat_next_event = True
        elif kind is FaultKind.LOST_ACK:
            self._lose_next_reply = True
        elif kind is FaultKind.DISCONNECT:
            if self.unplug_hook is None:
                raise FaultSpecError("fault 'disconnect' needs the device served by a byte "
                                     "server (firmware_sim.framed.bind_server)")
            self.unplugs += 1
            self.unplug_hook(spec.arg if spec.arg is not None else 0.5)
        elif kind is FaultKind.REBOOT:
            self.reboot()

    def reboot(self) -> None:
        """Power-cycle: new boot id, volatile state and unacknowledged events lost."""
        with self.lock:
            old = self.boot_id
            self.boot_id = self._new_boot_id()
            while self.boot_id == old:
                self.boot_id = self._new_boot_id()
            self.booted_at = self.clock()
            self._last = None
            self._event_id = 0
            self._unacked.clear()
            self.decoder.reset()
            self.on_reboot()
            log.info("sim_reboot", old_boot_id=old, boot_id=self.boot_id)
            self._heartbeat(self.clock())

    # outgoing ---------------------------------------------------------------------------------
    def raise_event(self, make: Callable[[int], EventMessage]) -> EventMessage:
        """Send the event built by ``make(event_id)``; resend until acknowledged."""
        with self.lock:
            self._event_id = self._event_id % 0xFFFF + 1
            message = make(self._event_id)
            data = encode_message(0, message)
            self._unacked[self._event_id] = [data, self.clock()]
            if self._greet:
                return message  # the greeting resends every unacknowledged event, in order
            self._out(data)
            if self._repeat_next_event:
                self._repeat_next_event = False
                self._out(data)
            return message

    def _heartbeat(self, now: float) -> None:
        self._next_beat = now + self.heartbeat_seconds
        uptime = int((now - self.booted_at) * 1000) & 0xFFFFFFFF
        beat = Heartbeat(self.boot_id, uptime, self.state(), self.fault_word())
        self._out(encode_message(0, beat))

    def _out(self, data: bytes) -> None:
        if self._corrupt_next:
            self._corrupt_next = False
            data = with_bad_crc(data)
        if self._truncate_next:
            self._truncate_next = False
            data = data[: max(1, len(data) // 2)]
        if self._stall_until is not None:
            self._held.append(data)
            return
        self._raw(data)

    def _raw(self, data: bytes) -> None:
        send = self._send
        if send is not None and data:
            send(data)

    def _reply(self, seq: int, type_: int, message: Message) -> None:
        data = encode_message(seq, message)
        self._last = (seq, type_, data)
        if self._lose_next_reply:
            self._lose_next_reply = False
            log.info("sim_lost_reply", seq=seq)
            return
        self._out(data)

    # incoming ---------------------------------------------------------------------------------
    @property
    def legacy(self) -> bool:
        return self.conformance is Conformance.LEGACY

    def _dropped(self, item: Dropped) -> None:
        """NAK what the document says to NAK: a bad CRC (whatever the type byte claims, since it
        cannot be trusted), a wrong length, a good frame of another version (section 2)."""
        log.debug("sim_bad_frame", reason=item.reason.value, size=item.size)
        reason = _NAK_FOR_DROP.get(item.reason)
        if item.seq is None or reason is None:
            return
        if reason is NakReason.UNKNOWN and self.legacy:
            reason = NakReason.LENGTH
        self.naks_sent += 1
        self._out(encode_message(item.seq, Nak(reason)))

    def _frame(self, seq: int, type_: int, frame: object) -> None:
        if type_ == MsgType.EVENT_ACK:
            self._event_ack(seq, frame)
            return
        resync = type_ == MsgType.RESYNC and self.answers_resync
        if resync and not self.legacy:  # always run again: never a stored reply (section 3)
            self._resync(seq, type_)
            return
        if self._last is not None and self._last[0] == seq and self._last[1] == type_:
            self.replays += 1
            self._out(self._last[2])
            return
        if type_ not in COMMANDS or (type_ == MsgType.RESYNC and not self.answers_resync):
            self._reply(seq, type_, Nak(NakReason.UNKNOWN))
            return
        if resync:
            self._resync(seq, type_)
            return
        try:
            message = decode_message(frame)  # type: ignore[arg-type]
        except ProtocolError:
            self._reply(seq, type_, Nak(NakReason.LENGTH))
            return
        self.executed.append(MsgType(type_))
        self.commands_executed += 1
        reply = self.execute(message)
        followups, self._followups = self._followups, []
        if self.legacy:  # the old firmware sent a command's events ahead of its reply
            for followup in followups:
                followup()
            followups = []
        self._reply(seq, type_, reply)
        for followup in followups:
            followup()

    def after_reply(self, action: Callable[[], None]) -> None:
        """Run ``action`` (raise the events a command causes) once the command's reply is sent:
        the host sees ACK, then FAULT_CLEARED (section 3)."""
        self._followups.append(action)

    def _event_ack(self, seq: int, frame: object) -> None:
        """Never answered (section 3): the host would take a reply to an EVENT_ACK for the reply
        to the command it has in flight."""
        try:
            ack = decode_message(frame)  # type: ignore[arg-type]
        except ProtocolError:
            return
        assert isinstance(ack, EventAck)
        self._unacked.pop(ack.event_id, None)
        if self.legacy:
            self.naks_sent += 1
            self._out(encode_message(seq, Nak(NakReason.UNKNOWN)))

    def _resync(self, seq: int, type_: int) -> None:
        """The backlog first, in id order, then the answer: the host reports the device online
        only after the ACK, with everything held before it already in its queue. A RESYNC is
        the host's "I connected": it clears the reply store, so no earlier command's reply can
        be replayed to the new host."""
        now = self.clock()
        self._greet = False
        self._heartbeat(now)
        for entry in self._unacked.values():
            self._out(entry[0])  # type: ignore[arg-type]
            entry[1] = now
        self._reply(seq, type_, Ack())
        if not self.legacy:
            self._last = None

    @property
    def unacked_events(self) -> int:
        with self.lock:
            return len(self._unacked)

    @property
    def quiet(self) -> bool:
        """Nothing of the device's is on its way to the host: plugged in, greeted, every event
        acknowledged (with a journal's deferred acknowledgement: recorded), no stalled bytes, no
        event a command still owes, and no timed step running (:meth:`busy`). A bench waits
        for this before a person acts, so that the person's act lands after everything the
        device did (``tablectl bench``: one seed, one run)."""
        with self.lock:
            return (self._send is not None and not self._greet and not self._unacked
                    and self._stall_until is None and not self._held and not self._followups
                    and not self.busy())

    def busy(self) -> bool:
        """A timed step of the device is running (a shuffle, a hand being formed); the
        subclass says. Called with :attr:`lock` held."""
        return False


_NAK_FOR_DROP = {DropReason.CRC: NakReason.CRC, DropReason.LENGTH: NakReason.LENGTH,
                 DropReason.VERSION: NakReason.UNKNOWN}


def bind_server(device: FramedSimDevice, server: Pluggable) -> None:
    """Let ``device`` unplug and replug ``server`` for the ``disconnect`` fault.

    The cable comes out at once, on the thread that injects the fault (so nothing the device
    sends after that moment reaches the host: a fault planned at a device event lands exactly
    there, :meth:`firmware_sim.shuffler.ShufflerSim.plan`), and goes back in after ``seconds``
    on a thread of its own."""

    def unplug_for(seconds: float) -> None:
        server.unplug()
        timer = threading.Timer(seconds, server.replug)  # a simulated cable stays out this long
        timer.name, timer.daemon = "sim-replug", True
        timer.start()

    device.unplug_hook = unplug_for


def parse_faults(texts: Iterable[str]) -> list[FaultSpec]:
    from firmware_sim.faults import parse_fault

    return [parse_fault(t) for t in texts]
