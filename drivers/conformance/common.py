"""Scenarios every framed device must pass: the link of docs/protocols.md sections 2-4."""

from __future__ import annotations

from collections.abc import Callable

from drivers.conformance.session import (
    Action, Nonconformance, Scenario, Session, Unanswered,
)
from drivers.conformance.wire import Received, frame_bytes
from drivers.framed.event_ids import is_newer
from drivers.framed.event_messages import EventMessage
from drivers.framed.messages import (
    Ack, ClearFault, DeviceState, EventAck, GetMeters, Heartbeat, Identify, IdentityReply, Message,
    MetersReply, MsgType, Nak, NakReason, Resync,
)

HEARTBEAT_LISTEN = 2.3
UNKNOWN_TYPE = 0x2F  # no message of docs/protocols.md section 4 has it
SILENT_SECONDS = 0.6
REBOOT_SECONDS = 60.0


def resync(s: Session) -> str:
    """The host's first frame: HEARTBEAT, the backlog, then ACK with the RESYNC's SEQ."""
    seq = s.wire.next_seq()
    start = len(s.wire.received)
    s.wire.send(Resync(), seq)
    reply = s.wire.reply_to(seq, 1.0)
    if reply is None:
        raise Unanswered("3.3", "no ACK to RESYNC within 1 s")
    if not isinstance(reply.message, Ack):
        raise Nonconformance("3.3", f"RESYNC answered {reply.describe()}, expected ACK")
    before = s.wire.received[start:s.wire.received.index(reply)]
    if not any(isinstance(r.message, Heartbeat) for r in before):
        raise Nonconformance("3.3", "no HEARTBEAT before the ACK to RESYNC")
    return f"boot id {s.wire.boot_id:08X}" if s.wire.boot_id is not None else "answered"


def identify(s: Session) -> str:
    ident = s.reply(Identify(), IdentityReply, "4")
    if ident.protocol_version != 1:
        raise Nonconformance("2.1", f"IDENTITY gives protocol version {ident.protocol_version}, "
                                    "this document is version 1")
    return f"{ident.vendor} {ident.model} serial {ident.serial} firmware {ident.firmware_version}"


def heartbeat(s: Session) -> str:
    beats = [r for r in s.wire.listen(HEARTBEAT_LISTEN) if isinstance(r.message, Heartbeat)]
    if len(beats) < 2:
        raise Nonconformance("3.6", f"{len(beats)} HEARTBEAT in {HEARTBEAT_LISTEN:g} s, "
                                    "expected one a second")
    boots = {r.message.boot_id for r in beats if isinstance(r.message, Heartbeat)}
    if len(boots) != 1 or 0 in boots:
        raise Nonconformance("3.6", f"boot ids {sorted(boots)} in one boot (never 0, constant)")
    gaps = [b.at - a.at for a, b in zip(beats, beats[1:])]
    return f"{len(beats)} in {HEARTBEAT_LISTEN:g} s, largest gap {max(gaps):.2f} s"


def status(s: Session) -> str:
    reply = s.status()
    if s.wire.boot_id is not None and reply.boot_id != s.wire.boot_id:
        raise Nonconformance("4", f"STATUS boot id {reply.boot_id:08X} differs from the "
                                  f"heartbeat's {s.wire.boot_id:08X}")
    return f"state {reply.state.name.lower()}, fault word 0x{reply.faults:04X}"


def meters(s: Session) -> str:
    m = s.reply(GetMeters(), MetersReply, "4")
    return f"{m.shuffles} shuffles, {m.hands} hands, {m.cards} cards, {m.faults} faults"


def _raw_nak(s: Session, data: bytes, seq: int, reason: NakReason, clause: str,
             what: str) -> str:
    s.wire.raw(data)
    reply = s.wire.reply_to(seq, 1.0)
    if reply is None:
        raise Unanswered(clause, f"no answer to {what} within 1 s, expected "
                                 f"NAK({reason.name}) with its SEQ")
    if not isinstance(reply.message, Nak) or reply.message.reason is not reason:
        raise Nonconformance(clause, f"{what} answered {reply.describe()}, expected "
                                     f"NAK({reason.name})")
    return f"NAK({reason.name}) with SEQ {seq}"


def unknown_command(s: Session) -> str:
    seq = s.wire.next_seq()
    return _raw_nak(s, frame_bytes(seq, UNKNOWN_TYPE), seq, NakReason.UNKNOWN, "4",
                    f"a command of unknown type 0x{UNKNOWN_TYPE:02X}")


def malformed_payload(s: Session) -> str:
    seq = s.wire.next_seq()
    return _raw_nak(s, frame_bytes(seq, MsgType.IDENTIFY, b"\x00"), seq, NakReason.LENGTH, "4",
                    "IDENTIFY with a one-byte payload")


def bad_crc(s: Session) -> str:
    seq = s.wire.next_seq()
    return _raw_nak(s, frame_bytes(seq, MsgType.IDENTIFY, crc_flip=0x01), seq, NakReason.CRC,
                    "2.3", "IDENTIFY with a bad CRC")


def bad_length(s: Session) -> str:
    seq = s.wire.next_seq()
    return _raw_nak(s, frame_bytes(seq, MsgType.IDENTIFY, length=4), seq, NakReason.LENGTH,
                    "2.3", "IDENTIFY whose LEN says 4 with no payload")


def other_version(s: Session) -> str:
    seq = s.wire.next_seq()
    return _raw_nak(s, frame_bytes(seq, MsgType.IDENTIFY, version=2), seq, NakReason.UNKNOWN,
                    "2.3", "a version-2 IDENTIFY with a good CRC")


def _answers_to_seq0(items: list[Received]) -> list[Received]:
    return [r for r in items if r.is_reply and r.frame is not None and r.frame.seq == 0]


def event_ack_unanswered(s: Session) -> str:
    """A valid EVENT_ACK gets nothing; a corrupted one gets NAK(CRC) with SEQ 0."""
    s.wire.ack(0xFFFE)
    answers = _answers_to_seq0(s.wire.listen(SILENT_SECONDS))
    if answers:
        raise Nonconformance("2.3", f"the device answered an EVENT_ACK with "
                                    f"{answers[0].describe()}; it MUST NOT answer EVENT_ACK")
    s.wire.raw(frame_bytes(0, MsgType.EVENT_ACK, EventAck(0xFFFE).encode(), crc_flip=0x01))
    answers = _answers_to_seq0(s.wire.listen(SILENT_SECONDS))
    if not (answers and isinstance(answers[0].message, Nak)
            and answers[0].message.reason is NakReason.CRC):
        got = answers[0].describe() if answers else "nothing"
        raise Nonconformance("2.3", f"a corrupted EVENT_ACK got {got}, expected NAK(CRC) "
                                    "with SEQ 0")
    return "EVENT_ACK unanswered; corrupted one NAK(CRC) SEQ 0"


def check_resend_and_backlog(s: Session, event_id: int, kind: MsgType) -> str:
    """With ``event_id`` (of ``kind``) unacknowledged: it is resent with the same id; RESYNC,
    twice with the same SEQ, is run both times (heartbeat, the event, then ACK); after
    EVENT_ACK the resending stops."""
    copies = [r for r in s.wire.listen(1.0) if r.frame is not None and r.frame.type == kind
              and getattr(r.message, "event_id", None) == event_id]
    if not copies:
        raise Nonconformance("3.4", f"unacknowledged {kind.name} {event_id} not resent "
                                    "within 1 s")
    seq = s.wire.next_seq()
    for attempt in ("RESYNC", "RESYNC retried with the same SEQ"):
        start = len(s.wire.received)
        s.wire.send(Resync(), seq)
        reply = s.wire.reply_to(seq, 1.0)
        if reply is None or not isinstance(reply.message, Ack):
            raise Nonconformance("3.3", f"{attempt} answered "
                                        f"{reply.describe() if reply else 'nothing'}")
        before = s.wire.received[start:s.wire.received.index(reply)]
        types = [r.frame.type for r in before if r.frame is not None]
        if MsgType.HEARTBEAT not in types or kind not in types \
                or types.index(MsgType.HEARTBEAT) > types.index(kind):
            raise Nonconformance("3.3", f"{attempt}: expected HEARTBEAT, then the "
                                        f"unacknowledged {kind.name}, then ACK; got "
                                        f"{[MsgType(t).name for t in types]} then ACK"
                                        + (" (replayed, not run again)" if not types else ""))
        ids = [getattr(r.message, "event_id", 0) for r in before
               if r.frame is not None and r.frame.type >= MsgType.SHUFFLE_DONE]
        if not all(is_newer(b, a) for a, b in zip(ids, ids[1:])):
            raise Nonconformance("3.3", f"backlog not in id order: {ids}")
    s.wire.ack(event_id)
    s.wire.listen(0.2)
    late = [r for r in s.wire.listen(0.8) if getattr(r.message, "event_id", None) == event_id]
    if late:
        raise Nonconformance("3.4", f"{kind.name} {event_id} still resent after EVENT_ACK")
    return f"resent {len(copies)}x in 1 s; RESYNC run twice; resending stopped after EVENT_ACK"


def check_reboot(s: Session, then: Callable[[Session], EventMessage]) -> str:
    """Power-cycle the device: a heartbeat with a new boot id, idle with nothing held (5.8),
    and the first event of the new boot (raised by ``then``) has id 1 (3.4)."""
    old = s.wire.boot_id
    s.physical(Action.POWER_CYCLE)
    beat = s.wire.wait(lambda r: isinstance(r.message, Heartbeat) and r.message.boot_id != old,
                       REBOOT_SECONDS)
    if beat is None:
        raise Nonconformance("3.6", f"no HEARTBEAT with a new boot id within "
                                    f"{REBOOT_SECONDS:g} s of the power cycle")
    resync(s)  # a power-cycled USB device is a new connection (3.3); harmless otherwise
    status = s.status()
    if status.hand_number != 0 or status.state not in (DeviceState.IDLE, DeviceState.DEALING):
        raise Nonconformance("5.8", f"after a reboot: state {status.state.name}, hand "
                                    f"{status.hand_number}; expected idle, hand 0")
    first = then(s)
    if first.event_id != 1:
        raise Nonconformance("3.4", f"the first event after a reboot has id {first.event_id}, "
                                    "expected 1")
    assert isinstance(beat.message, Heartbeat)
    return f"boot {old or 0:08X} -> {beat.message.boot_id:08X}; idle; event ids restart at 1"


def clear_fault_acked_first(s: Session, is_clear: Callable[[Message], bool], what: str) -> None:
    """Send CLEAR_FAULT; its ACK MUST come before the event saying the fault cleared (5.5)."""
    seq = s.wire.next_seq()
    start = len(s.wire.received)
    s.wire.send(ClearFault(), seq)
    reply = s.wire.reply_to(seq, 1.0)
    if reply is None or not isinstance(reply.message, Ack):
        got = reply.describe() if reply is not None else "nothing"
        raise Nonconformance("5.5", f"CLEAR_FAULT answered {got}, expected ACK")
    before = s.wire.received[start:s.wire.received.index(reply)]
    if any(r.message is not None and is_clear(r.message) for r in before):
        raise Nonconformance("5.5", f"{what} came before the ACK to CLEAR_FAULT; the ACK MUST "
                                    "come first")


LINK_SCENARIOS = (
    Scenario("resync", "RESYNC answered: heartbeat, backlog, then ACK", "3.3", resync),
    Scenario("identify", "IDENTIFY answered with IDENTITY, protocol 1", "4", identify),
    Scenario("heartbeat", "HEARTBEAT every second, one boot id", "3.6", heartbeat),
    Scenario("status", "GET_STATUS answered; boot id as in the heartbeat", "4", status),
    Scenario("meters", "GET_METERS answered", "4", meters),
    Scenario("unknown-command", "unknown command -> NAK(UNKNOWN)", "4", unknown_command),
    Scenario("malformed-payload", "malformed payload -> NAK(LENGTH)", "4", malformed_payload),
    Scenario("bad-crc", "bad CRC -> NAK(CRC) with its SEQ", "2.3", bad_crc),
    Scenario("bad-length", "LEN disagrees -> NAK(LENGTH)", "2.3", bad_length),
    Scenario("other-version", "version 2, good CRC -> NAK(UNKNOWN)", "2.3", other_version),
    Scenario("event-ack", "EVENT_ACK never answered; corrupted -> NAK(CRC)", "2.3",
             event_ack_unanswered),
)
