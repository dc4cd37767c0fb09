"""The shuffler driver against the simulated shuffler over real ptys and TCP sockets: every
command, event and fault of issue 3."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.games.cards import ensure_single_deck
from drivers.errors import CommandRejected, DeviceDisconnected, DeviceFault, DriverTimeoutError
from drivers.events import (
    CardSetDispensed, DeviceEvent, DeviceOffline, DeviceOnline, DeviceRebooted, Fault,
    FaultCleared, FaultRaised, HandTaken, LinkError, ShuffleDone,
)
from drivers.framed.codec import encode_message
from drivers.framed.messages import (
    Ack, DeviceState, DispenseHand, Message, MsgType, Nak, NakReason,
)
from drivers.shuffler import Shuffler
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.framed import Conformance
from firmware_sim.shuffler import ShufflerSim
from tests.drivers.sim_fixtures import (  # noqa: F401 - fixtures
    Served, drain, fixture_events, fixture_served, fixture_transport_kind, next_event, serve,
)


@pytest.fixture(name="sim")
def fixture_sim() -> ShufflerSim:
    return ShufflerSim(seed=7)


@pytest.fixture(name="shuffler")
def fixture_shuffler(served: Served, events: queue.Queue[DeviceEvent]) -> Iterator[Shuffler]:
    shuffler = Shuffler(served.url, events, backoff=(0.05, 0.2))
    with shuffler:
        next_event(events, DeviceOnline)
        yield shuffler


def _shuffled(shuffler: Shuffler, events: queue.Queue[DeviceEvent]) -> ShuffleDone:
    shuffler.shuffle()
    return next_event(events, ShuffleDone)


def _hand(shuffler: Shuffler, events: queue.Queue[DeviceEvent]) -> CardSetDispensed:
    shuffler.dispense_hand()
    return next_event(events, CardSetDispensed)


def test_identify(shuffler: Shuffler) -> None:
    """identify() returns vendor, model, serial, firmware version and hash, protocol version."""
    identity = shuffler.identify()
    assert identity.model.startswith("HF-3")
    assert identity.protocol_version == 1
    assert len(identity.firmware_hash) == 16


def test_status_reports_state_and_boot_id(shuffler: Shuffler, sim: ShufflerSim) -> None:
    """status() gives the state, no faults, and the boot id the heartbeat carries."""
    status = shuffler.status()
    assert status.state is DeviceState.IDLE
    assert status.faults == frozenset()
    assert status.boot_id == sim.boot_id == shuffler.boot_id


def test_round(shuffler: Shuffler, events: queue.Queue[DeviceEvent]) -> None:
    """Shuffle, two hands of three distinct cards each followed by HandTaken, then end round."""
    done = _shuffled(shuffler, events)
    assert (done.counted, done.expected) == (52, 52)
    hands = []
    for number in (1, 2):
        hand = _hand(shuffler, events)
        assert hand.hand_number == number and len(hand.cards) == 3 and hand.exposed == ()
        assert next_event(events, HandTaken).hand_number == number
        hands.extend(hand.cards)
    ensure_single_deck(hands)
    assert shuffler.status().cards_remaining == 46
    shuffler.end_round()
    assert shuffler.status().state is DeviceState.IDLE
    meters = shuffler.meters()
    assert (meters.shuffles, meters.hands, meters.cards) == (1, 2, 6)


def test_dispense_before_shuffle_is_rejected(shuffler: Shuffler) -> None:
    """DISPENSE_HAND with no shuffled deck is NAKed BAD_STATE -> CommandRejected with reason."""
    with pytest.raises(CommandRejected) as info:
        shuffler.dispense_hand()
    assert info.value.reason is NakReason.BAD_STATE


def test_busy_while_shuffling(shuffler: Shuffler, sim: ShufflerSim,
                              events: queue.Queue[DeviceEvent]) -> None:
    """A second SHUFFLE while the first runs is NAKed BUSY."""
    sim.shuffle_seconds = 1.0
    shuffler.shuffle()
    with pytest.raises(CommandRejected) as info:
        shuffler.shuffle()
    assert info.value.reason is NakReason.BUSY


def test_no_command_reveals_undealt_cards(shuffler: Shuffler,
                                          events: queue.Queue[DeviceEvent]) -> None:
    """After a shuffle, status and meters carry counts only; the driver has no deck accessor."""
    _shuffled(shuffler, events)
    status = shuffler.status()
    assert status.cards_remaining == 52
    assert not any(hasattr(shuffler, name) for name in ("deck", "cards", "order", "peek"))


def test_jam_and_clear(shuffler: Shuffler, sim: ShufflerSim,
                       events: queue.Queue[DeviceEvent]) -> None:
    """A jam raises FaultRaised(JAM); commands then fail with DeviceFault; clear_fault clears."""
    _shuffled(shuffler, events)
    sim.inject(FaultSpec(FaultKind.JAM))
    assert next_event(events, FaultRaised).fault is Fault.JAM
    with pytest.raises(DeviceFault, match="jam"):
        shuffler.dispense_hand()
    assert shuffler.status().faults == {Fault.JAM}
    shuffler.clear_fault()
    assert next_event(events, FaultCleared).fault is Fault.JAM
    assert len(_hand(shuffler, events).cards) == 3


def test_door_open_and_clear(shuffler: Shuffler, sim: ShufflerSim,
                             events: queue.Queue[DeviceEvent]) -> None:
    """Door open is a fault bit in status until cleared."""
    sim.inject(FaultSpec(FaultKind.DOOR_OPEN))
    assert next_event(events, FaultRaised).fault is Fault.DOOR_OPEN
    assert shuffler.status().state is DeviceState.FAULT
    shuffler.clear_fault()
    assert next_event(events, FaultCleared).fault is Fault.DOOR_OPEN


@pytest.mark.parametrize(("kind", "size"), [(FaultKind.SET_OF_TWO, 2), (FaultKind.SET_OF_FOUR, 4)])
def test_misformed_set(shuffler: Shuffler, sim: ShufflerSim, events: queue.Queue[DeviceEvent],
                       kind: FaultKind, size: int) -> None:
    """A set of two or four cards is reported as dispensed, with exactly those cards."""
    _shuffled(shuffler, events)
    sim.inject(FaultSpec(kind))
    assert len(_hand(shuffler, events).cards) == size


def test_exposed_card_is_the_mask_only(shuffler: Shuffler, sim: ShufflerSim,
                                       events: queue.Queue[DeviceEvent]) -> None:
    """A card seen face up in a formed hand is named in CardSetDispensed.exposed only: no fault,
    and the next DISPENSE_HAND goes through (docs/protocols.md 5.4)."""
    _shuffled(shuffler, events)
    sim.inject(FaultSpec(FaultKind.EXPOSED))
    hand = _hand(shuffler, events)
    assert hand.exposed == hand.cards[:1]
    seen: list[DeviceEvent] = []
    next_event(events, HandTaken, seen=seen)
    assert not any(isinstance(e, FaultRaised) for e in seen)
    assert shuffler.status().faults == frozenset()
    assert _hand(shuffler, events).hand_number == 2


def test_card_face_up_outside_a_hand_is_fault_bit_6(shuffler: Shuffler, sim: ShufflerSim,
                                                    events: queue.Queue[DeviceEvent]) -> None:
    """A card found face up while shuffling raises EXPOSED_CARD, which blocks DISPENSE_HAND
    until CLEAR_FAULT (docs/protocols.md 5.4)."""
    sim.inject(FaultSpec(FaultKind.FACE_UP))
    _shuffled(shuffler, events)
    assert next_event(events, FaultRaised).fault is Fault.EXPOSED_CARD
    with pytest.raises(DeviceFault, match="exposed_card"):
        shuffler.dispense_hand()
    shuffler.clear_fault()
    assert next_event(events, FaultCleared).fault is Fault.EXPOSED_CARD
    assert _hand(shuffler, events).hand_number == 1


def test_jam_after_an_acked_dispense_never_presents_the_hand(
        shuffler: Shuffler, sim: ShufflerSim, events: queue.Queue[DeviceEvent]) -> None:
    """The hand jammed after its ACK is never presented, even after CLEAR_FAULT; its number is
    consumed and a new DISPENSE_HAND presents the next one (docs/protocols.md 5.5)."""
    _shuffled(shuffler, events)
    sim.inject(FaultSpec(FaultKind.JAM_HAND))
    shuffler.dispense_hand()
    seen: list[DeviceEvent] = []
    assert next_event(events, FaultRaised, seen=seen).fault is Fault.JAM
    shuffler.clear_fault()
    assert next_event(events, FaultCleared, seen=seen).fault is Fault.JAM
    status = shuffler.status()
    assert (status.state, status.hand_number, status.cards_remaining) == (DeviceState.READY, 1, 49)
    hand = _hand(shuffler, events)
    seen.extend(drain(events))
    assert hand.hand_number == 2
    assert not any(isinstance(e, CardSetDispensed) for e in seen)


def test_shuffle_needs_end_round(shuffler: Shuffler, events: queue.Queue[DeviceEvent]) -> None:
    """SHUFFLE is accepted only in IDLE: after a shuffle it is BAD_STATE until END_ROUND
    (docs/protocols.md 5.2)."""
    _shuffled(shuffler, events)
    with pytest.raises(CommandRejected) as info:
        shuffler.shuffle()
    assert info.value.reason is NakReason.BAD_STATE
    shuffler.end_round()
    assert _shuffled(shuffler, events).counted == 52


def test_end_round_collects_a_presented_hand(shuffler: Shuffler, sim: ShufflerSim,
                                             events: queue.Queue[DeviceEvent]) -> None:
    """END_ROUND with a hand presented and not taken: ACK, IDLE, and no HandTaken follows."""
    sim.take_seconds = None
    _shuffled(shuffler, events)
    _hand(shuffler, events)
    shuffler.end_round()
    assert shuffler.status().state is DeviceState.IDLE
    assert not any(isinstance(e, HandTaken) for e in drain(events))


def test_end_round_refused_while_a_fault_is_active(shuffler: Shuffler, sim: ShufflerSim,
                                                   events: queue.Queue[DeviceEvent]) -> None:
    """END_ROUND during a fault is BAD_STATE (a DeviceFault naming it); after CLEAR_FAULT it
    is ACKed."""
    _shuffled(shuffler, events)
    sim.inject(FaultSpec(FaultKind.JAM))
    next_event(events, FaultRaised)
    with pytest.raises(DeviceFault, match="jam"):
        shuffler.end_round()
    shuffler.clear_fault()
    next_event(events, FaultCleared)
    shuffler.end_round()
    assert shuffler.status().state is DeviceState.IDLE


def test_end_round_busy_while_shuffling(shuffler: Shuffler, sim: ShufflerSim) -> None:
    """END_ROUND while the mechanism moves is NAKed BUSY."""
    sim.shuffle_seconds = 5.0
    shuffler.shuffle()
    with pytest.raises(CommandRejected) as info:
        shuffler.end_round()
    assert info.value.reason is NakReason.BUSY


def test_fewer_than_three_cards_is_refused(shuffler: Shuffler, sim: ShufflerSim,
                                           events: queue.Queue[DeviceEvent]) -> None:
    """17 hands of three leave one card: the 18th DISPENSE_HAND is BAD_STATE; hand numbers
    restart at 1 after the next shuffle (docs/protocols.md 5.3, 5.6)."""
    sim.dispense_seconds = sim.take_seconds = 0.0
    _shuffled(shuffler, events)
    for number in range(1, 18):
        assert _hand(shuffler, events).hand_number == number
        next_event(events, HandTaken)
    assert shuffler.status().cards_remaining == 1
    with pytest.raises(CommandRejected) as info:
        shuffler.dispense_hand()
    assert info.value.reason is NakReason.BAD_STATE
    shuffler.end_round()
    _shuffled(shuffler, events)
    assert _hand(shuffler, events).hand_number == 1


def test_fault_whose_cause_persists_is_not_cleared(shuffler: Shuffler, sim: ShufflerSim,
                                                   events: queue.Queue[DeviceEvent]) -> None:
    """CLEAR_FAULT with the door still held open is ACKed but clears nothing; once the door is
    shut it clears (docs/protocols.md 5.5)."""
    sim.open_door()
    assert next_event(events, FaultRaised).fault is Fault.DOOR_OPEN
    shuffler.clear_fault()
    assert shuffler.status().faults == {Fault.DOOR_OPEN}
    assert not any(isinstance(e, FaultCleared) for e in drain(events))
    sim.close_door()
    shuffler.clear_fault()
    assert next_event(events, FaultCleared).fault is Fault.DOOR_OPEN


@pytest.mark.parametrize(("kind", "fault"), [(FaultKind.REVERSED, Fault.REVERSED_CARD),
                                             (FaultKind.NO_READ, Fault.UNREADABLE_CARD)])
def test_hand_not_formed(shuffler: Shuffler, sim: ShufflerSim, events: queue.Queue[DeviceEvent],
                         kind: FaultKind, fault: Fault) -> None:
    """A reversed or unreadable card stops the hand: a fault, no CardSetDispensed."""
    _shuffled(shuffler, events)
    sim.inject(FaultSpec(kind))
    shuffler.dispense_hand()
    seen: list[DeviceEvent] = []
    assert next_event(events, FaultRaised, seen=seen).fault is fault
    assert not any(isinstance(e, CardSetDispensed) for e in seen)


def test_duplicate_card(shuffler: Shuffler, sim: ShufflerSim,
                        events: queue.Queue[DeviceEvent]) -> None:
    """A duplicate card is dispensed (the table must catch it) and DUPLICATE_CARD is raised."""
    _shuffled(shuffler, events)
    first = _hand(shuffler, events)
    next_event(events, HandTaken)
    sim.inject(FaultSpec(FaultKind.DUPLICATE))
    second = _hand(shuffler, events)
    assert second.cards[-1] == first.cards[0]
    assert next_event(events, FaultRaised).fault is Fault.DUPLICATE_CARD


@pytest.mark.parametrize(("spec", "fault"), [
    (FaultSpec(FaultKind.COUNT, 51), Fault.COUNT_MISMATCH),
    (FaultSpec(FaultKind.COUNT, 53), Fault.COUNT_MISMATCH),
    (FaultSpec(FaultKind.UNSHUFFLED), Fault.NOT_SHUFFLED),
    (FaultSpec(FaultKind.FOREIGN), Fault.FOREIGN_CARD),
])
def test_shuffle_faults(shuffler: Shuffler, sim: ShufflerSim, events: queue.Queue[DeviceEvent],
                        spec: FaultSpec, fault: Fault) -> None:
    """Count 51/53, an unshuffled deck and a foreign card are reported after the shuffle."""
    sim.inject(spec)
    done = _shuffled(shuffler, events)
    if spec.kind is FaultKind.COUNT:
        assert (done.counted, done.expected) == (int(spec.arg or 0), 52)
    assert next_event(events, FaultRaised).fault is fault


def test_lost_ack_never_dispenses_twice(shuffler: Shuffler, sim: ShufflerSim,
                                        events: queue.Queue[DeviceEvent]) -> None:
    """When the ACK to DISPENSE_HAND is lost, the retry (same seq) gets the replayed ACK and the
    shuffler dispenses exactly one hand.

    Counted from the injection on: on a busy machine the set-up's SHUFFLE may itself be retried
    (its ACK slower than the timeout) and replayed, which is the same rule working, not this
    fault's; and a retry slower again may be retried once more. What must hold whatever the
    timing is one replay at least, and one hand."""
    _shuffled(shuffler, events)
    replays, retries = sim.replays, shuffler.stats.retries
    sim.inject(FaultSpec(FaultKind.LOST_ACK))
    shuffler.dispense_hand()
    next_event(events, CardSetDispensed)
    next_event(events, HandTaken)
    assert sim.replays - replays >= 1 and shuffler.stats.retries - retries >= 1
    assert sim.replays - replays == shuffler.stats.retries - retries  # each retry replayed
    assert shuffler.meters().hands == 1
    assert not any(isinstance(e, CardSetDispensed) for e in drain(events))


@pytest.mark.parametrize("kind", [FaultKind.BAD_CRC, FaultKind.TRUNCATE])
def test_corrupted_reply_is_retried(shuffler: Shuffler, sim: ShufflerSim,
                                    events: queue.Queue[DeviceEvent], kind: FaultKind) -> None:
    """A reply with a bad CRC or cut short is dropped, counted as a LinkError, and the retry
    succeeds without executing the command twice."""
    sim.inject(FaultSpec(kind))
    assert shuffler.identify().serial == "SIM-HF3-0001"
    error = next_event(events, LinkError)
    assert error.reason in ("crc", "truncated", "bad_escape")
    assert shuffler.stats.bad_frames >= 1


def test_stall_then_burst(shuffler: Shuffler, sim: ShufflerSim,
                          events: queue.Queue[DeviceEvent]) -> None:
    """Output held 0.5 s then sent in a burst: the command still completes (within its retries),
    and the burst of replayed replies is ignored."""
    sim.inject(FaultSpec(FaultKind.STALL, 0.5))
    assert shuffler.status().state is DeviceState.IDLE
    assert shuffler.status().state is DeviceState.IDLE


def test_repeated_event_is_dropped(shuffler: Shuffler, sim: ShufflerSim,
                                   events: queue.Queue[DeviceEvent]) -> None:
    """An event sent twice with the same id reaches the queue once."""
    sim.inject(FaultSpec(FaultKind.REPEAT_EVENT))
    _shuffled(shuffler, events)
    shuffler.status()  # a round trip after the repeat has been read
    assert shuffler.stats.duplicate_events == 1
    assert not any(isinstance(e, ShuffleDone) for e in drain(events))


def test_unacked_event_is_resent(shuffler: Shuffler, sim: ShufflerSim,
                                 events: queue.Queue[DeviceEvent]) -> None:
    """Events are resent until acknowledged; the host acknowledges them so none stay pending."""
    _shuffled(shuffler, events)
    shuffler.status()
    assert sim.unacked_events == 0


def test_disconnect_and_reconnect(shuffler: Shuffler, sim: ShufflerSim,
                                  events: queue.Queue[DeviceEvent]) -> None:
    """Unplug: DeviceOffline once; replug: DeviceOnline; commands work again."""
    sim.inject(FaultSpec(FaultKind.DISCONNECT, 0.3))
    next_event(events, DeviceOffline)
    next_event(events, DeviceOnline)
    assert shuffler.identify().serial == "SIM-HF3-0001"
    assert not any(isinstance(e, DeviceOffline) for e in drain(events))


def test_a_command_is_never_sent_again_on_the_next_link(shuffler: Shuffler, served: Served,
                                                       sim: ShufflerSim,
                                                       events: queue.Queue[DeviceEvent]) -> None:
    """A write that names the link it began on is refused once that link has gone: a retry
    reaching the replugged device would be a new command to it (it forgot the sequence number
    with the link), a hand dispensed that its caller was told had failed."""
    epoch = shuffler.link_epoch
    served.server.unplug()
    next_event(events, DeviceOffline)
    served.server.replug()
    next_event(events, DeviceOnline)
    assert shuffler.link_epoch > epoch
    _shuffled(shuffler, events)
    with pytest.raises(DeviceDisconnected, match="not sent again"):
        shuffler.write(encode_message(99, DispenseHand()), epoch=epoch)
    assert shuffler.status().state is DeviceState.READY  # the new link works
    assert MsgType.DISPENSE_HAND not in sim.executed and shuffler.meters().hands == 0


def test_a_disconnect_planned_at_a_hand_never_dispenses_it(
        shuffler: Shuffler, sim: ShufflerSim, events: queue.Queue[DeviceEvent]) -> None:
    """The cable comes out as hand 2 is asked for: the command fails, the device never formed
    the hand, and nothing is dispensed once it is back."""
    _shuffled(shuffler, events)
    sim.plan(FaultSpec(FaultKind.DISCONNECT, 0.1), hand=2)
    _hand(shuffler, events)
    next_event(events, HandTaken)
    with pytest.raises((DeviceDisconnected, DriverTimeoutError)):
        shuffler.dispense_hand()
    next_event(events, DeviceOffline)
    next_event(events, DeviceOnline)
    assert shuffler.status().state is DeviceState.READY
    assert shuffler.meters().hands == 1
    assert not any(isinstance(e, CardSetDispensed) for e in drain(events))


def test_reboot_mid_hand(shuffler: Shuffler, sim: ShufflerSim,
                         events: queue.Queue[DeviceEvent]) -> None:
    """A reboot after the dispense is acknowledged: DeviceRebooted with both boot ids, no hand,
    and the shuffler is back to idle (the table must void the round)."""
    _shuffled(shuffler, events)
    old = shuffler.boot_id
    sim.inject(FaultSpec(FaultKind.REBOOT))
    shuffler.dispense_hand()
    seen: list[DeviceEvent] = []
    rebooted = next_event(events, DeviceRebooted, seen=seen)
    assert rebooted.old_boot_id == old and rebooted.new_boot_id == sim.boot_id != old
    assert not any(isinstance(e, CardSetDispensed) for e in seen)
    assert shuffler.status().state is DeviceState.IDLE


def test_silence_marks_offline(served: Served, sim: ShufflerSim,
                               events: queue.Queue[DeviceEvent]) -> None:
    """No frame for the silence period (3 s in service, 0.3 s here) is DeviceOffline; the next
    frame brings DeviceOnline back. Silence is not a disconnect: the port stays open."""
    with Shuffler(served.url, events, silence=0.3) as shuffler:
        next_event(events, DeviceOnline)
        sim.inject(FaultSpec(FaultKind.STALL, 0.8))
        assert "no frame" in next_event(events, DeviceOffline).reason
        next_event(events, DeviceOnline)
        assert shuffler.transport.is_open


def test_timeout_when_device_mute(tmp_path: Path, events: queue.Queue[DeviceEvent]) -> None:
    """A port with nothing behind it: the command raises DriverTimeoutError, not a disconnect."""

    class Mute(ShufflerSim):
        def receive(self, data: bytes) -> None:
            pass

        def tick(self, now: float) -> None:
            pass

    served = serve(Mute(), "pty", tmp_path)
    try:
        with Shuffler(served.url, events, attempt_timeout=0.05, retries=1) as shuffler:
            assert shuffler.connected.wait(5)
            with pytest.raises(DriverTimeoutError, match="IDENTIFY"):
                shuffler.identify()
    finally:
        served.server.close()


def test_command_while_unplugged(shuffler: Shuffler, served: Served,
                                 events: queue.Queue[DeviceEvent]) -> None:
    """A command while the device is unplugged raises DeviceDisconnected at once."""
    served.server.unplug()
    next_event(events, DeviceOffline)
    with pytest.raises(DeviceDisconnected):
        shuffler.identify()
    served.server.replug()
    next_event(events, DeviceOnline)


def _own(sim: ShufflerSim, tmp_path: Path, events: queue.Queue[DeviceEvent]
         ) -> tuple[Served, Shuffler]:
    served = serve(sim, "pty", tmp_path)
    shuffler = Shuffler(served.url, events, backoff=(0.05, 0.2))
    shuffler.start()
    next_event(events, DeviceOnline)
    return served, shuffler


def test_fault_cleared_before_the_ack_is_accepted(tmp_path: Path,
                                                  events: queue.Queue[DeviceEvent]) -> None:
    """A device that sends FAULT_CLEARED ahead of the ACK to CLEAR_FAULT (older firmware) still
    clears: the host takes FAULT_CLEARED either side of the ACK (docs/protocols.md 5.5)."""
    sim = ShufflerSim(seed=2, conformance=Conformance.LEGACY)
    served, shuffler = _own(sim, tmp_path, events)
    try:
        sim.inject(FaultSpec(FaultKind.JAM))
        next_event(events, FaultRaised)
        shuffler.clear_fault()
        assert next_event(events, FaultCleared).fault is Fault.JAM
        assert shuffler.status().faults == frozenset()
    finally:
        shuffler.close()
        served.server.close()


class _StrayReplies(ShufflerSim):
    """Before every reply, a NAK and an ACK whose SEQ matches no command in flight."""

    def _reply(self, seq: int, type_: int, message: Message) -> None:
        for stray in (Nak(NakReason.BAD_STATE), Ack()):
            self._out(encode_message((seq + 100) % 255 + 1, stray))
        self._out(encode_message(0, Nak(NakReason.CRC)))
        super()._reply(seq, type_, message)


def test_replies_to_no_command_in_flight_are_ignored(tmp_path: Path,
                                                     events: queue.Queue[DeviceEvent]) -> None:
    """A NAK or ACK whose SEQ matches no command in flight (SEQ 0 included) is ignored: the
    command gets its own reply (docs/protocols.md 3.1)."""
    served, shuffler = _own(_StrayReplies(seed=2), tmp_path, events)
    try:
        assert shuffler.identify().serial == "SIM-HF3-0001"
        shuffler.shuffle()
        next_event(events, ShuffleDone)
        assert shuffler.stats.stale_replies >= 6
    finally:
        shuffler.close()
        served.server.close()
