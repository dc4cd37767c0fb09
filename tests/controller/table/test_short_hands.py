"""Issue 23, findings 4 and 5, on the round machine itself: no decision resumes a round with a
box that can never hold three cards, no Play or fold is taken on such a hand, a supervisor's void
after the reveal takes back nothing the revealed hands decided, and no option opens after the
reveal. The service-wiring tests are in tests/controller/service/test_rulings_settle.py."""

from __future__ import annotations

import pytest

from controller.games.cards import parse_cards
from controller.games.catalog import get_game
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.irregularities import Action, Context, Phase, rule
from drivers import events as dev
from tests.controller.table.conftest import DEALER, SUPERVISOR, standard_hands

K = cmd.IrregularityKind
A = cmd.SupervisorAction


def _revealed(make, game: str):  # noqa: ANN001, ANN202
    table = make(game, "shuffler")
    table.ready()
    table.deal(standard_hands(game))
    if table.state == "decisions":
        for position in table.machine.ante_positions():
            table.send(cmd.PlayerDecision(**DEALER, position=position, choice=cmd.Choice.PLAY))
    table.send(cmd.RevealDealer(**DEALER))
    assert table.state == "revealed"
    return table


def _results(event) -> dict[str, tuple[str, str]]:  # noqa: ANN001
    return {r.wager_id: (r.outcome.value, r.rule) for r in event.settlement.results}


def test_continue_on_a_short_box_is_refused(make) -> None:
    """RWS-3CP: a set of two to box 1 with a card exposed in it is held for the one exposure
    (5.1.2 voids only for two; no clause: a supervisor), and the short set is never ruled on
    its own. ``continue`` would deal on with two cards in box 1, a hand that can be neither
    played (3.8) nor settled: it is refused, naming the box and the other ways out."""
    table = make("rws-three-card-poker", "shuffler")
    table.ready()
    two = parse_cards(["AS", "AH"])
    table.send(dev.CardSetDispensed(device="shuffler", cards=two, exposed=two[:1]))
    assert table.state == "hold"
    out = table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    refused = out[-1]
    assert isinstance(refused, ev.CommandRefused), out
    assert "box 1 with 2 cards" in refused.reason and "void" in refused.reason
    assert table.state == "hold"
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="short set"))
    assert table.state == "voided"


def test_a_refused_reconstruction_leaves_the_deal_untouched(make) -> None:
    """RWS-NC3P 5.9: moves and hands are worked out on a copy; a reconstruction that is refused
    (here it empties box 2, which holds a wager) changes no card of the record."""
    table = make("rws-nc-three-pictures", "shuffler")
    table.ready()
    hands = standard_hands("rws-nc-three-pictures")
    table.send(dev.CardSetDispensed(device="shuffler", cards=parse_cards(hands["1"])))
    table.send(dev.CardSetDispensed(device="shuffler", cards=parse_cards(["2D", "3C"])))
    assert table.state == "hold"
    before = {p: list(c) for p, c in table.machine.deal.hands.items()}
    out = table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT,
                                            hands=(("2", ()),)))
    assert isinstance(out[-1], ev.CommandRefused) and "box 2 with 0 cards" in out[-1].reason
    assert table.machine.deal.hands == before and table.state == "hold"


def test_play_on_a_hand_that_is_not_three_cards_is_refused(make) -> None:
    """RWS-3CP 3.6, 3.8: a player decides on three cards. No ruling now leaves a short hand to
    be decided (the tests above), so the record is cut here by hand: Play and fold are refused
    with the reason, and the box stays undecided."""
    table = make("rws-three-card-poker", "shuffler")
    table.ready()
    table.deal(standard_hands("rws-three-card-poker"))
    assert table.state == "decisions"
    table.machine.deal.hands["1"].pop()
    for choice in cmd.Choice:
        out = table.send(cmd.PlayerDecision(**DEALER, position="1", choice=choice))
        assert isinstance(out[-1], ev.CommandRefused) and "holds 2 cards" in out[-1].reason
    assert "1" not in table.machine.decisions


@pytest.mark.parametrize("game", ["rws-nc-three-pictures", "rws-three-card-poker"])
def test_a_management_void_after_the_reveal_settles_what_is_decided(make, game) -> None:
    """After the reveal every box holding three cards is decided by the revealed hands: a
    supervisor's void (no clause voids here) settles those bets and returns only the bets of
    a box without a hand of three cards (the record is cut by hand to make one). Box 1 wins,
    box 2 loses (standard hands): both stand."""
    table = _revealed(make, game)
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="pit decision"))
    voided = table.last(ev.RoundVoided)
    outcomes = {wid: outcome for wid, (outcome, _) in _results(voided).items()}
    assert outcomes["w1"] == "win" and outcomes["w2"] == "lose"

    short = _revealed(make, game)
    short.machine.deal.hands["1"].pop()
    short.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="pit decision"))
    results = _results(short.last(ev.RoundVoided))
    assert results["w1"][0] == "returned" and "no hand of three cards" in results["w1"][1]
    assert results["w2"][0] == "lose"


def test_a_void_a_clause_orders_after_the_reveal_still_returns_every_bet(make) -> None:
    """RWS-NC3P 5.5.1 with 5.15: a card not of the set found during the round of play voids it,
    and a void returns all bets, in so many words. Only a supervisor's own void keeps what the
    revealed hands decided."""
    table = _revealed(make, "rws-nc-three-pictures")
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.FOREIGN_CARD))
    voided = table.last(ev.RoundVoided)
    assert voided.clause == "RWS-NC3P 5.5.1"
    assert {outcome for outcome, _ in _results(voided).values()} == {"returned"}


@pytest.mark.parametrize(("game", "kind", "before", "after"), [
    ("rws-nc-three-pictures", K.OTHER_DEALING_ERROR, "RWS-NC3P 5.7", "RWS-NC3P 5.7, 5.8"),
    ("rws-nc-three-pictures", K.DEALT_INCORRECTLY, "RWS-NC3P 5.7", "RWS-NC3P 5.7, 5.8"),
    ("mbs-royal-three-pictures", K.DEALT_INCORRECTLY, "MBS-R3P 5.6, 5.7",
     "MBS-R3P 5.6, 5.7, 5.3"),
])
def test_no_options_after_the_reveal(game, kind, before, after) -> None:
    """The options (RWS-NC3P 5.7, MBS-R3P 5.7) are offered until the dealer's hand is revealed;
    after it the round continues to settlement under the no-withdrawal clause."""
    rules = get_game(game)
    dealt = rule(rules, kind, Context(phase=Phase.DEALT, handled=True))
    assert (dealt.action, dealt.clause) == (Action.PLAYER_OPTIONS, before)
    revealed = rule(rules, kind, Context(phase=Phase.DEALT, handled=True, revealed=True))
    assert (revealed.action, revealed.clause) == (Action.CONTINUE, after)
    assert "after the dealer's hand was revealed" in revealed.note


def test_mbs_r3p_hand_removed_after_the_reveal_opens_no_withdrawal() -> None:
    """MBS-R3P 5.5 removes the hand whenever it is noticed before the next round; the 5.7
    withdrawal that follows it is offered only before the reveal."""
    rules = get_game("mbs-royal-three-pictures")
    dealt = rule(rules, K.WRONG_COUNT_PLAYER, Context(phase=Phase.DEALT, handled=True))
    assert (dealt.action, dealt.then) == (Action.REMOVE_HAND, Action.PLAYER_OPTIONS)
    revealed = rule(rules, K.WRONG_COUNT_PLAYER,
                    Context(phase=Phase.DEALT, handled=True, revealed=True))
    assert (revealed.action, revealed.clause, revealed.then) == (
        Action.REMOVE_HAND, "MBS-R3P 5.5", None)
