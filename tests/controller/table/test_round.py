"""A whole round per game and dealing device, 3CP decisions, reveal order, table memory."""

from __future__ import annotations

import pytest

from controller.settlement.model import BetLimit
from controller.table import commands as cmd
from controller.table import events as ev
from tests.controller.table.conftest import (
    DEALER,
    GAMES_AND_DEVICES,
    LIVE_BURNS,
    cards,
    standard_hands,
)


@pytest.mark.parametrize("game,device", GAMES_AND_DEVICES)
def test_round_settles_with_settlement(make, game, device) -> None:
    """idle -> betting -> closed -> shuffled -> (burn) -> dealing -> ... -> settled, with the
    result computed by controller.settlement.settle from the dealt hands."""
    table = make(game, device)
    table.ready()
    table.deal(standard_hands(game), LIVE_BURNS if device == "live" else ())
    table.finish()
    assert table.state == "settled"
    outcomes = table.outcomes()
    assert outcomes["w1"] == "win" and outcomes["w2"] == "lose"
    settled = table.last(ev.RoundSettled)
    assert dict(settled.hands)[table.rules.dealer] == cards(*standard_hands(game)[table.rules.dealer])
    assigned = [(e.position, e.card.code) for e in table.of(ev.CardAssigned)]
    assert len(assigned) == 3 * len(standard_hands(game))


def test_live_burn_cards_are_not_dealt(make) -> None:
    """LIVE-3P T&C 1: the first 4 cards are burned; P1's first card is the fifth."""
    table = make("live-three-pictures")
    table.ready()
    table.deal(standard_hands("live-three-pictures"), LIVE_BURNS)
    assert [b.card.code for b in table.of(ev.BurnCard)] == LIVE_BURNS
    assert table.of(ev.CardAssigned)[0].position == "p1"
    assert table.of(ev.CardAssigned)[0].card.code == "KS"


def test_shoe_deal_alternates_boxes(make) -> None:
    """RWS-NC3P 3.12: one card at a time, box 1, box 2, dealer, three rounds."""
    table = make("rws-nc-three-pictures", "shoe")
    table.ready()
    table.deal(standard_hands("rws-nc-three-pictures"))
    order = [e.position for e in table.of(ev.CardAssigned)]
    assert order == ["1", "2", "dealer"] * 3


def _three_card_poker(make, hands=None):  # noqa: ANN001, ANN202
    table = make("rws-three-card-poker")
    table.open()
    table.bet("1", "ante")
    table.bet("2", "ante")
    table.bet("3", "pair_plus")
    table.close()
    table.shuffle()
    table.deal(hands or {"1": ["AS", "AH", "2C"], "2": ["3D", "5C", "7H"],
                         "3": ["9S", "9D", "4C"], "dealer": ["KS", "KH", "4D"]})
    return table


def test_3cp_decisions_then_reveal(make) -> None:
    """RWS-3CP 3.8: each Ante player plays or folds; Pair-Plus-only players do not decide
    (3.8.2); the dealer reveals only after every decision."""
    table = _three_card_poker(make)
    assert table.state == "decisions"
    out = table.send(cmd.RevealDealer(**DEALER))
    assert isinstance(out[-1], ev.CommandRefused) and "after every decision" in out[-1].reason
    out = table.send(cmd.PlayerDecision(**DEALER, position="3", choice=cmd.Choice.PLAY))
    assert isinstance(out[-1], ev.CommandRefused) and "3.8.2" in out[-1].reason
    table.send(cmd.PlayerDecision(**DEALER, position="1", choice=cmd.Choice.PLAY))
    table.send(cmd.PlayerDecision(**DEALER, position="2", choice=cmd.Choice.FOLD))
    assert table.state == "dealt"
    table.send(cmd.RevealDealer(**DEALER))
    table.send(cmd.SettleRound(**DEALER))
    outcomes = table.outcomes()
    assert outcomes == {"w1": "win", "w2": "lose", "w3": "win", "w1:play": "win"}
    result = {r.wager_id: r for r in table.last(ev.RoundSettled).settlement.results}
    assert "3.8.1" in result["w2"].rule


def test_3cp_play_wager_equals_ante(make) -> None:
    """RWS-3CP 3.8.2: playing places a Play wager equal to the Ante."""
    table = _three_card_poker(make)
    out = table.send(cmd.PlayerDecision(**DEALER, position="1", choice=cmd.Choice.PLAY))
    decision = [e for e in out if isinstance(e, ev.DecisionMade)][0]
    assert [(w.bet, w.amount) for w in decision.play_wagers] == [("play", 1000)]


def test_mbs_r3p_memory_carried_to_next_round(make) -> None:
    """MBS-R3P 5.10: an under-minimum wager is settled once per player; the table memory
    settlement returns is carried to the next round, where it is returned."""
    table = make("mbs-royal-three-pictures", limits={"main": BetLimit(500, 5000)})
    hands = {"1": ["KS", "QH", "9C"], "dealer": ["5S", "3H", "TC"]}
    for expected in ("win", "returned"):
        table.open()
        table.bet("1", "main", 100, player="alice")
        table.close()
        table.shuffle()
        table.deal(hands)
        table.finish()
        result = table.last(ev.RoundSettled).settlement.results[0]
        assert result.outcome.value == expected
    assert "alice" in table.machine.memory.under_minimum_players


def test_shuffle_before_close_is_kept(make) -> None:
    """A shuffle confirmed while bets are open (a shuffler shuffles during betting) counts for
    the round: the close goes straight to 'shuffled'."""
    table = make("rws-nc-three-pictures")
    table.open()
    table.bet("1", "main")
    table.shuffle()
    table.close()
    assert table.state == "shuffled"


@pytest.mark.parametrize(("game", "device"), GAMES_AND_DEVICES)
def test_which_game_deals_face_up_is_said_once(make, game: str, device: str) -> None:
    """Issue 35, one rule in one place: the game's rules say whether every card is dealt face
    up (LIVE-3P Game Play: "faced up"); the table (straight to revealed after the deal) and
    the views (nothing withheld) both read that one fact."""
    from controller.service.visibility import hidden_position

    table = make(game, device)
    face_up = table.machine.face_up()
    assert face_up is table.rules.dealt_face_up is (game == "live-three-pictures")
    assert (hidden_position(table.rules) is None) is face_up
