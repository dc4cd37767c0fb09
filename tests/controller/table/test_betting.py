"""Betting: what may be placed, withdrawn and when; roles (RWS-NC3P 5.8, MBS-R3P 5.2-5.3,
RWS-3CP 5.2, MBS-3P 5.5-5.6)."""

from __future__ import annotations

import pytest

from controller.settlement.model import BetLimit
from controller.table import commands as cmd
from controller.table import events as ev
from controller.games.catalog import get_game
from tests.controller.table.conftest import (DEALER, GAMES_AND_DEVICES, LIVE_BURNS,
                                            standard_hands)

NO_MORE_BETS = {"rws-nc-three-pictures": "RWS-NC3P 5.8", "mbs-three-pictures": "MBS-3P 5.5",
                "mbs-royal-three-pictures": "MBS-R3P 5.2", "rws-three-card-poker": "RWS-3CP 5.2"}
NO_WITHDRAW = {"rws-nc-three-pictures": "RWS-NC3P 5.8", "mbs-three-pictures": "MBS-3P 5.6",
               "mbs-royal-three-pictures": "MBS-R3P 5.3", "rws-three-card-poker": "RWS-3CP 5.2"}


@pytest.mark.parametrize("game", sorted(NO_MORE_BETS))
def test_no_wager_placed_after_no_more_bets(make, game) -> None:
    """After "No more bets" no wager may be placed or increased (RWS-NC3P 5.8, MBS-3P 5.5,
    MBS-R3P 5.2, RWS-3CP 5.2): refused with the clause, and the layout is unchanged."""
    table = make(game)
    table.open()
    table.default_bets()
    table.close()
    before = dict(table.machine.wagers)
    out = table.bet("3", "ante" if "poker" in game else "main")
    refused = [e for e in out if isinstance(e, ev.WagerRefused)]
    assert refused and NO_MORE_BETS[game] in refused[0].reason
    assert table.machine.wagers == before


@pytest.mark.parametrize("game", sorted(NO_WITHDRAW))
def test_no_wager_withdrawn_after_no_more_bets(make, game) -> None:
    """After "No more bets" no wager may be withdrawn (RWS-NC3P 5.8, MBS-3P 5.6, MBS-R3P 5.3,
    RWS-3CP 5.2)."""
    table = make(game)
    table.open()
    table.default_bets()
    table.close()
    out = table.send(cmd.WithdrawWager(**DEALER, wager_id="w1"))
    assert NO_WITHDRAW[game] in out[-1].reason
    assert "w1" in table.machine.wagers


def test_withdraw_while_betting(make) -> None:
    """Before the close a wager may be withdrawn (RWS-NC3P 5.8 forbids it only after)."""
    table = make("rws-nc-three-pictures")
    table.open()
    table.bet("1", "main")
    out = table.send(cmd.WithdrawWager(**DEALER, wager_id="w1"))
    assert isinstance(out[-1], ev.WagerWithdrawn)
    assert table.machine.wagers == {}


@pytest.mark.parametrize("game,side,clause", [
    ("rws-nc-three-pictures", "tie", "RWS-NC3P 3.9"),
    ("mbs-three-pictures", "three_pictures", "MBS-3P 3.3"),
    ("mbs-royal-three-pictures", "royal_pictures", "MBS-R3P 3.5"),
    ("rws-three-card-poker", "progressive", "RWS-3CP 3.4"),
])
def test_side_wager_needs_initial_wager(make, game, side, clause) -> None:
    """A side wager may only stand on a box holding the initial wager it needs."""
    table = make(game)
    table.open()
    out = table.bet("1", side, 500)
    assert isinstance(out[0], ev.WagerRefused) and clause in out[0].reason


def test_mbs_r3p_three_wagers_per_area(make) -> None:
    """MBS-R3P 3.9: at most three wagers per playing area."""
    table = make("mbs-royal-three-pictures")
    table.open()
    for _ in range(3):
        assert isinstance(table.bet("1", "main")[0], ev.WagerAccepted)
    out = table.bet("1", "main")
    assert isinstance(out[0], ev.WagerRefused) and "MBS-R3P 3.9" in out[0].reason


def test_rws_nc3p_excess_over_box_maximum_rejected(make) -> None:
    """RWS-NC3P 5.1: the excess beyond the box maximum noticed before the close is rejected:
    the wager is accepted as placed, then cut to what is left (100 returned), in that order; a
    wager with nothing left for it is refused and changes nothing."""
    table = make("rws-nc-three-pictures", limits={"main": BetLimit(100, 1000)})
    table.open()
    assert isinstance(table.bet("1", "main", 800)[0], ev.WagerAccepted)
    out = table.bet("1", "main", 300)
    assert [type(e).__name__ for e in out] == ["WagerAccepted", "WagerReduced"]
    assert (out[1].wager_id, out[1].amount, out[1].returned) == ("w2", 200, 100)
    assert "RWS-NC3P 5.1" in out[1].reason
    out = table.bet("1", "main", 300)
    assert isinstance(out[0], ev.WagerRefused) and "RWS-NC3P 5.1" in out[0].reason
    assert {w.id: w.amount for w in table.machine.wagers.values()} == {"w1": 800, "w2": 200}


def test_play_wager_cannot_be_placed_directly(make) -> None:
    """RWS-3CP 3.8.2: the Play wager comes from a play decision after the deal."""
    table = make("rws-three-card-poker")
    table.open()
    table.bet("1", "ante")
    out = table.bet("1", "play")
    assert isinstance(out[0], ev.WagerRefused) and "3.8.2" in out[0].reason


@pytest.mark.parametrize("game,device", GAMES_AND_DEVICES)
def test_supervisor_decision_needs_supervisor_role(make, game, device) -> None:
    """Decisions the rules give a Pit Supervisor or above (RWS-NC3P 5.11, 5.17; MBS-R3P 6.1;
    LIVE-3P T&C 1, 5, 6) are refused from a dealer, with the reason."""
    table = make(game, device)
    table.ready()
    out = table.send(cmd.SupervisorDecision(**DEALER, action=cmd.SupervisorAction.VOID,
                                            reason="try"))
    assert isinstance(out[-1], ev.CommandRefused)
    assert "Pit Supervisor" in out[-1].reason
    assert table.state == "shuffled"


def test_bad_inputs_are_refused_and_lose_nothing(make) -> None:
    """An input the machine cannot use is refused with a reason; the round goes on."""
    table = make("rws-nc-three-pictures")
    table.open()
    table.bet("1", "main")
    for bad in (object(), cmd.PlaceWager(**DEALER, wager_id="x", position="1", bet="nope",
                                         amount=5),
                cmd.PlaceWager(**DEALER, wager_id="y", position="1", bet="main", amount=-5),
                cmd.SettleRound(**DEALER), cmd.OpenRound(**DEALER)):
        out = table.send(bad)
        assert isinstance(out[-1], ev.CommandRefused), bad
    assert list(table.machine.wagers) == ["w1"]
    assert table.state == "betting"


def _orders(*specs: tuple[str, str, str, int]) -> tuple[cmd.WagerOrder, ...]:
    return tuple(cmd.WagerOrder(wager_id=i, position=p, bet=b, amount=a) for i, p, b, a in specs)


def test_a_batch_judges_each_wager_as_one_placed_alone(make) -> None:
    """``PlaceWagers`` (the studio's batch): each wager accepted or refused, in order, with the
    reason a ``PlaceWager`` of it alone gets; the refused ones leave the layout unchanged and
    the rest stand. One input, so one journal record for the whole batch, and the accepted
    wagers are one ``WagersAccepted`` (one output record), each with its terms."""
    table = make("rws-three-card-poker")
    table.open()
    out = table.send(cmd.PlaceWagers(**DEALER, wagers=_orders(
        ("a1", "1", "ante", 1000), ("p1", "2", "play", 500), ("a2", "9", "ante", 1000),
        ("a1", "3", "ante", 1000), ("a3", "3", "ante", 1000))))
    assert not any(isinstance(e, ev.WagerAccepted) for e in out)
    batches = [e for e in out if isinstance(e, ev.WagersAccepted)]
    assert len(batches) == 1
    assert [(w.id, w.position, w.bet, w.amount) for w in batches[0].wagers] == [
        ("a1", "1", "ante", 1000), ("a3", "3", "ante", 1000)]
    refused = {e.wager_id: e.reason for e in out if isinstance(e, ev.WagerRefused)}
    assert set(table.machine.wagers) == {"a1", "a3"}
    alone = make("rws-three-card-poker")
    alone.open()
    for wager_id, position, bet in (("p1", "2", "play"), ("a2", "9", "ante")):
        reason = alone.send(cmd.PlaceWager(**DEALER, wager_id=wager_id, position=position,
                                           bet=bet, amount=1000))[-1].reason
        assert refused[wager_id].split(" (")[0] == reason.split(" (")[0]
    assert "already on the layout" in refused["a1"]
    assert not any(isinstance(e, ev.CommandRefused) for e in out)


def test_a_batchs_records_keep_the_tables_order_around_a_reduction(make) -> None:
    """RWS-NC3P 5.1 inside one batch: the Standing Player's wager is announced accepted
    before the Seated Player's wager cuts it back, as two single placements would record it
    (accepted, reduced, accepted), so a reader of the records sees the stake that was cut."""
    table = make("rws-nc-three-pictures", limits={"main": BetLimit(500, 10_000)})
    table.open()
    out = table.send(cmd.PlaceWagers(**DEALER, wagers=(
        cmd.WagerOrder(wager_id="x1", position="2", bet="main", amount=1_000),
        cmd.WagerOrder(wager_id="bob", position="1", bet="main", amount=8_000, player="bob",
                       seated=False),
        cmd.WagerOrder(wager_id="ann", position="1", bet="main", amount=5_000, player="ann",
                       seated=True))))
    shown = [(type(e).__name__, [w.id for w in e.wagers] if isinstance(e, ev.WagersAccepted)
              else e.wager_id) for e in out]
    assert shown == [("WagersAccepted", ["x1", "bob"]), ("WagerReduced", "bob"),
                     ("WagersAccepted", ["ann"])]
    assert {w.id: w.amount for w in table.machine.active_wagers()} == {
        "x1": 1_000, "bob": 5_000, "ann": 5_000}


def test_a_batch_after_no_more_bets_is_refused_whole(make) -> None:
    """After "No more bets" the batch is one refusal citing the clause, and nothing is placed."""
    table = make("rws-nc-three-pictures")
    table.open()
    table.default_bets()
    table.close()
    before = dict(table.machine.wagers)
    out = table.send(cmd.PlaceWagers(**DEALER, wagers=_orders(("x1", "3", "main", 100))))
    assert isinstance(out[-1], ev.CommandRefused) and "RWS-NC3P 5.8" in out[-1].reason
    assert table.machine.wagers == before


_BATCH_REFUSALS = [
    # (game, the refused row, words of the table's reason)
    ("live-three-pictures", ("bad", "banker", "win", 1000), "has no position 'banker' for win"),
    ("live-three-pictures", ("bad", "p2", "dragon", 1000), "has no bet 'dragon'"),
    ("live-three-pictures", ("bad", "p2", "win", 100_001), "outside the table limits"),
    ("live-three-pictures", ("bad", "p2", "win", 50), "outside the table limits"),
    ("rws-three-card-poker", ("bad", "2", "ante", 0), "positive whole number"),
    ("rws-three-card-poker", ("bad", "2", "progressive", 700), "fixed"),
    ("rws-three-card-poker", ("bad", "2", "pair_plus", 100_001), "outside the table limits"),
    ("mbs-three-pictures", ("bad", "2", "tie", 100_001), "outside the table limits"),
]


@pytest.mark.parametrize(("game", "row", "words"), _BATCH_REFUSALS)
def test_a_row_refused_among_good_rows_is_the_only_one_not_placed(make, game: str, row: tuple,
                                                                  words: str) -> None:
    """Issue 33, finding 1: a row refused by the rule set or the limits (an unknown bet, a bet
    not offered at that position, an amount outside the limits or not a positive whole number,
    a progressive not at its fixed stake) is refused alone, with its own reason; the rows
    before and after it are placed, the batch is not refused whole, and what the outcome says
    is exactly what "No more bets" closes and what is settled."""
    limits = {bet: BetLimit(100, 100_000) for bet in get_game(game).bets}
    table = make(game, limits=limits)
    table.open()
    first = "win" if game == "live-three-pictures" else (
        "ante" if game == "rws-three-card-poker" else "main")
    box = "p1" if game == "live-three-pictures" else "1"
    out = table.send(cmd.PlaceWagers(**DEALER, wagers=_orders(
        ("alice", box, first, 1000), row, ("carol", box.replace("1", "2"), first, 1000))))
    assert not any(isinstance(e, ev.CommandRefused) for e in out), out
    accepted = [w.id for e in out if isinstance(e, ev.WagersAccepted) for w in e.wagers]
    refused = {e.wager_id: e.reason for e in out if isinstance(e, ev.WagerRefused)}
    assert accepted == ["alice", "carol"] and list(refused) == ["bad"]
    assert words in refused["bad"]
    assert set(table.machine.wagers) == {"alice", "carol"}
    table.close()
    assert {w.id for w in table.last(ev.BetsClosed).wagers} == {"alice", "carol"}
    table.shuffle()
    table.deal(standard_hands(game), burns=LIVE_BURNS if game == "live-three-pictures" else ())
    table.finish()
    settled = {wager_id.split(":")[0] for wager_id in table.outcomes()}  # 3CP: "alice:play"
    assert settled == {"alice", "carol"}
