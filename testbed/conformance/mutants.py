"""Mutants: devices broken on purpose in one clause of docs/protocols.md each, written from
the document's words (not by patching our codec). The conformance kit must fail each one on
the row that checks the clause, naming the clause, what it expected and what arrived."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from drivers.events import Fault
from drivers.framed import event_messages as ev
from drivers.framed.codec import encode_message
from drivers.framed.event_messages import EventMessage
from drivers.framed.framing import Dropped
from drivers.framed.messages import (
    Ack, ClearFault, DeviceState, DispenseHand, EndRound, GetStatus, Identify, Message, Nak,
    NakReason, Shuffle, StatusReply,
)
from firmware_sim.shoe_framed import FramedShoeSim
from firmware_sim.shuffler import HAND_SIZE, ShufflerSim
from testbed.conformance.devices import ExposingShuffler, Variant, _mix, _shoe, _shuffler
from testbed.conformance.field_mutants import FIELD_MUTANTS


# link mutants (both devices) ------------------------------------------------------------------
class SlowHeartbeat:
    """3.6: a HEARTBEAT every 1.9 s, not every second."""

    heartbeat_seconds = 1.9


class NoResend:
    """3.4: sends an event once and never again."""

    resend_seconds = 1e9


class ResyncWithoutBacklog:
    """3.3: answers RESYNC with HEARTBEAT and ACK, leaving out the events it holds."""

    def _resync(self, seq: int, type_: int) -> None:
        self._heartbeat(self.clock())  # type: ignore[attr-defined]
        self._reply(seq, type_, Ack())  # type: ignore[attr-defined]
        self._last = None


class IgnoresEventAck:
    """3.4: goes on resending an event the host acknowledged."""

    def _event_ack(self, seq: int, frame: object) -> None:
        return


class CrcNakWithSeqZero:
    """2.3: NAK(CRC) with SEQ 0 instead of the SEQ it received."""

    def _dropped(self, item: Dropped) -> None:
        super()._dropped(replace(item, seq=0) if item.seq else item)  # type: ignore[misc]


class IdentityWithBadCrc:
    """2.1: its IDENTITY reply carries a wrong CRC."""

    def execute(self, message: Message) -> Message:
        if isinstance(message, Identify):
            self._corrupt_next = True
        return super().execute(message)  # type: ignore[misc]


class ShuffleWithHandWaitingShuffler(ShufflerSim):
    """5.2 (the decision): accepts SHUFFLE while a hand waits."""

    def execute(self, message: Message) -> Message:
        if isinstance(message, Shuffle) and not self.faults \
                and self._state is DeviceState.HAND_WAITING:
            self._state, self._due = DeviceState.SHUFFLING, self.clock() + self.shuffle_seconds
            return Ack()
        return super().execute(message)


class ExposedFaultShuffler(ExposingShuffler):
    """5.4: raises fault bit 6 for a card face up in a formed hand (the mask said it)."""

    def _finish_hand(self, now: float) -> None:
        super()._finish_hand(now)
        if self._state is DeviceState.HAND_WAITING:
            self._fault(Fault.EXPOSED_CARD, "card face up in the hand")


class LateExposedFaultShuffler(ExposingShuffler):
    """5.4: raises fault bit 6 for the card its mask showed, a moment after HAND_READY (so
    the command that follows is refused for it)."""

    def _finish_hand(self, now: float) -> None:
        super()._finish_hand(now)
        if self._state is DeviceState.HAND_WAITING:
            self.__dict__["_fault_due"] = now + 0.3

    def on_tick(self, now: float) -> None:
        due = self.__dict__.get("_fault_due")
        if due is not None and now >= due:
            self.__dict__["_fault_due"] = None
            self._fault(Fault.EXPOSED_CARD, "card face up in the hand")
        super().on_tick(now)


class ClearedBeforeAckShuffler(ShufflerSim):
    """5.5: FAULT_CLEARED before the ACK to CLEAR_FAULT."""

    def execute(self, message: Message) -> Message:
        if isinstance(message, ClearFault):
            self._clear_faults()
            return Ack()
        return super().execute(message)


class NeverClearedShuffler(ShufflerSim):
    """5.5: clears the fault on CLEAR_FAULT but never says so (no FAULT_CLEARED)."""

    def _clear_faults(self) -> None:
        self.faults -= self.faults - self.causes


class NoReplayStoreShuffler(ShufflerSim):
    """3.2: executes a retried command (same SEQ) again instead of replaying its reply."""

    def _reply(self, seq: int, type_: int, message: Message) -> None:
        super()._reply(seq, type_, message)
        self._last = None

    def execute(self, message: Message) -> Message:
        if isinstance(message, Shuffle) and self._state is DeviceState.SHUFFLING:
            self._due = self.clock() + self.shuffle_seconds
            self.meters[0] += 1
            return Ack()
        return super().execute(message)


class AnswersEventAck:
    """2.3: ACKs every EVENT_ACK."""

    def _event_ack(self, seq: int, frame: object) -> None:
        super()._event_ack(seq, frame)  # type: ignore[misc]
        self._out(encode_message(seq, Ack()))  # type: ignore[attr-defined]


class UnknownIsBadState:
    """4: answers a command it does not know NAK(BAD_STATE), not NAK(UNKNOWN)."""

    def _reply(self, seq: int, type_: int, message: Message) -> None:
        if isinstance(message, Nak) and message.reason is NakReason.UNKNOWN:
            message = Nak(NakReason.BAD_STATE)
        super()._reply(seq, type_, message)  # type: ignore[misc]


class DispenseInIdleShuffler(ShufflerSim):
    """5.3: ACKs DISPENSE_HAND in idle (no deck shuffled)."""

    def execute(self, message: Message) -> Message:
        if isinstance(message, DispenseHand) and self._state is DeviceState.IDLE \
                and not self.faults:
            return Ack()
        return super().execute(message)


class ShortHandShuffler(ShufflerSim):
    """5.3: with fewer than 3 cards left, forms a short hand instead of NAK(BAD_STATE)."""

    def execute(self, message: Message) -> Message:
        if isinstance(message, DispenseHand) and self._state is DeviceState.READY \
                and 0 < len(self._deck) < HAND_SIZE and not self.faults:
            self._state, self._due = DeviceState.DISPENSING, self.clock() + self.dispense_seconds
            return Ack()
        return super().execute(message)

    def _finish_hand(self, now: float) -> None:
        if len(self._deck) >= HAND_SIZE:
            super()._finish_hand(now)
            return
        cards, self._deck = tuple(self._deck), []
        self._dealt.extend(cards)
        self.hand_number += 1
        self._state = DeviceState.HAND_WAITING
        self._due = now + self.take_seconds if self.take_seconds is not None else None
        hand = self.hand_number
        self.raise_event(lambda i: ev.HandReadyMsg(i, hand, cards, 0))


class HandNumbersGoOnShuffler(ShufflerSim):
    """5.6: hand numbers run on across shuffles instead of starting at 1 again."""

    def _finish_shuffle(self) -> None:
        kept = self.hand_number
        super()._finish_shuffle()
        self.hand_number = kept

    def _reset_round(self) -> None:
        kept = getattr(self, "hand_number", 0)
        super()._reset_round()
        self.hand_number = kept


class TakenAfterEndRoundShuffler(ShufflerSim):
    """5.7: sends HAND_TAKEN when END_ROUND collects a presented hand."""

    def execute(self, message: Message) -> Message:
        if isinstance(message, EndRound) and self._state is DeviceState.HAND_WAITING \
                and not self.faults:
            hand = self.hand_number
            self.after_reply(lambda: self.raise_event(lambda i: ev.HandTakenMsg(i, hand)))
        return super().execute(message)


class EndRoundWhileShufflingShuffler(ShufflerSim):
    """5.7: ACKs END_ROUND while the mechanism shuffles (it MUST be NAK(BUSY))."""

    def execute(self, message: Message) -> Message:
        if isinstance(message, EndRound) and self._state is DeviceState.SHUFFLING \
                and not self.faults:
            self._reset_round()
            return Ack()
        return super().execute(message)


class BentEvents:
    """Rewrites some events as it raises them (``bend``)."""

    def bend(self, message: EventMessage) -> EventMessage:
        return message

    def raise_event(self, make: Callable[[int], EventMessage]) -> EventMessage:
        return super().raise_event(lambda i: self.bend(make(i)))  # type: ignore[misc]


class RepeatedCardShuffler(BentEvents, ShufflerSim):
    """4: a hand that names one card twice."""

    def bend(self, message: EventMessage) -> EventMessage:
        if isinstance(message, ev.HandReadyMsg):
            return replace(message, cards=(message.cards[0],) + message.cards[:-1])
        return message


class BadMaskShuffler(BentEvents, ShufflerSim):
    """4: an exposed mask with a bit past the hand's last card."""

    def bend(self, message: EventMessage) -> EventMessage:
        if isinstance(message, ev.HandReadyMsg):
            return replace(message, exposed_mask=1 << len(message.cards))
        return message


class IdsGoOnAfterRebootShuffler(ShufflerSim):
    """3.4: after a reboot its event ids go on instead of starting at 1."""

    def reboot(self) -> None:
        kept = self._event_id
        super().reboot()
        self._event_id = kept


class WrongBootInStatus:
    """4: STATUS carries a boot id other than the heartbeat's."""

    def execute(self, message: Message) -> Message:
        reply = super().execute(message)  # type: ignore[misc]
        if isinstance(reply, StatusReply) and isinstance(message, GetStatus):
            return replace(reply, boot_id=reply.boot_id ^ 0x1)
        return reply


class OneIdShuffler(ShufflerSim):
    """3.4: numbers every event 1 (the host takes the second for a copy of the first)."""

    def raise_event(self, make: Callable[[int], EventMessage]) -> EventMessage:
        self._event_id = 0
        return super().raise_event(make)


class ZeroIdShoe(FramedShoeSim):
    """3.4: numbers its events from 0 (0 is never an id)."""

    def raise_event(self, make: Callable[[int], EventMessage]) -> EventMessage:
        return super().raise_event(lambda i: make(i - 1))


# shoe mutants -----------------------------------------------------------------------------------
class SilentLidCloseShoe(FramedShoeSim):
    """6 (and 5.5): CLEAR_FAULT clears the lid fault but LID closed is never sent."""

    def close_lid(self) -> None:
        with self.lock:
            self.faults.discard(Fault.LID_OPEN)


class SilentLidOpenShoe(FramedShoeSim):
    """6: an opened lid is a fault in the fault word, but LID open is never sent."""

    def open_lid(self) -> None:
        with self.lock:
            self.faults.add(Fault.LID_OPEN)


class LidClosedBeforeAckShoe(FramedShoeSim):
    """5.5: LID closed goes out before the ACK to CLEAR_FAULT."""

    def execute(self, message: Message) -> Message:
        if isinstance(message, ClearFault):
            self.close_lid()
            return Ack()
        return super().execute(message)


class DoubleCardShoe(FramedShoeSim):
    """6: one draw reported as two CARD events (two ids, one card)."""

    def draw(self, *, burn: bool | None = None):  # type: ignore[no-untyped-def]
        card = super().draw(burn=burn)
        if card is not None:
            with self.lock:
                index = self.index
                self.raise_event(lambda i: ev.CardMsg(i, index, card, 0))
        return card


class PhantomCardShoe(FramedShoeSim):
    """6: reports a card nobody drew, every 1.5 s."""

    phantom_seconds = 1.5

    def on_tick(self, now: float) -> None:
        due = self.__dict__.setdefault("_phantom_due", now + self.phantom_seconds)
        if now >= due:
            self.__dict__["_phantom_due"] = now + self.phantom_seconds
            card = self._deck[-1] if self._deck else None
            if card is not None:
                self.raise_event(lambda i: ev.CardMsg(i, self.index + 1, card, 0))
        super().on_tick(now)


class ShuffleBadStateShoe(FramedShoeSim):
    """6: SHUFFLE to a shoe is NAK(BAD_STATE), not NAK(UNKNOWN)."""

    def execute(self, message: Message) -> Message:
        if isinstance(message, Shuffle):
            return Nak(NakReason.BAD_STATE)
        return super().execute(message)


class IdsGoOnAfterRebootShoe(FramedShoeSim):
    """3.4: after a reboot its event ids go on instead of starting at 1."""

    def reboot(self) -> None:
        kept = self._event_id
        super().reboot()
        self._event_id = kept


S, H = "shuffler", "shoe"
MUTANTS = (
    Variant("heartbeat-1.9s", S, _shuffler(_mix(SlowHeartbeat, ShufflerSim,
                                                 name="SlowHeartbeatShuffler")),
            ("heartbeat",), "heartbeat", "3.6", ("expected every 1 s",)),
    Variant("no-resend", S, _shuffler(_mix(NoResend, ShufflerSim, name="NoResendShuffler")),
            ("event-resend", "shuffle"), "event-resend", "3.4", ("MUST resend",)),
    Variant("resync-without-backlog", S,
            _shuffler(_mix(ResyncWithoutBacklog, ShufflerSim, name="NoBacklogShuffler")),
            ("event-resend",), "event-resend", "3.3", ("SHUFFLE_DONE",)),
    Variant("ignores-event-ack", S,
            _shuffler(_mix(IgnoresEventAck, ShufflerSim, name="DeafShuffler")),
            ("event-resend",), "event-resend", "3.4", ("after EVENT_ACK",)),
    Variant("crc-nak-seq-0", S,
            _shuffler(_mix(CrcNakWithSeqZero, ShufflerSim, name="SeqZeroShuffler")),
            ("bad-crc",), "bad-crc", "2.3", ("SEQ 0", "echo")),
    Variant("identity-bad-crc", S,
            _shuffler(_mix(IdentityWithBadCrc, ShufflerSim, name="BadCrcShuffler")),
            ("identify",), "identify", "2.1", ("bad CRC", "02 01")),
    Variant("answers-event-ack", S,
            _shuffler(_mix(AnswersEventAck, ShufflerSim, name="ChattyShuffler")),
            ("event-ack",), "event-ack", "2.3", ("MUST NOT answer",)),
    Variant("unknown-is-bad-state", S,
            _shuffler(_mix(UnknownIsBadState, ShufflerSim, name="BadStateShuffler")),
            ("unknown-command",), "unknown-command", "4", ("NAK(BAD_STATE)",)),
    Variant("wrong-boot-in-status", S,
            _shuffler(_mix(WrongBootInStatus, ShufflerSim, name="TwoBootShuffler")),
            ("status",), "status", "4", ("boot id",)),
    Variant("no-replay-store", S, _shuffler(NoReplayStoreShuffler),
            ("replay",), "replay", "3.2", ()),
    Variant("shuffle-with-hand-waiting", S,
            _shuffler(ShuffleWithHandWaitingShuffler, take_seconds=None),
            ("shuffle-hand-waiting",), "shuffle-hand-waiting", "5.2", ("ACK",)),
    Variant("exposed-is-a-fault", S, _shuffler(ExposedFaultShuffler, take_seconds=None),
            ("dispense",), "dispense", "5.4", ("mask",)),
    Variant("late-exposed-fault", S, _shuffler(LateExposedFaultShuffler, take_seconds=None),
            ("end-round",), "end-round", "5.4", ("mask", "fault bit 6")),
    Variant("cleared-before-ack", S, _shuffler(ClearedBeforeAckShuffler),
            ("fault-clear-order",), "fault-clear-order", "5.5", ("before the ACK",)),
    Variant("never-cleared", S, _shuffler(NeverClearedShuffler),
            ("fault-clear-order",), "fault-clear-order", "5.5", ("no FAULT_CLEARED",)),
    Variant("dispense-in-idle", S, _shuffler(DispenseInIdleShuffler),
            ("dispense-needs-shuffle",), "dispense-needs-shuffle", "5.3", ("ACK",)),
    Variant("short-hand", S, _shuffler(ShortHandShuffler),
            ("minimum-cards",), "minimum-cards", "5.3", ("card(s) left",)),
    Variant("hand-numbers-go-on", S, _shuffler(HandNumbersGoOnShuffler),
            ("minimum-cards",), "minimum-cards", "5.6", ("numbered",)),
    Variant("taken-after-end-round", S, _shuffler(TakenAfterEndRoundShuffler,
                                                   take_seconds=None),
            ("end-round",), "end-round", "5.7", ("HAND_TAKEN",)),
    Variant("end-round-while-shuffling", S,
            _shuffler(EndRoundWhileShufflingShuffler, shuffle_seconds=1.0),
            ("busy",), "busy", "5.7", ("NAK(BUSY)",)),
    Variant("repeated-card", S, _shuffler(RepeatedCardShuffler), ("dispense",), "dispense",
            "4", ("repeats a card",)),
    Variant("bad-mask", S, _shuffler(BadMaskShuffler), ("dispense",), "dispense", "4",
            ("past its 3 cards",)),
    Variant("ids-go-on-after-reboot", S, _shuffler(IdsGoOnAfterRebootShuffler),
            ("reboot",), "reboot", "3.4", ("expected 1",)),
    Variant("one-event-id", S, _shuffler(OneIdShuffler), ("dispense",), "dispense", "3.4",
            ("reuses event id 1",)),
    Variant("shoe-event-id-0", H, _shoe(ZeroIdShoe), ("card",), "card", "3.4",
            ("event id 0",)),
    Variant("shoe-heartbeat-1.9s", H, _shoe(_mix(SlowHeartbeat, FramedShoeSim,
                                                  name="SlowHeartbeatShoe")),
            ("heartbeat",), "heartbeat", "3.6", ("expected every 1 s",)),
    Variant("shoe-no-resend", H, _shoe(_mix(NoResend, FramedShoeSim, name="NoResendShoe")),
            ("card",), "card", "3.4", ("MUST resend",)),
    Variant("shoe-resync-without-backlog", H,
            _shoe(_mix(ResyncWithoutBacklog, FramedShoeSim, name="NoBacklogShoe")),
            ("card",), "card", "3.3", ("CARD",)),
    Variant("shoe-silent-lid-close", H, _shoe(SilentLidCloseShoe), ("lid",), "lid", "6",
            ("no LID closed",)),
    Variant("shoe-silent-lid-open", H, _shoe(SilentLidOpenShoe), ("lid",), "lid", "6",
            ("no LID",)),
    Variant("shoe-lid-closed-before-ack", H, _shoe(LidClosedBeforeAckShoe), ("lid",), "lid",
            "5.5", ("before the ACK",)),
    Variant("shoe-double-card", H, _shoe(DoubleCardShoe), ("card",), "card", "6",
            ("2 reports",)),
    Variant("shoe-phantom-card", H, _shoe(PhantomCardShoe), ("quiet",), "quiet", "6",
            ("nothing drawn",)),
    Variant("shoe-shuffle-bad-state", H, _shoe(ShuffleBadStateShoe), ("not-a-shuffler",),
            "not-a-shuffler", "6", ("NAK(BAD_STATE)",)),
    Variant("shoe-ids-go-on-after-reboot", H, _shoe(IdsGoOnAfterRebootShoe), ("reboot",),
            "reboot", "3.4", ("expected 1",)),
    Variant("shoe-answers-event-ack", H,
            _shoe(_mix(AnswersEventAck, FramedShoeSim, name="ChattyShoe")),
            ("event-ack",), "event-ack", "2.3", ("MUST NOT answer",)),
) + FIELD_MUTANTS
"""Devices broken in one clause each: the kit must fail the named row with that clause (the
field mutants: one field of one message out of its range each)."""
