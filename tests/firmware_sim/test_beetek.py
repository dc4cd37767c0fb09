"""BeeTekShoeSim sends the field format byte for byte, in both orders, with its alarms."""

from __future__ import annotations

import pytest

from controller.games.cards import parse_card
from firmware_sim.beetek import BeeTekShoeSim
from firmware_sim.faults import FaultKind, FaultSpec, FaultSpecError


@pytest.fixture(name="sent")
def fixture_sent() -> list[bytes]:
    return []


def _sim(sent, **options) -> BeeTekShoeSim:
    sim = BeeTekShoeSim(**options)
    sim.attach(sent.append)
    return sim


def test_field_format_rank_first(sent):
    """A dealt card is `` [Game]<Card:RS> `` with ten as 10."""
    sim = _sim(sent, seed=1)
    sim.cards[0] = parse_card("TD")
    sim.draw()
    assert sent == [b" [Game]<Card:10D> "]


def test_field_format_suit_first_and_burn(sent):
    """Suit-first order with T, in burn mode, is `` [Manual Burn Cards]<Card:DT> ``."""
    sim = _sim(sent, seed=1, suit_first=True, ten="T", burn=True)
    sim.cards[0] = parse_card("TD")
    sim.draw()
    assert sent == [b" [Manual Burn Cards]<Card:DT> "]


@pytest.mark.parametrize(("kind", "expected"), [
    (FaultKind.NO_READ, b" [Game]<Game>  [GameAlarm]<Alarm:E3 Card Not Read> "),
    (FaultKind.REVERSED, b" [GameAlarm]<Alarm:E4 Card Reversed> "),
    (FaultKind.DOUBLE_READ, b" [GameAlarm]<Alarm:E6 Double Card> "),
])
def test_alarm_bytes(sent, kind, expected):
    """No-read, reversed and double-card faults send the documented alarm lines."""
    _sim(sent, seed=1, faults=[FaultSpec(kind)]).draw()
    assert sent == [expected]


def test_exposed_sends_card_then_alarm(sent):
    """An exposed card is still read, followed by alarm E5."""
    sim = _sim(sent, seed=1, faults=[FaultSpec(FaultKind.EXPOSED)])
    sim.cards[0] = parse_card("4S")
    sim.draw()
    assert sent == [b" [Game]<Card:4S>  [GameAlarm]<Alarm:E5 Card Exposed> "]


def test_warning_bytes(sent):
    """warn() sends a bare warning token."""
    _sim(sent, seed=1).warn("W0x01")
    assert sent == [b" <W0x01> "]


def test_foreign_does_not_apply():
    """The Bee-Tek line has no deck id, so the foreign fault is refused by name."""
    with pytest.raises(FaultSpecError, match="foreign"):
        BeeTekShoeSim(faults=[FaultSpec(FaultKind.FOREIGN)])
