"""Issue 25: risk in money for a flagged one-pass machine (``controller.protection.risk``).

The fair machine is checked against what this module did not write: the settlement engine's
pays enumerated over every hand by ``controller.analysis.odds``. The 10-shelf machine fed a new
deck is checked on the bets its bias must move (docs/game-protection.md, "Risk in money")."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from controller.analysis.odds import game_odds
from controller.analysis.risk import flagged_shelves
from controller.games.catalog import GAMES, get_game
from controller.games.rules import GameId
from controller.protection.feed import Feed
from controller.protection.risk import Machine, Return, RiskError, estimate, layout


@pytest.mark.parametrize("game_id", list(GAMES))
def test_fair_machine_gives_the_enumerated_house_edge_on_every_bet(game_id: str) -> None:
    """A uniform shuffle's Monte Carlo return is within 4 standard errors of minus the exact
    house edge of every bet of the game (RWS-3CP Ante: the Queen-6-4 play rule of
    ``tablectl odds``), so the deal, the hands and the stakes are wired as the settlement
    engine and the enumeration see them."""
    rules = get_game(game_id)
    odds = game_odds(rules)
    report = estimate(rules, Machine(None, Feed.NEW_DECK), random.Random(7), deals=3000)
    assert {bet.bet for bet in report.bets} == set(odds)
    for bet in report.bets:
        exact = -odds[bet.bet].house_edge
        assert bet.blind.se > 0
        assert abs(float(bet.blind.per_unit - exact)) <= 4 * bet.blind.se, (
            bet.bet, float(bet.blind.per_unit), float(exact), bet.blind.se)


def test_fair_machine_fed_collected_cards_is_still_fair() -> None:
    """A fair shuffle's output does not depend on its input: fed the collected cards (the
    table default), RWS-3CP's bets still return minus their enumerated house edge."""
    rules = get_game(GameId.RWS_3CP.value)
    odds = game_odds(rules)
    report = estimate(rules, Machine(None, Feed.COLLECTED_REVERSED), random.Random(3),
                      deals=1500, inner=4)
    for bet in report.bets:
        exact = -odds[bet.bet].house_edge
        assert abs(float(bet.blind.per_unit - exact)) <= 4 * bet.blind.se, bet.bet


def test_ten_shelf_machine_fed_a_new_deck_pays_more_on_pair_plus_and_the_progressive() -> None:
    """RWS-3CP deals each box three consecutive cards of the machine's output (3.7). Such
    cards often straddle a shelf's valley (its earliest-fed top and bottom cards, both from
    early in the input) or the join of two shelves (the latest-fed cards of each, both from
    late in it), so fed a new deck (pack order: suits in blocks, ranks in order) a set holds
    cards close in pack order far more often than chance: one suit, neighbouring ranks.
    Flushes, straights and straight flushes come more often, so Pair Plus (4.2) and the
    progressive (4.4) return strictly more than on a fair shuffle (by over 3 standard errors),
    and a guessing player takes Pair Plus at every box and wins money on it."""
    rules = get_game(GameId.RWS_3CP.value)
    fair = {bet: -odds.house_edge for bet, odds in game_odds(rules).items()}
    report = estimate(rules, Machine(10, Feed.NEW_DECK), random.Random(11), deals=6000,
                      fair=fair)
    bets = {bet.bet: bet for bet in report.bets}
    for name in ("pair_plus", "progressive"):
        bet = bets[name]
        assert bet.fair == fair[name]
        assert float(bet.blind.per_unit - bet.fair) > 3 * bet.blind.se, name
    pair_plus = bets["pair_plus"]
    assert pair_plus.taken == pair_plus.offered == 6000 * 7
    assert pair_plus.guessed.per_hundred > 0 and pair_plus.guessed.net > 0


def test_money_is_integral_and_its_rounding_is_half_to_even() -> None:
    """The figures per 100.00 staked are the exact ratio of integer sums, rounded to the minor
    unit with halves to even; the percentage is the same ratio."""
    assert Return(net=5, staked=2000, se=0.0).per_hundred == 25
    assert Return(net=1, staked=20_000, se=0.0).per_hundred == 0  # 0.5 -> 0
    assert Return(net=3, staked=20_000, se=0.0).per_hundred == 2  # 1.5 -> 2
    assert Return(net=-3, staked=20_000, se=0.0).per_hundred == -2
    assert Return(net=-1, staked=8, se=0.0).percent == -12.5
    assert Return(net=0, staked=0, se=0.0).per_unit == Fraction(0)


def test_hands_take_the_places_the_deal_plan_gives_them() -> None:
    """Sets of three from a shuffler, box 1 first and the dealer last (RWS-3CP 3.7); LIVE-3P
    burns four and deals one card at a time, P1, P2, P3, Banker (T&C 1, Game Play)."""
    three_card = layout(get_game(GameId.RWS_3CP.value), boxes=2)
    assert three_card.positions == ("1", "2", "dealer")
    assert three_card.places == ((0, 1, 2), (3, 4, 5), (6, 7, 8))
    live = layout(get_game(GameId.LIVE_3P.value))
    assert live.positions == ("p1", "p2", "p3", "banker")
    assert live.places[0] == (4, 8, 12) and live.places[3] == (7, 11, 15)


def test_an_unknown_feed_or_too_few_deals_is_refused() -> None:
    """The bias cannot be put in money without the input order; one deal has no error."""
    rules = get_game(GameId.MBS_3P.value)
    with pytest.raises(RiskError, match="feed is unknown"):
        estimate(rules, Machine(10, Feed.UNKNOWN), random.Random(0), deals=10)
    with pytest.raises(RiskError, match="at least 2 deals"):
        estimate(rules, Machine(10, Feed.NEW_DECK), random.Random(0), deals=1)


def test_the_flagged_machine_is_the_one_the_monitors_named() -> None:
    """The likelihood test names its shelf count (the fewest named wins); the valleys or
    sortedness alone mean the 10-shelf machine; other faults are no one-pass machine."""
    lr = "the dealt orders are 3.0e+05 times likelier under a one-pass {}-shelf shuffle"
    assert flagged_shelves([("one_pass_lr", lr.format(20))]) == 20
    assert flagged_shelves([("one_pass_lr", lr.format(20)), ("one_pass_lr", lr.format(10))]) \
        == 10
    assert flagged_shelves([("one_pass", "too few valleys")]) == 10
    assert flagged_shelves([("ledger", "unseen"), ("repeat", "replayed")]) is None
