"""Scenarios every framed device must pass: the link of docs/protocols.md sections 2-4."""

from __future__ import annotations

from collections.abc import Callable

from drivers.conformance.session import (
    LOAD_MARGIN, REPLY_WAIT, Action, Nonconformance, Scenario, Session,
)
from drivers.conformance.wire import Received, frame_bytes, hex_bytes, message_name
from drivers.framed.codec import encode_message
from drivers.framed.event_ids import is_newer
from drivers.framed.event_messages import EventMessage
from drivers.framed.messages import (
    Ack, ClearFault, DeviceState, EventAck, GetMeters, GetStatus, Heartbeat, Identify,
    IdentityReply, Message, MetersReply, MsgType, Nak, NakReason, Resync,
)

HEARTBEAT_SECONDS = 1.0
"""3.6: a HEARTBEAT every second."""
HEARTBEAT_LISTEN = 4.3
HEARTBEAT_MEAN_LIMIT = HEARTBEAT_SECONDS * 1.15
"""The mean period over the listen: jitter on a loaded host averages out, a slow clock does
not (a device beating every 1.9 s fails, one every 1.05 s passes)."""
HEARTBEAT_GAP_LIMIT = HEARTBEAT_SECONDS + LOAD_MARGIN + 0.1
"""No single gap may pass this: one missed beat (a 2 s gap) fails."""
RESEND_SHOULD = 0.3
"""3.4: a device SHOULD resend an unacknowledged event every 0.3 s (it MUST resend)."""
RESEND_WAIT = 3.0
"""How long the kit waits for a resend: the host's offline limit (3.6), the longest silence
the document lets a host bear."""
UNKNOWN_TYPE = 0x2F  # no message of docs/protocols.md section 4 has it
REBOOT_SECONDS = 60.0


def _answer(s: Session, seq: int, start: int, clause: str, what: str) -> list[Received]:
    """What the device sent between ``start`` and its reply to ``seq`` (which must be ACK)."""
    reply = s.wire.reply_to(seq, REPLY_WAIT)
    if reply is None:
        raise s.no_reply(clause, what, seq, start)
    if reply.breach is not None:
        raise Nonconformance(reply.breach.clause, f"{what} answered with a frame out of "
                                                  f"range: {reply.breach.reason}")
    if not isinstance(reply.message, Ack):
        raise Nonconformance(clause, f"{what} answered {reply.describe()}, expected ACK")
    return s.wire.received[start:s.wire.received.index(reply)]


def resync(s: Session) -> str:
    """The host's first frame: HEARTBEAT, the backlog, then ACK with the RESYNC's SEQ."""
    seq = s.wire.next_seq()
    start = s.wire.mark()
    s.wire.send(Resync(), seq)
    before = _answer(s, seq, start, "3.3", f"RESYNC (SEQ {seq})")
    if not any(isinstance(r.message, Heartbeat) for r in before):
        raise Nonconformance("3.3", "no HEARTBEAT before the ACK to RESYNC; got "
                                    f"{_names(before)} then ACK")
    return f"boot id {s.wire.boot_id:08X}" if s.wire.boot_id is not None else "answered"


def _names(items: list[Received]) -> str:
    named = [message_name(r.message) if r.message is not None else r.describe()
             for r in items]
    return "[" + ", ".join(named) + "]"


def identify(s: Session) -> str:
    ident = s.reply(Identify(), IdentityReply, "4")  # protocol version 1: .fields
    return f"{ident.vendor} {ident.model} serial {ident.serial} firmware {ident.firmware_version}"


def heartbeat(s: Session) -> str:
    """3.6: one non-zero boot id, a HEARTBEAT every second: the mean period and the largest
    gap, each against the document's figure with a margin for a loaded host."""
    heard = [r for r in s.wire.listen(HEARTBEAT_LISTEN)
             if r.frame is not None and r.frame.type == MsgType.HEARTBEAT]
    breach = next((r.breach for r in heard if r.breach is not None), None)
    if breach is not None:  # SEQ 0, a boot id never 0, state and fault word: .fields
        raise Nonconformance(breach.clause, breach.reason)
    beats = [r for r in heard if isinstance(r.message, Heartbeat)]
    if len(beats) < 2:
        raise Nonconformance("3.6", f"{len(beats)} HEARTBEAT in {HEARTBEAT_LISTEN:g} s, "
                                    f"expected one every {HEARTBEAT_SECONDS:g} s")
    boots = {r.message.boot_id for r in beats if isinstance(r.message, Heartbeat)}
    if len(boots) != 1:
        raise Nonconformance("3.6", f"boot ids {', '.join(f'{b:08X}' for b in sorted(boots))} "
                                    "in one boot (constant)")
    gaps = [b.at - a.at for a, b in zip(beats, beats[1:])]
    mean = (beats[-1].at - beats[0].at) / len(gaps)
    if mean > HEARTBEAT_MEAN_LIMIT or max(gaps) > HEARTBEAT_GAP_LIMIT:
        raise Nonconformance("3.6", f"HEARTBEAT every {mean:.2f} s on average, largest gap "
                                    f"{max(gaps):.2f} s; expected every {HEARTBEAT_SECONDS:g} s "
                                    f"(the kit allows a mean of {HEARTBEAT_MEAN_LIMIT:.2f} s "
                                    f"and a gap of {HEARTBEAT_GAP_LIMIT:.2f} s)")
    return f"{len(beats)} in {HEARTBEAT_LISTEN:g} s, every {mean:.2f} s, largest gap " \
           f"{max(gaps):.2f} s"


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
    start = s.wire.mark()
    s.wire.raw(data)
    reply = s.wire.reply_to(seq, REPLY_WAIT)
    sent = f"{what} (SEQ {seq}) [{hex_bytes(data)}]"
    if reply is None:
        failure = s.no_reply(clause, sent, seq, start, seq_clause=clause)
        raise type(failure)(failure.clause, f"{failure.reason}; expected NAK({reason.name}) "
                                            f"with SEQ {seq}")
    if reply.breach is not None:
        raise Nonconformance(reply.breach.clause, f"{sent} answered with a frame out of "
                                                  f"range: {reply.breach.reason}")
    if not isinstance(reply.message, Nak) or reply.message.reason is not reason:
        raise Nonconformance(clause, f"{sent} answered {reply.describe()}, expected "
                                     f"NAK({reason.name}) with SEQ {seq}")
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


def _until_answered(s: Session, data: bytes) -> list[Received]:
    """Send ``data``, then GET_STATUS: what the device sent before the STATUS reply is what it
    sent in answer to ``data`` (it reads its input in order), with no guess at timing."""
    start = s.wire.mark()
    s.wire.raw(data)
    seq = s.wire.next_seq()
    s.wire.send(GetStatus(), seq)
    reply = s.wire.reply_to(seq, REPLY_WAIT)
    if reply is None:
        raise s.no_reply("4", f"GET_STATUS (SEQ {seq})", seq, start)
    return s.wire.received[start:s.wire.received.index(reply)]


def event_ack_unanswered(s: Session) -> str:
    """A valid EVENT_ACK gets nothing; a corrupted one gets NAK(CRC) with SEQ 0."""
    valid = encode_message(0, EventAck(0xFFFE))
    answers = [r for r in _until_answered(s, valid) if r.is_reply or r.frame is None]
    if answers:
        raise Nonconformance("2.3", f"the device answered an EVENT_ACK [{hex_bytes(valid)}] "
                                    f"with {answers[0].describe()}; it MUST NOT answer "
                                    "EVENT_ACK")
    corrupted = frame_bytes(0, MsgType.EVENT_ACK, EventAck(0xFFFE).encode(), crc_flip=0x01)
    answers = [r for r in _until_answered(s, corrupted) if r.is_reply or r.frame is None]
    if not (answers and isinstance(answers[0].message, Nak) and answers[0].frame is not None
            and answers[0].message.reason is NakReason.CRC and answers[0].frame.seq == 0):
        got = answers[0].describe() if answers else "nothing"
        raise Nonconformance("2.3", f"a corrupted EVENT_ACK [{hex_bytes(corrupted)}] got "
                                    f"{got}, expected NAK(CRC) with SEQ 0")
    return "EVENT_ACK unanswered; corrupted one NAK(CRC) SEQ 0"


def _copy_of(event_id: int, kind: MsgType) -> Callable[[Received], bool]:
    return lambda r: (r.frame is not None and r.frame.type == kind
                      and getattr(r.message, "event_id", None) == event_id)


def check_resend_and_backlog(s: Session, event_id: int, kind: MsgType) -> str:
    """With ``event_id`` (of ``kind``) unacknowledged: it is resent with the same id (3.4, at
    any period up to the kit's wait; SHOULD 0.3 s); RESYNC, twice with the same SEQ, is run
    both times (3.3: heartbeat, the event, then ACK); after EVENT_ACK the resending stops.

    A resend may leave the device before it reads the RESYNC: 3.4 lets it resend at any time,
    and 3.3 governs only what follows the RESYNC. So the answer is judged as "a HEARTBEAT,
    then the event, then the ACK" with a resend allowed before it, and the RESYNC is sent just
    after a copy arrives, when the next resend is a whole period away."""
    copy = _copy_of(event_id, kind)
    s.wire.skip_seen()
    first = s.wire.wait(copy, RESEND_WAIT)
    second = s.wire.wait(copy, RESEND_WAIT) if first is not None else None
    if first is None or second is None:
        raise Nonconformance("3.4", f"unacknowledged {kind.name} {event_id} "
                                    f"{'resent once, then not' if first else 'not resent'} "
                                    f"within {RESEND_WAIT:g} s; a device MUST resend it until "
                                    "EVENT_ACK")
    period = second.at - first.at
    seq = s.wire.next_seq()
    for attempt in ("RESYNC", "RESYNC retried with the same SEQ"):
        s.wire.skip_seen()
        s.wire.wait(copy, RESEND_WAIT)
        start = s.wire.mark()
        s.wire.send(Resync(), seq)
        before = _answer(s, seq, start, "3.3", f"{attempt} (SEQ {seq})")
        beats = [i for i, r in enumerate(before) if isinstance(r.message, Heartbeat)]
        answer = before[beats[0]:] if beats else []
        if not beats or not any(copy(r) for r in answer[1:]):
            replayed = " (replayed, not run again)" if attempt != "RESYNC" and not beats else ""
            raise Nonconformance("3.3", f"{attempt}: expected HEARTBEAT, then the "
                                        f"unacknowledged {kind.name} {event_id}, then ACK; got "
                                        f"{_names(before)} then ACK{replayed}")
        ids: list[int] = []
        for r in answer:
            if isinstance(r.message, EventMessage) and r.message.event_id not in ids:
                ids.append(r.message.event_id)
        if not all(is_newer(b, a) for a, b in zip(ids, ids[1:])):
            raise Nonconformance("3.3", f"{attempt}: backlog not in id order: {ids}")
    after = _until_answered(s, encode_message(0, EventAck(event_id)))
    del after  # copies sent before the device read the EVENT_ACK are allowed
    late = s.wire.wait(copy, max(1.0, 2 * period) + LOAD_MARGIN)
    if late is not None:
        raise Nonconformance("3.4", f"{kind.name} {event_id} still resent after EVENT_ACK "
                                    f"[{late.hex}]")
    slow = f" (slower than the SHOULD {RESEND_SHOULD:g} s: allowed)" \
        if period > RESEND_SHOULD * 1.5 else ""
    return f"resent every {period:.2f} s{slow}; RESYNC run twice; resending stopped after " \
           "EVENT_ACK"


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


def clear_fault_acked_first(s: Session, is_clear: Callable[[Message], bool], what: str,
                            clause: str) -> None:
    """Send CLEAR_FAULT; its ACK MUST come before the event saying the fault cleared (5.5),
    and that event MUST come (it is seen, not assumed)."""
    seq = s.wire.next_seq()
    start = s.wire.mark()
    s.wire.send(ClearFault(), seq)
    before = _answer(s, seq, start, "5.5", f"CLEAR_FAULT (SEQ {seq})")
    if any(r.message is not None and is_clear(r.message) for r in before):
        raise Nonconformance("5.5", f"{what} came before the ACK to CLEAR_FAULT; the ACK MUST "
                                    "come first")
    if s.wire.wait(lambda r: r.message is not None and is_clear(r.message) and r.first_copy,
                   CLEARED_WAIT) is None:
        breach = s.breach(start)
        if breach is not None:
            raise Nonconformance(breach.clause, f"no {what} after CLEAR_FAULT; instead "
                                                f"{breach.reason}")
        raise Nonconformance(clause, f"CLEAR_FAULT was ACKed but no {what} followed within "
                                     f"{CLEARED_WAIT:g} s")


CLEARED_WAIT = 2.0 + LOAD_MARGIN


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
