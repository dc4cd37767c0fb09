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
from drivers.framed.messages import DeviceState, NakReason
from drivers.shuffler import Shuffler
from firmware_sim.faults import FaultKind, FaultSpec
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


def test_exposed_card(shuffler: Shuffler, sim: ShufflerSim,
                      events: queue.Queue[DeviceEvent]) -> None:
    """An exposed card is named in CardSetDispensed.exposed and raises EXPOSED_CARD."""
    _shuffled(shuffler, events)
    sim.inject(FaultSpec(FaultKind.EXPOSED))
    hand = _hand(shuffler, events)
    assert hand.exposed == hand.cards[:1]
    assert next_event(events, FaultRaised).fault is Fault.EXPOSED_CARD


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
    shuffler dispenses exactly one hand."""
    _shuffled(shuffler, events)
    sim.inject(FaultSpec(FaultKind.LOST_ACK))
    shuffler.dispense_hand()
    next_event(events, CardSetDispensed)
    next_event(events, HandTaken)
    assert sim.replays == 1 and shuffler.stats.retries == 1
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
