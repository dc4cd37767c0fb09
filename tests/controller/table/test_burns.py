"""LIVE-3P T&C 1 burn cards at the round machine: a short burn from a shoe that marks its burns,
the supervisor's reconstruction, a card the supervisor enters after a no-read while burns are
due, and a shoe that cannot mark burns (issue 23, finding 7)."""

from __future__ import annotations

from collections.abc import Callable

from controller.table import commands as cmd
from controller.table import events as ev
from drivers import events as dev
from tests.controller.table.conftest import LIVE_BURNS, SUPERVISOR, Harness, cards

GAME = "live-three-pictures"
DEAL = ["KS", "2D", "4S", "5S", "QH", "3C", "4H", "3H", "9C", "AH", "TD", "TC"]
"""Twelve cards in dealing order: P1 KS QH 9C, P2 2D 3C AH, P3 4S 4H TD, Banker 5S 3H TC."""


def _read(table: Harness, code: str, burn: bool = False) -> list[ev.RoundEvent]:
    return table.send(dev.CardRead(device="shoe", card=cards(code)[0], burn=burn))


def test_unmarked_card_while_burns_are_due_is_a_short_burn(make: Callable[..., Harness]) -> None:
    """Three marked burns, then a card from the game section: a burn error before Player 1's
    second card (reconstruction), the card in no hand and not yet a burn."""
    table = make(GAME)
    table.ready()
    for code in LIVE_BURNS[:3]:
        _read(table, code, burn=True)
    events = _read(table, LIVE_BURNS[3])
    assert table.state == "hold"
    assert [e.kind for e in table.of(ev.DealingError)] == ["burn_error"]
    assert "short burn: 6C" in table.last(ev.DealingError).detail
    required = table.last(ev.SupervisorRequired)
    assert (required.clause, required.options) == ("LIVE-3P T&C 1", ("reconstruct",))
    assert not any(isinstance(e, (ev.BurnCard, ev.CardAssigned)) for e in events)


def test_reconstruction_makes_the_unmarked_card_the_last_burn(
        make: Callable[..., Harness]) -> None:
    """``reconstruct``: the card held out becomes burn 4, the deal starts with the next card at
    Player 1, and the round settles on the hands of the intended sequence."""
    table = make(GAME)
    table.ready()
    for code in LIVE_BURNS[:3]:
        _read(table, code, burn=True)
    _read(table, LIVE_BURNS[3])
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.RECONSTRUCT))
    assert [(b.card.code, b.index) for b in table.of(ev.BurnCard)] == [
        (code, i) for i, code in enumerate(LIVE_BURNS)]
    assert table.state == "dealing"
    for code in DEAL:
        _read(table, code)
    assert table.machine.deal is not None
    assert [c.code for c in table.machine.deal.hands["p1"]] == ["KS", "QH", "9C"]
    assert [c.code for c in table.machine.deal.hands["banker"]] == ["5S", "3H", "TC"]
    assert isinstance(table.finish(), ev.RoundSettled)


def test_first_card_of_the_round_unmarked_is_a_short_burn(make: Callable[..., Harness]) -> None:
    """A shoe left in its game section: the round's very first card, unmarked, is a burn error
    too (no burn at all), not burn 1."""
    table = make(GAME)
    table.ready()
    _read(table, "KS")
    assert table.state == "hold" and table.of(ev.BurnCard) == []


def test_card_entered_after_a_no_read_completes_the_burns(make: Callable[..., Harness]) -> None:
    """A no-read on the fourth burn: the card the supervisor enters is the burn the dealer drew
    (cards entered in order complete the burns still due), not a short burn."""
    table = make(GAME)
    table.ready()
    for code in LIVE_BURNS[:3]:
        _read(table, code, burn=True)
    table.send(dev.NoRead(device="shoe"))
    assert table.state == "hold"
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.ORDER,
                                      cards=cards(LIVE_BURNS[3])))
    assert [b.card.code for b in table.of(ev.BurnCard)] == LIVE_BURNS
    assert table.state == "dealing" and table.of(ev.DealingError)[-1].kind == "no_read"


def test_a_device_that_cannot_mark_burns_burns_the_first_four(
        make: Callable[..., Harness]) -> None:
    """``burns_marked=False`` (a barcode scanner): the first four cards are the burns, marked
    or not, and P1 gets the fifth."""
    table = make(GAME, burns_marked=False)
    table.ready()
    for code in [*LIVE_BURNS, *DEAL]:
        _read(table, code)
    assert [b.card.code for b in table.of(ev.BurnCard)] == LIVE_BURNS
    assert table.of(ev.DealingError) == [] and table.state == "revealed"
