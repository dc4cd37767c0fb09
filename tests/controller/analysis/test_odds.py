"""Exact odds by enumeration (issue 2 ``tablectl odds``), checked against published figures and
against expectations computed by hand from the published hand-class counts. Each game's
enumeration runs once per module (about a second each)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from controller.analysis.odds import BetOdds, game_odds, hand_class_counts
from controller.games.catalog import get_game

HANDS = 22_100  # C(52, 3)
# Published Three Card Poker hand classes over 22,100 hands.
SF, TRIPS, STRAIGHTS, FLUSHES, PAIRS, HIGH = 48, 52, 720, 1_096, 3_744, 16_440


@pytest.fixture(name="live_odds", scope="module")
def fixture_live_odds() -> dict[str, BetOdds]:
    return game_odds(get_game("live-three-pictures"))


@pytest.fixture(name="royal_odds", scope="module")
def fixture_royal_odds() -> dict[str, BetOdds]:
    return game_odds(get_game("mbs-royal-three-pictures"))


@pytest.fixture(name="poker_odds", scope="module")
def fixture_poker_odds() -> dict[str, BetOdds]:
    return game_odds(get_game("rws-three-card-poker"))


def test_hand_class_counts() -> None:
    """48 / 52 / 720 / 1,096 / 3,744 / 16,440 of 22,100 (the published 3CP counts)."""
    assert hand_class_counts() == {"straight_flush": SF, "three_of_a_kind": TRIPS,
                                   "straight": STRAIGHTS, "flush": FLUSHES, "pair": PAIRS,
                                   "high_card": HIGH}


def test_live_pair_plus_40_30_6_3_1(live_odds: dict[str, BetOdds]) -> None:
    """LIVE-3P Pair Plus 40/30/6/3/1: house edge 7.28% (published), exactly 1608/22100 by the
    class counts: returns 48*41 + 52*31 + 720*7 + 1096*4 + 3744*2 = 20,492 of 22,100."""
    edge = live_odds["pair_plus"].house_edge
    returned = SF * 41 + TRIPS * 31 + STRAIGHTS * 7 + FLUSHES * 4 + PAIRS * 2
    assert edge == Fraction(HANDS - returned, HANDS)
    assert float(edge) == pytest.approx(0.0728, abs=0.0001)


def test_live_three_knights(live_odds: dict[str, BetOdds]) -> None:
    """3 Knights 16 to 1: C(12,3) = 220 of 22,100 hands win, so the edge is 1 - 17*220/22,100."""
    assert live_odds["three_knights"].house_edge == Fraction(HANDS - 17 * 220, HANDS)


def test_live_win_and_lose_are_symmetric(live_odds: dict[str, BetOdds]) -> None:
    """Win and Lose are mirror bets with the same 1 to 2 rule on six (LIVE-3P Game Play), so
    their edges are equal and positive."""
    assert live_odds["win"].house_edge == live_odds["lose"].house_edge
    assert live_odds["win"].house_edge > 0


def test_royal_pictures_edge(royal_odds: dict[str, BetOdds]) -> None:
    """Royal Pictures (MBS-R3P 1.1.4, 4.2) by hand: KKK/QQQ/JJJ 4 hands each, other three
    pictures 220-12 = 208, picture pairs 3*6*40 = 720, Any King 4*C(40,2) + 2*4*4*40 = 4,400."""
    returned = 4 * 189 + 4 * 129 + 4 * 89 + 208 * 19 + 720 * 9 + 4_400 * 2
    assert royal_odds["royal_pictures"].house_edge == Fraction(HANDS - returned, HANDS)


def test_three_card_poker_ante_and_element_of_risk(poker_odds: dict[str, BetOdds]) -> None:
    """Ante/Play with the 5-4-1 Ante Bonus under Q-6-4: house edge 3.37% per unit of Ante and
    element of risk 2.01% (published figures)."""
    ante = poker_odds["ante"]
    assert float(ante.house_edge) == pytest.approx(0.0337, abs=0.0001)
    assert ante.element_of_risk is not None
    assert float(ante.element_of_risk) == pytest.approx(0.0201, abs=0.0001)


def test_three_card_poker_pair_plus(poker_odds: dict[str, BetOdds]) -> None:
    """RWS-3CP Pair Plus 40/30/5/4/1 (4.2) by hand: returns 48*41 + 52*31 + 720*6 + 1096*5 +
    3744*2 = 20,868 of 22,100 (5.57%)."""
    returned = SF * 41 + TRIPS * 31 + STRAIGHTS * 6 + FLUSHES * 5 + PAIRS * 2
    assert poker_odds["pair_plus"].house_edge == Fraction(HANDS - returned, HANDS)


def test_every_bet_has_an_edge() -> None:
    """``game_odds`` reports every bet type of the rule set (issue 2: the house edge of every
    bet)."""
    rules = get_game("rws-nc-three-pictures")
    odds = game_odds(rules)
    assert set(odds) == set(rules.bets)
    assert odds["three_pictures"].house_edge == Fraction(HANDS - 17 * 220, HANDS)
