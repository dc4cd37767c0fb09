"""The framed shoe driver against the simulated framed shoe over real ptys and TCP sockets."""

from __future__ import annotations

import queue
from collections.abc import Iterator

import pytest

from drivers.events import (
    ButtonPressed, CardRead, DeviceEvent, DeviceOnline, DoubleFeed, Fault, FaultCleared,
    FaultRaised, ForeignCard, NoRead,
)
from drivers.framed.messages import Button
from drivers.shoe import open_shoe
from drivers.shoe.framed import FramedShoe
from firmware_sim.faults import FaultKind, FaultSpec, FaultSpecError
from firmware_sim.shoe_framed import FramedShoeSim
from tests.drivers.sim_fixtures import (  # noqa: F401 - fixtures
    Served, fixture_events, fixture_served, fixture_transport_kind, next_event, serve,
)


@pytest.fixture(name="sim")
def fixture_sim() -> FramedShoeSim:
    return FramedShoeSim(seed=11)


@pytest.fixture(name="shoe")
def fixture_shoe(served: Served, events: queue.Queue[DeviceEvent]) -> Iterator[FramedShoe]:
    shoe = FramedShoe(served.url, events, backoff=(0.05, 0.2))
    with shoe:
        next_event(events, DeviceOnline)
        yield shoe


def test_cards_in_order_with_index(shoe: FramedShoe, sim: FramedShoeSim,
                                   events: queue.Queue[DeviceEvent]) -> None:
    """Each draw is one CardRead with the card drawn and its index in the shoe."""
    drawn = [sim.draw() for _ in range(5)]
    reads = [next_event(events, CardRead) for _ in range(5)]
    assert [r.card for r in reads] == drawn
    assert [r.index_in_shoe for r in reads] == [1, 2, 3, 4, 5]
    assert shoe.identify().model == "RS-1 reading shoe"


@pytest.mark.parametrize(("kind", "event_type"), [
    (FaultKind.NO_READ, NoRead), (FaultKind.DOUBLE_READ, DoubleFeed),
    (FaultKind.FOREIGN, ForeignCard), (FaultKind.REVERSED, FaultRaised),
])
def test_draw_faults(shoe: FramedShoe, sim: FramedShoeSim, events: queue.Queue[DeviceEvent],
                     kind: FaultKind, event_type: type) -> None:
    """No-read, double feed, foreign card and reversed card each give their own event."""
    sim.inject(FaultSpec(kind))
    sim.draw()
    event = next_event(events, event_type)
    if isinstance(event, ForeignCard):
        assert event.barcode == "9990417"


def test_exposed_and_duplicate(shoe: FramedShoe, sim: FramedShoeSim,
                               events: queue.Queue[DeviceEvent]) -> None:
    """An exposed card is flagged; a duplicate is reported as read (the table must catch it)."""
    first = sim.draw()
    next_event(events, CardRead)
    sim.inject(FaultSpec(FaultKind.EXPOSED))
    sim.draw()
    assert next_event(events, CardRead).exposed
    sim.inject(FaultSpec(FaultKind.DUPLICATE))
    sim.draw()
    assert next_event(events, CardRead).card == first


def test_lid_open_and_clear(shoe: FramedShoe, sim: FramedShoeSim,
                            events: queue.Queue[DeviceEvent]) -> None:
    """Lid open is FaultRaised(LID_OPEN) and a status fault bit; clear_fault closes it."""
    sim.inject(FaultSpec(FaultKind.DOOR_OPEN))
    assert next_event(events, FaultRaised).fault is Fault.LID_OPEN
    assert shoe.status().faults == {Fault.LID_OPEN}
    shoe.clear_fault()
    assert next_event(events, FaultCleared).fault is Fault.LID_OPEN


def test_button(shoe: FramedShoe, sim: FramedShoeSim, events: queue.Queue[DeviceEvent]) -> None:
    """A button press is ButtonPressed with the button's name."""
    sim.press(Button.BURN)
    assert next_event(events, ButtonPressed).button == "burn"


def test_repeated_event_once(shoe: FramedShoe, sim: FramedShoeSim,
                             events: queue.Queue[DeviceEvent]) -> None:
    """A card event sent twice is one CardRead."""
    sim.inject(FaultSpec(FaultKind.REPEAT_EVENT))
    sim.draw()
    sim.draw()
    assert next_event(events, CardRead).index_in_shoe == 1
    assert next_event(events, CardRead).index_in_shoe == 2


def test_events_drawn_while_unplugged_arrive_in_order(served: Served, sim: FramedShoeSim,
                                                      events: queue.Queue[DeviceEvent]) -> None:
    """Cards drawn while no host is connected are delivered, in order, when it connects."""
    drawn = [sim.draw() for _ in range(3)]
    with FramedShoe(served.url, events):
        assert [next_event(events, CardRead).card for _ in range(3)] == drawn


def test_open_shoe_framed(served: Served, events: queue.Queue[DeviceEvent]) -> None:
    """open_shoe('framed', ...) builds a FramedShoe."""
    shoe = open_shoe("framed", served.url, events)
    assert isinstance(shoe, FramedShoe)


def test_unsupported_fault_is_clear_error(sim: FramedShoeSim) -> None:
    """A fault the shoe cannot produce is a FaultSpecError naming it."""
    with pytest.raises(FaultSpecError, match="jam"):
        sim.inject(FaultSpec(FaultKind.JAM))
