"""The driver contract against real hardware: skipped unless ``--shuffler-url`` or ``--shoe-url``
is given. Only what any conforming device must do is asserted (no fault injection, which only the
simulator can produce); the same contract runs against the simulator in test_shuffler.py and
test_framed_shoe.py."""

from __future__ import annotations

import queue
from collections.abc import Iterator

import pytest

from controller.games.cards import ensure_single_deck
from drivers.events import CardSetDispensed, DeviceEvent, DeviceOnline, HandTaken, ShuffleDone
from drivers.shoe.framed import FramedShoe
from drivers.shuffler import Shuffler
from tests.drivers.sim_fixtures import fixture_events, next_event  # noqa: F401 - fixtures

HARDWARE_WAIT = 60.0  # a real shuffle takes tens of seconds


@pytest.fixture(name="shuffler_url")
def fixture_shuffler_url(request: pytest.FixtureRequest) -> str:
    url = request.config.getoption("--shuffler-url")
    if not url:
        pytest.skip("no --shuffler-url given: real-shuffler contract tests skipped")
    return str(url)


@pytest.fixture(name="shoe_url")
def fixture_shoe_url(request: pytest.FixtureRequest) -> str:
    url = request.config.getoption("--shoe-url")
    if not url:
        pytest.skip("no --shoe-url given: real-shoe contract tests skipped")
    return str(url)


@pytest.fixture(name="real_shuffler")
def fixture_real_shuffler(shuffler_url: str, events: queue.Queue[DeviceEvent]
                          ) -> Iterator[Shuffler]:
    with Shuffler(shuffler_url, events) as shuffler:
        next_event(events, DeviceOnline, timeout=10.0)
        yield shuffler


def test_real_shuffler_identifies(real_shuffler: Shuffler) -> None:
    """A real shuffler answers identify with every identity field filled."""
    identity = real_shuffler.identify()
    assert identity.vendor and identity.model and identity.serial
    assert identity.firmware_version and identity.firmware_hash
    assert identity.protocol_version >= 1


def test_real_shuffler_deals_a_round(real_shuffler: Shuffler,
                                     events: queue.Queue[DeviceEvent]) -> None:
    """Shuffle counts a full deck, a dispensed set is three distinct cards, then it is taken."""
    real_shuffler.end_round()  # SHUFFLE only from idle (docs/protocols.md 5.2)
    real_shuffler.shuffle()
    done = next_event(events, ShuffleDone, timeout=HARDWARE_WAIT)
    assert done.counted == done.expected == 52
    real_shuffler.dispense_hand()
    hand = next_event(events, CardSetDispensed, timeout=HARDWARE_WAIT)
    assert len(hand.cards) == 3
    ensure_single_deck(hand.cards)
    assert next_event(events, HandTaken, timeout=HARDWARE_WAIT).hand_number == hand.hand_number
    real_shuffler.end_round()


def test_real_shoe_identifies(shoe_url: str, events: queue.Queue[DeviceEvent]) -> None:
    """A real framed shoe comes online and identifies itself."""
    with FramedShoe(shoe_url, events) as shoe:
        next_event(events, DeviceOnline, timeout=10.0)
        identity = shoe.identify()
        assert identity.vendor and identity.serial
