"""BeeTekShoe against BeeTekShoeSim over real ptys and TCP: cards, burns, alarms, faults."""

from __future__ import annotations

import time

import pytest

from controller.games.cards import parse_card
from drivers.events import (
    CardRead,
    DeviceOffline,
    DeviceWarning,
    DoubleFeed,
    Fault,
    FaultRaised,
    LinkError,
    NoRead,
)
from drivers.shoe.beetek import BeeTekShoe
from firmware_sim.beetek import BeeTekShoeSim
from firmware_sim.faults import FaultKind, FaultSpec

from .conftest import FAST_BACKOFF
from .waiting import assert_quiet, online, take, wait_for


@pytest.fixture(name="sim_options", params=[{}, {"suit_first": True, "ten": "T"}],
                ids=["rank-first", "suit-first"])
def fixture_sim_options(request: pytest.FixtureRequest) -> dict:
    """Both field orders the shoe is seen sending: ``4S``/``10D`` and ``S4``/``DT``."""
    return request.param


@pytest.fixture(name="sim")
def fixture_sim(sim_options) -> BeeTekShoeSim:
    return BeeTekShoeSim(seed=11, **sim_options)


@pytest.fixture(name="shoe")
def fixture_shoe(serve, sim, events):
    served = serve(sim)
    shoe = BeeTekShoe(served.url, events, backoff=FAST_BACKOFF)
    shoe.start()
    online(events, sim)
    yield shoe
    shoe.close()


def test_all_52_cards_are_read_in_order(shoe, sim, events):
    """A whole shoe dealt card by card arrives as 52 CardReads, every card once."""
    drawn = [sim.draw() for _ in range(52)]
    reads = take(events, 52)
    assert [e.card for e in reads] == drawn and len(set(drawn)) == 52
    assert reads[-1].index_in_shoe == 52


def test_burn_cards_are_marked(shoe, sim, events):
    """Cards from the [Manual Burn Cards] section are CardRead with burn=True."""
    burned = sim.draw(burn=True)
    dealt = sim.draw()
    first, second = take(events, 2)
    assert (first.card, first.burn) == (burned, True)
    assert (second.card, second.burn) == (dealt, False)


def test_card_not_read(shoe, sim, events):
    """<Game> is a NoRead; the E3 alarm that follows is FaultRaised(UNREADABLE_CARD)."""
    sim.inject(FaultSpec(FaultKind.NO_READ))
    sim.draw()
    no_read, alarm = take(events, 2)
    assert isinstance(no_read, NoRead) and no_read.index_in_shoe == 1
    assert alarm.fault is Fault.UNREADABLE_CARD and "E3" in alarm.detail


@pytest.mark.parametrize(("kind", "fault"), [(FaultKind.EXPOSED, Fault.EXPOSED_CARD),
                                             (FaultKind.REVERSED, Fault.REVERSED_CARD)])
def test_exposed_and_reversed_alarms(shoe, sim, events, kind, fault):
    """Exposed (E5) and reversed (E4) alarms are FaultRaised with the matching fault."""
    sim.inject(FaultSpec(kind))
    sim.draw()
    assert wait_for(events, FaultRaised).fault is fault


def test_double_card_is_double_feed(shoe, sim, events):
    """Alarm E6 (two cards out together) is a DoubleFeed event."""
    sim.inject(FaultSpec(FaultKind.DOUBLE_READ))
    sim.draw()
    assert isinstance(wait_for(events, DoubleFeed), DoubleFeed)


def test_repeated_message_is_one_card(shoe, sim, events):
    """The same card line twice is one CardRead and a double_read warning."""
    sim.inject(FaultSpec(FaultKind.REPEAT_EVENT))
    card = sim.draw()
    read, warning = take(events, 2)
    assert read.card == card and warning.code == "double_read"
    assert_quiet(events)


def test_duplicate_card(shoe, sim, events):
    """A card already dealt is FaultRaised(DUPLICATE_CARD), never a second CardRead."""
    first = sim.draw()
    sim.draw()
    sim.inject(FaultSpec(FaultKind.DUPLICATE))
    sim.draw()
    take(events, 2)
    event = wait_for(events, FaultRaised)
    assert event.fault is Fault.DUPLICATE_CARD and first.code in event.detail


def test_truncated_message_then_next_card(shoe, sim, events):
    """A truncated message is a LinkError; the next card still arrives."""
    sim.inject(FaultSpec(FaultKind.TRUNCATE))
    sim.draw()
    card = sim.draw()
    error, read = take(events, 2)
    assert isinstance(error, LinkError) and read.card == card


def test_warning_is_device_warning(shoe, sim, events):
    """<W0x01> is a DeviceWarning carrying the code."""
    sim.warn("W0x01")
    assert wait_for(events, DeviceWarning).code == "W0x01"


def test_stall_then_burst(shoe, sim, events):
    """A stalled shoe's cards all arrive, in order, after the stall."""
    sim.inject(FaultSpec(FaultKind.STALL, 0.3))
    started = time.monotonic()
    drawn = [sim.draw() for _ in range(4)]
    assert [e.card for e in take(events, 4)] == drawn
    assert time.monotonic() - started >= 0.25


def test_unplug_and_replug(shoe, sim, events):
    """A disconnect is DeviceOffline, then DeviceOnline; reading resumes."""
    sim.inject(FaultSpec(FaultKind.DISCONNECT, 0.2))
    sim.draw()
    wait_for(events, DeviceOffline)
    online(events, sim)
    card = sim.draw()
    assert wait_for(events, CardRead).card == card


def test_unknown_alarm_is_a_warning(shoe, sim, events):
    """An alarm code not in the table is a DeviceWarning, not dropped and not a crash."""
    sim.output(b" [GameAlarm]<Alarm:E9 Lid Open> ")
    event = wait_for(events, DeviceWarning)
    assert (event.code, event.text) == ("E9", "Lid Open")


def test_ten_spellings(shoe, sim, events):
    """Ten arrives as 10 or T, before or after the suit."""
    sim.output(b" [Game]<Card:10D>  [Game]<Card:HT> ")
    assert [e.card for e in take(events, 2)] == [parse_card("TD"), parse_card("TH")]
