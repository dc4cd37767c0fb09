"""Deferred acknowledgement (issue 5, "no card lost"): with ``deferred_ack=True`` the driver
hands every device event on with its origin (boot id, event id) but acknowledges it only when
told it is durable, so the simulated shuffler keeps it until then, exactly as real firmware
would (docs/protocols.md, "Events")."""

from __future__ import annotations

import queue
from collections.abc import Iterator

import pytest

from drivers.events import (
    CardSetDispensed, DeviceEvent, DeviceOffline, DeviceOnline, EventOrigin, ShuffleDone,
)
from drivers.shuffler import Shuffler
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.shuffler import ShufflerSim
from tests.drivers.sim_fixtures import (  # noqa: F401 - fixtures
    Served, drain, fixture_events, fixture_served, fixture_transport_kind, next_event, serve,
)
from tests.waiting import wait_until

RESEND_WAIT = 30.0  # a bound for a resend that is coming, generous under load
"""Long enough for several of the simulator's resends (every 0.3 s)."""


@pytest.fixture(name="sim")
def fixture_sim() -> ShufflerSim:
    return ShufflerSim(seed=11, shuffle_seconds=0.0, dispense_seconds=0.0, take_seconds=None)


@pytest.fixture(name="shuffler")
def fixture_shuffler(served: Served, events: queue.Queue[DeviceEvent]) -> Iterator[Shuffler]:
    shuffler = Shuffler(served.url, events, backoff=(0.02, 0.1), deferred_ack=True)
    shuffler.start()
    assert shuffler.connected.wait(5.0)
    yield shuffler
    shuffler.close()


def _shuffled(shuffler: Shuffler, events: queue.Queue[DeviceEvent]) -> ShuffleDone:
    shuffler.shuffle()
    return next_event(events, ShuffleDone)


def test_event_carries_its_origin(shuffler: Shuffler, sim: ShufflerSim,
                                  events: queue.Queue[DeviceEvent]) -> None:
    """Every event names the device boot and event id it came from, so that the journal can
    recognise a resend of it after a restart."""
    done = _shuffled(shuffler, events)
    shuffler.dispense_hand()
    hand = next_event(events, CardSetDispensed)
    assert done.origin == EventOrigin(sim.boot_id, 1)
    assert hand.origin == EventOrigin(sim.boot_id, 2)


def test_unacknowledged_event_stays_with_the_device(shuffler: Shuffler, sim: ShufflerSim,
                                                    events: queue.Queue[DeviceEvent]) -> None:
    """Until the host says the event is durable the device keeps resending it; the copies are
    not handed on a second time."""
    done = _shuffled(shuffler, events)
    wait_until(lambda: shuffler.stats.duplicate_events >= 2, "two duplicate events",
               timeout=RESEND_WAIT)
    assert sim.unacked_events == 1
    assert not [e for e in drain(events) if isinstance(e, ShuffleDone)]
    assert done.origin is not None
    assert shuffler.acknowledge(done.origin) is True
    wait_until(lambda: sim.unacked_events == 0, "sim.unacked_events == 0", timeout=RESEND_WAIT)


def test_copy_after_a_lost_acknowledgement_is_answered(
        shuffler: Shuffler, sim: ShufflerSim, events: queue.Queue[DeviceEvent]) -> None:
    """The cable is out when the journal acknowledges: the ACK never reaches the device, which
    resends the event when it is back. That copy is answered at once (or the device would keep
    it for ever) and is still not handed on a second time."""
    done = _shuffled(shuffler, events)
    assert done.origin is not None
    # unplugged long enough that the acknowledgement surely falls inside it, however loaded
    # the machine (0.5 s let a slow run reconnect first, and the ACK then got through)
    sim.inject(FaultSpec(FaultKind.DISCONNECT, 3.0))
    next_event(events, DeviceOffline)
    assert shuffler.acknowledge(done.origin) is True
    assert sim.unacked_events == 1
    next_event(events, DeviceOnline)
    wait_until(lambda: sim.unacked_events == 0, "sim.unacked_events == 0", timeout=RESEND_WAIT)
    shuffler.status()  # a round trip after the copy has been read
    assert not [e for e in drain(events) if isinstance(e, ShuffleDone)]


def test_redeliver_hands_the_next_resend_on(shuffler: Shuffler, sim: ShufflerSim,
                                            events: queue.Queue[DeviceEvent]) -> None:
    """When the event could not be recorded (the journal refused it) the next resend reaches
    the table again instead of being dropped as a copy: the card is retried, not lost."""
    done = _shuffled(shuffler, events)
    assert done.origin is not None
    shuffler.redeliver(done.origin)
    again = next_event(events, ShuffleDone, timeout=RESEND_WAIT)
    assert again.origin == done.origin
    assert sim.unacked_events == 1


def test_acknowledging_an_earlier_boot_sends_nothing(shuffler: Shuffler, sim: ShufflerSim,
                                                     events: queue.Queue[DeviceEvent]) -> None:
    """After a reboot the device has forgotten its old events; an acknowledgement for one of
    them is refused (it could name a new event with the same id)."""
    done = _shuffled(shuffler, events)
    assert done.origin is not None
    old_boot = sim.boot_id
    sim.reboot()
    wait_until(lambda: shuffler.boot_id not in (None, old_boot), "a new boot id",
               timeout=RESEND_WAIT)
    assert shuffler.acknowledge(done.origin) is False


def test_immediate_ack_remains_the_default(served: Served, sim: ShufflerSim,
                                           events: queue.Queue[DeviceEvent]) -> None:
    """Without ``deferred_ack`` (probe, bench, tests) every event is acknowledged on receipt."""
    with Shuffler(served.url, events, backoff=(0.02, 0.1)) as shuffler:
        assert shuffler.connected.wait(5.0)
        _shuffled(shuffler, events)
        wait_until(lambda: sim.unacked_events == 0, "sim.unacked_events == 0", timeout=RESEND_WAIT)


def test_backlog_arrives_before_the_online_report(served: Served, sim: ShufflerSim,
                                                  events: queue.Queue[DeviceEvent]) -> None:
    """A host that connects says RESYNC: the device resends what it holds, in id order, and
    only then is it reported online, so a hand dispensed while no controller ran reaches the
    table ahead of anything new (docs/protocols.md, "Resync on connect")."""
    first: queue.Queue[DeviceEvent] = queue.Queue()
    with Shuffler(served.url, first, backoff=(0.02, 0.1), deferred_ack=True) as gone:
        next_event(first, DeviceOnline)
        gone.shuffle()
        next_event(first, ShuffleDone)
        gone.dispense_hand()
        next_event(first, CardSetDispensed)
    assert sim.unacked_events == 2
    with Shuffler(served.url, events, backoff=(0.02, 0.1), deferred_ack=True) as shuffler:
        online = next_event(events, DeviceOnline, seen=(before := []))
        assert [type(e).__name__ for e in before] == ["ShuffleDone", "CardSetDispensed"]
        assert [e.origin.event_id for e in before] == [1, 2]
        assert online.boot_id == sim.boot_id and shuffler.resynced.is_set()


def test_device_without_resync_still_comes_online(served: Served, sim: ShufflerSim,
                                                  events: queue.Queue[DeviceEvent]) -> None:
    """Older firmware NAKs RESYNC: the host notes it and takes the device as it comes."""
    sim.answers_resync = False
    with Shuffler(served.url, events, backoff=(0.02, 0.1), deferred_ack=True) as shuffler:
        next_event(events, DeviceOnline)
        assert shuffler.resynced.is_set()
        assert _shuffled(shuffler, events).origin is not None
