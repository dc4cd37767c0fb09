"""Settlement of the boxed Three Pictures games: RWS-NC3P, MBS-3P and MBS-R3P (main, tie,
three pictures, royal pictures), and the void shared by all five games."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.errors import WagerError
from controller.games.cards import FULL_DECK, Card, parse_cards
from controller.games.catalog import get_game
from controller.settlement import Outcome, Result, RoundInput, Wager, settle, void_round

BOX_GAMES = ("rws-nc-three-pictures", "mbs-three-pictures", "mbs-royal-three-pictures")
ALL_GAMES = (*BOX_GAMES, "live-three-pictures", "rws-three-card-poker")

# Pay tables as printed: RWS-NC3P 4.1, MBS-3P 4.1, MBS-R3P 4.1 and 4.2.
EVEN = 1            # player wins on other points, 1 to 1
TIE_PAYS = 8        # 8 to 1
THREE_PICTURES_PAYS = 16  # 16 to 1 (RWS-NC3P 4.1, MBS-3P 4.1)


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


def run(game: str, hands: Mapping[str, str], wagers: Sequence[Wager],
        rounding_unit: int = 1) -> dict[str, Result]:
    round_ = RoundInput(rules=get_game(game),
                        hands={pos: cards(text) for pos, text in hands.items()},
                        wagers=tuple(wagers), rounding_unit=rounding_unit)
    return settle(round_).by_id()


@pytest.fixture(name="game", params=BOX_GAMES)
def fixture_game(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# --- main wager --------------------------------------------------------------------------


def test_main_wins_even_money(game: str) -> None:
    """A higher ranking hand wins the Initial/main wager 1 to 1 (RWS-NC3P 3.13.1, 4.1;
    MBS-3P 3.7, 4.1; MBS-R3P 3.16, 4.1)."""
    results = run(game, {"1": "Q♦ J♥ 9♣", "dealer": "2♦ 2♠ A♣"},
                  [Wager("w", "1", "main", 100)])
    assert results["w"].outcome is Outcome.WIN
    assert results["w"].net == EVEN * 100


def test_main_loses(game: str) -> None:
    """A lower ranking hand loses the main wager (RWS-NC3P 3.13.2; MBS-3P 3.7; MBS-R3P 3.16)."""
    results = run(game, {"1": "2♦ 2♠ A♣", "dealer": "Q♦ J♥ 9♣"},
                  [Wager("w", "1", "main", 100)])
    assert results["w"].outcome is Outcome.LOSE
    assert results["w"].net == -100


@pytest.mark.parametrize("six", ["Q♦ J♥ 6♣", "Q♦ 4♣ 2♥", "3♥ 2♥ A♣"],
                         ids=["double-picture-six", "single-picture-six", "plain-six"])
def test_win_on_six_points_pays_one_to_two(game: str, six: str) -> None:
    """A player who wins on six points is paid 1 to 2, half the bet (RWS-NC3P 1.8, 4.1;
    MBS-3P 4.1; MBS-R3P 4.1)."""
    results = run(game, {"1": six, "dealer": "5♠ 10♠ 10♦"}, [Wager("w", "1", "main", 100)])
    assert results["w"].outcome is Outcome.WIN
    assert results["w"].net == 100 // 2


@pytest.mark.parametrize("game_id", ["rws-nc-three-pictures", "mbs-three-pictures"])
def test_tie_pays_eight_to_one(game_id: str) -> None:
    """The Tie bet pays 8 to 1 (RWS-NC3P 4.1, MBS-3P 4.1) and the main bet is returned on the
    same ranking (RWS-NC3P 3.13.3)."""
    results = run(game_id, {"1": "Q♦ J♥ 9♣", "dealer": "K♠ Q♥ 9♦"},
                  [Wager("m", "1", "main", 100), Wager("t", "1", "tie", 100)])
    assert (results["t"].outcome, results["t"].net) == (Outcome.WIN, TIE_PAYS * 100)
    assert results["m"].net == 0


@pytest.mark.parametrize(("position", "allowed"), [("1", True), ("8", True), ("9", False),
                                                   ("0", False)])
def test_wagers_only_on_the_layout_boxes(game: str, position: str, allowed: bool) -> None:
    """Bets stand only in the betting boxes of the layout (RWS-NC3P 2.1.1: boxes marked for each
    Player; eight on the tables this controller drives): a ninth box is refused by name."""
    hands = {position: "Q♦ J♥ 9♣", "dealer": "2♦ 2♠ A♣"}
    if allowed:
        assert run(game, hands, [Wager("w", position, "main", 100)])["w"].net == 100
    else:
        with pytest.raises(WagerError, match=f"no position '{position}'"):
            run(game, hands, [Wager("w", position, "main", 100)])


def test_walked_away_player_is_settled_not_returned() -> None:
    """RWS-NC3P 5.3: a Player who walks away after betting is settled as usual. The engine
    takes no input from a player after bets close, so his winning bet is paid and his losing
    bet collected, never returned."""
    wagers = [Wager("won", "1", "main", 100, player="gone"),
              Wager("lost", "2", "main", 100, player="gone")]
    results = run("rws-nc-three-pictures",
                  {"1": "Q♦ J♥ 9♣", "2": "A♠ 10♥ 10♦", "dealer": "2♦ 2♠ A♣"}, wagers)
    assert (results["won"].outcome, results["won"].net) == (Outcome.WIN, 100)
    assert (results["lost"].outcome, results["lost"].net) == (Outcome.LOSE, -100)


@pytest.mark.parametrize(("amount", "unit", "expected"),
                         [(25, 1, 12), (25, 5, 10), (35, 5, 15), (35, 10, 10), (101, 1, 50),
                          (100, 25, 50)])
def test_one_to_two_rounds_down_to_the_table_unit(game: str, amount: int, unit: int,
                                                  expected: int) -> None:
    """Half of an odd bet rounds DOWN to the table's smallest unit: 25 pays 12 at unit 1 and 10
    at unit 5 (RWS-NC3P 1.8; issue 2 Money)."""
    results = run(game, {"1": "3♥ 2♥ A♣", "dealer": "5♠ 10♠ 10♦"},
                  [Wager("w", "1", "main", amount)], rounding_unit=unit)
    assert results["w"].net == expected


@pytest.mark.parametrize(("hands", "bet", "expected"), [
    ({"1": "Q♦ J♥ 9♣", "dealer": "2♦ 2♠ A♣"}, "main", EVEN * 7),
    ({"1": "K♠ K♥ 5♦", "dealer": "Q♠ J♥ 5♣"}, "tie", TIE_PAYS * 7),
], ids=["even-money", "tie-8-to-1"])
def test_whole_odds_payouts_are_not_rounded(game: str, hands: dict[str, str], bet: str,
                                            expected: int) -> None:
    """Only a 1 to 2 payout can produce a fraction; 1 to 1 and 8 to 1 pay exactly what the pay
    table says on any amount (RWS-NC3P 4.1, MBS-3P 4.1, MBS-R3P 4.1; issue 2 Money)."""
    wagers = [Wager("m", "1", "main", 7)] + ([Wager("t", "1", "tie", 7)] if bet == "tie" else [])
    results = run(game, hands, wagers, rounding_unit=5)
    assert results["t" if bet == "tie" else "m"].net == expected


def test_dealer_winning_on_six_collects_the_whole_bet(game: str) -> None:
    """1 to 2 applies to a player's win only; a loss to a dealer's six loses the whole bet
    (RWS-NC3P 3.13.2, 4.1)."""
    results = run(game, {"1": "5♠ 10♠ 10♦", "dealer": "3♥ 2♥ A♣"},
                  [Wager("w", "1", "main", 100)])
    assert results["w"].net == -100


def test_three_pictures_wins_even_money_not_one_to_two(game: str) -> None:
    """Three Pictures (point total 0) beats a nine and is paid 1 to 1 (MBS-3P 3.10, 4.1)."""
    results = run(game, {"1": "K♠ Q♥ J♦", "dealer": "Q♦ J♥ 9♣"},
                  [Wager("w", "1", "main", 100)])
    assert results["w"].outcome is Outcome.WIN
    assert results["w"].net == 100


def test_more_pictures_win_on_equal_points(game: str) -> None:
    """Equal points: the hand with the most pictures wins (MBS-3P 3.12; RWS-NC3P Appendix C;
    MBS-R3P 3.22), and a six-point win still pays 1 to 2."""
    results = run(game, {"1": "Q♦ J♥ 6♣", "dealer": "K♠ 4♣ 2♥"},
                  [Wager("w", "1", "main", 100)])
    assert results["w"].outcome is Outcome.WIN
    assert results["w"].net == 50


def test_same_ranking_returns_main_and_pays_tie(game: str) -> None:
    """Same ranking: the main wager is returned (RWS-NC3P 3.13.3, MBS-3P 3.13, MBS-R3P 1.1.5
    standoff) and the Tie bet is paid 8 to 1. KK5 ranks with QJ5 (MBS-3P 3.14, MBS-R3P 3.20)."""
    results = run(game, {"1": "K♠ K♥ 5♦", "dealer": "Q♠ J♥ 5♣"},
                  [Wager("m", "1", "main", 100), Wager("t", "1", "tie", 50)])
    assert results["m"].outcome is Outcome.PUSH
    assert results["m"].net == 0
    assert results["t"].outcome is Outcome.WIN
    assert results["t"].net == TIE_PAYS * 50


@pytest.mark.parametrize(("player", "dealer", "main_net"),
                         [("K♠ 4♥ 5♦", "9♠ 10♥ 10♦", 100), ("9♠ 10♥ 10♦", "K♠ 4♥ 5♦", -100)],
                         ids=["player-more-pictures", "dealer-more-pictures"])
def test_tie_bet_pays_on_same_point_total_with_different_ranking(
        game: str, player: str, dealer: str, main_net: int) -> None:
    """Same Point Total, different ranking: the Tie bet is paid 8 to 1 while the main wager is
    decided by ranking (RWS-NC3P 1.18, 3.13.4; MBS-3P 1.1.3, 3.13.1; MBS-R3P 1.1.6, 3.19)."""
    results = run(game, {"1": player, "dealer": dealer},
                  [Wager("m", "1", "main", 100), Wager("t", "1", "tie", 50)])
    assert results["m"].net == main_net
    assert results["t"].outcome is Outcome.WIN
    assert results["t"].net == TIE_PAYS * 50


def test_tie_bet_loses_on_different_point_totals(game: str) -> None:
    """The Tie bet loses with any other outcome (MBS-R3P 1.1.6; RWS-NC3P 1.18)."""
    results = run(game, {"1": "Q♦ J♥ 9♣", "dealer": "Q♠ J♠ 8♣"},
                  [Wager("m", "1", "main", 100), Wager("t", "1", "tie", 50)])
    assert results["t"].outcome is Outcome.LOSE
    assert results["t"].net == -50


def test_tie_bet_three_pictures_against_a_zero_point_hand(game: str) -> None:
    """Three Pictures has a point total of 0 (picture value 0: RWS-NC3P 1.9, 1.12), so against
    a zero-point hand the Tie bet is paid, while the main wager is won on ranking."""
    results = run(game, {"1": "K♠ Q♥ J♦", "dealer": "10♠ 10♥ 10♦"},
                  [Wager("m", "1", "main", 100), Wager("t", "1", "tie", 10)])
    assert results["m"].net == 100
    assert results["t"].net == TIE_PAYS * 10


SIDE_BETS = [
    ("rws-nc-three-pictures", "tie", "5.14"),
    ("rws-nc-three-pictures", "three_pictures", "5.14"),
    ("mbs-three-pictures", "tie", "3.3"),
    ("mbs-three-pictures", "three_pictures", "3.3"),
    ("mbs-royal-three-pictures", "tie", "3.5"),
    ("mbs-royal-three-pictures", "royal_pictures", "3.5"),
]


@pytest.mark.parametrize(("game_id", "side", "clause"), SIDE_BETS)
def test_side_bet_without_main_is_returned(game_id: str, side: str, clause: str) -> None:
    """A Tie/Three Pictures (or Royal Pictures) bet on a box without a main wager is returned
    (RWS-NC3P 3.9, 5.14; MBS-3P 3.3; MBS-R3P 3.5); the other box is settled as usual."""
    results = run(game_id, {"1": "K♠ Q♥ J♦", "2": "2♦ 2♠ A♣", "dealer": "10♠ 10♥ 10♦"},
                  [Wager("m", "2", "main", 100), Wager("s", "1", side, 10)])
    assert results["s"].outcome is Outcome.RETURNED
    assert results["s"].net == 0
    assert clause in results["s"].rule
    assert results["m"].net == 100  # Plain Five beats Plain Zero


# --- three pictures bet (RWS-NC3P, MBS-3P) ----------------------------------------------


@pytest.mark.parametrize("game_3p", ["rws-nc-three-pictures", "mbs-three-pictures"])
def test_three_pictures_bet_pays_sixteen_to_one(game_3p: str) -> None:
    """The Three Pictures bet pays 16 to 1 on the box's own three pictures, whatever the
    dealer holds; here the main wager is a standoff (RWS-NC3P 1.17, 4.1; MBS-3P 1.1.2, 4.1)."""
    results = run(game_3p, {"1": "K♠ Q♥ J♦", "dealer": "K♦ Q♠ J♥"},
                  [Wager("m", "1", "main", 100), Wager("p", "1", "three_pictures", 20)])
    assert results["m"].outcome is Outcome.PUSH
    assert results["p"].outcome is Outcome.WIN
    assert results["p"].net == THREE_PICTURES_PAYS * 20


@pytest.mark.parametrize("game_3p", ["rws-nc-three-pictures", "mbs-three-pictures"])
def test_three_pictures_bet_loses_without_three_pictures(game_3p: str) -> None:
    """Two pictures and a nine is not Three Pictures: the bet loses, even though the main
    wager wins (RWS-NC3P 1.17; MBS-3P 1.1.2)."""
    results = run(game_3p, {"1": "Q♦ J♥ 9♣", "dealer": "K♠ Q♥ J♦"},
                  [Wager("m", "1", "main", 100), Wager("p", "1", "three_pictures", 20)])
    assert results["m"].net == -100
    assert results["p"].net == -20


def test_royal_game_has_no_three_pictures_bet() -> None:
    """MBS-R3P's side wagers are Tie and Royal Pictures only (MBS-R3P 2.2)."""
    rules = get_game("mbs-royal-three-pictures")
    assert set(rules.bets) == {"main", "tie", "royal_pictures"}
    with pytest.raises(WagerError):
        run("mbs-royal-three-pictures", {"1": "K♠ Q♥ J♦", "dealer": "2♦ 2♠ A♣"},
            [Wager("m", "1", "main", 100), Wager("p", "1", "three_pictures", 20)])


# --- royal pictures (MBS-R3P 1.1.4, 4.2) -------------------------------------------------

ROYAL = [
    ("K♠ K♥ K♦", 188, "1.1.4.6 three kings"),
    ("Q♠ Q♥ Q♦", 128, "1.1.4.5 three queens"),
    ("J♠ J♥ J♦", 88, "1.1.4.4 three jacks"),
    ("K♠ Q♥ J♦", 18, "1.1.4.3 three mixed pictures"),
    ("K♠ K♥ Q♦", 18, "1.1.4.3 two kings and a queen are three pictures"),
    ("J♠ J♥ Q♦", 18, "1.1.4.3 two jacks and a queen"),
    ("K♠ K♥ 4♦", 8, "1.1.4.1 K+K+non-picture is a picture pair"),
    ("Q♠ Q♥ 4♦", 8, "1.1.4.1 queen pair"),
    ("J♠ J♥ 10♦", 8, "1.1.4.1 jack pair with a ten (not a picture)"),
    ("K♠ 5♥ 7♦", 1, "1.1.4.2.1 one king, two non-pictures"),
    ("K♠ Q♥ 4♦", 1, "1.1.4.2.2 king, queen, non-picture"),
    ("K♠ J♥ 4♦", 1, "1.1.4.2.3 king, jack, non-picture"),
    ("K♠ 10♥ 10♦", 1, "1.1.4.2.1 king with two tens"),
    ("Q♠ J♥ 4♦", None, "Q+J+non-picture is no combination"),
    ("Q♠ 5♥ 4♦", None, "one queen"),
    ("10♠ 10♥ 10♦", None, "tens are not pictures"),
    ("2♠ 3♥ 4♦", None, "no pictures"),
]


@pytest.mark.parametrize(("hand", "pays", "why"), ROYAL, ids=[r[2] for r in ROYAL])
def test_royal_pictures_pay_table(hand: str, pays: int | None, why: str) -> None:
    """Royal Pictures pays 188/128/88/18/8/1 to 1 on the combinations of MBS-R3P 1.1.4.1-1.1.4.6
    (4.2) and loses otherwise; "Any King" is exactly the three compositions of 1.1.4.2."""
    results = run("mbs-royal-three-pictures", {"1": hand, "dealer": "9♣ 8♣ 2♣"},
                  [Wager("m", "1", "main", 100), Wager("r", "1", "royal_pictures", 10)])
    if pays is None:
        assert results["r"].outcome is Outcome.LOSE
        assert results["r"].net == -10
    else:
        assert results["r"].outcome is Outcome.WIN
        assert results["r"].net == pays * 10


def test_royal_pictures_is_independent_of_the_main_wager() -> None:
    """Any King pays even though the main wager loses (MBS-R3P 1.1.4: independent of Win,
    Lose or Tie)."""
    results = run("mbs-royal-three-pictures", {"1": "K♠ 5♥ 7♦", "dealer": "Q♦ J♥ 9♣"},
                  [Wager("m", "1", "main", 100), Wager("r", "1", "royal_pictures", 10)])
    assert results["m"].net == -100
    assert results["r"].net == 1 * 10


def test_royal_standoff_needs_equal_points_and_picture_count() -> None:
    """Standoff only when point total and picture count are equal (MBS-R3P 1.1.5); same points
    with fewer pictures loses the main wager while the Tie wager wins (1.1.6)."""
    standoff = run("mbs-royal-three-pictures", {"1": "K♠ 4♥ 5♦", "dealer": "Q♣ 2♥ 7♦"},
                   [Wager("m", "1", "main", 100)])
    assert standoff["m"].outcome is Outcome.PUSH
    fewer = run("mbs-royal-three-pictures", {"1": "9♠ 10♥ 10♦", "dealer": "Q♣ 2♥ 7♦"},
                [Wager("m", "1", "main", 100), Wager("t", "1", "tie", 10)])
    assert fewer["m"].outcome is Outcome.LOSE
    assert fewer["t"].net == TIE_PAYS * 10


# --- void (every game) ------------------------------------------------------------------

VOID_WAGERS = {
    "rws-nc-three-pictures": [("1", "main"), ("1", "tie"), ("2", "three_pictures")],
    "mbs-three-pictures": [("1", "main"), ("8", "tie"), ("8", "three_pictures")],
    "mbs-royal-three-pictures": [("1", "main"), ("1", "royal_pictures"), ("3", "tie")],
    "live-three-pictures": [("p1", "win"), ("p2", "lose"), ("p3", "tie"),
                            ("p1", "three_knights"), ("banker", "pair_plus")],
    "rws-three-card-poker": [("1", "ante"), ("1", "play"), ("2", "pair_plus"),
                             ("1", "progressive")],
}


@pytest.mark.parametrize("game_id", ALL_GAMES)
def test_void_returns_every_wager(game_id: str) -> None:
    """A void round returns every wager: no result, net 0 (RWS-NC3P 5.15, MBS-3P 5.1.1,
    MBS-R3P 5.1.1, RWS-3CP 5.1, LIVE-3P T&C)."""
    wagers = [Wager(f"w{i}", pos, bet, 500) for i, (pos, bet) in enumerate(VOID_WAGERS[game_id])]
    settlement = void_round(wagers, "void")
    assert [r.wager_id for r in settlement.results] == [w.id for w in wagers]
    assert all(r.outcome is Outcome.RETURNED for r in settlement.results)
    assert all(r.net == 0 for r in settlement.results)


def test_settle_is_repeatable() -> None:
    """Settlement is a pure function: the same round settles the same way twice (issue 2)."""
    round_ = RoundInput(rules=get_game("rws-nc-three-pictures"),
                        hands={"1": cards("Q♦ 4♣ 2♥"), "dealer": cards("5♠ 10♠ 10♦")},
                        wagers=(Wager("w", "1", "main", 25),), rounding_unit=5)
    assert settle(round_) == settle(round_)
    assert settle(round_).by_id()["w"].net == 10


@pytest.mark.parametrize("game_id", BOX_GAMES)
def test_hand_removed_from_play_returns_its_wagers(game_id: str) -> None:
    """A hand removed from play (wrong number of cards) has its bets returned, the other boxes
    settle as usual (RWS-NC3P 5.9; MBS-R3P 5.5)."""
    round_ = RoundInput(rules=get_game(game_id),
                        hands={"1": cards("Q♦ J♥ 9♣"), "2": cards("K♠ Q♥ 9♦"),
                               "dealer": cards("2♦ 2♠ A♣")},
                        wagers=(Wager("a", "1", "main", 100), Wager("b", "1", "tie", 10),
                                Wager("c", "2", "main", 100)),
                        returned_positions={"1": "RWS-NC3P 5.9"})
    by_id = settle(round_).by_id()
    assert (by_id["a"].outcome, by_id["a"].net) == (Outcome.RETURNED, 0)
    assert (by_id["b"].outcome, by_id["b"].net) == (Outcome.RETURNED, 0)
    assert by_id["c"].net == 100


# --- hypothesis: settlement mirrors the rank order ---------------------------------------

SIX_CARDS = st.lists(st.sampled_from(FULL_DECK), min_size=6, max_size=6, unique=True)


@pytest.mark.parametrize("game_id", BOX_GAMES)
@given(six=SIX_CARDS)
def test_main_wager_is_antisymmetric(game_id: str, six: list[Card]) -> None:
    """Swapping the player's and dealer's hands turns a win into a loss and keeps a standoff a
    standoff (RWS-NC3P 3.13.1-3.13.3, MBS-3P 3.12-3.13, MBS-R3P 1.1.5, 3.16)."""
    a, b = tuple(six[:3]), tuple(six[3:])
    rules = get_game(game_id)

    def main(player: tuple[Card, ...], dealer: tuple[Card, ...]) -> Result:
        round_ = RoundInput(rules=rules, hands={"1": player, "dealer": dealer},
                            wagers=(Wager("m", "1", "main", 100),))
        return settle(round_).by_id()["m"]

    forward, backward = main(a, b), main(b, a)
    mirror = {Outcome.WIN: Outcome.LOSE, Outcome.LOSE: Outcome.WIN, Outcome.PUSH: Outcome.PUSH}
    assert backward.outcome is mirror[forward.outcome]
    if forward.outcome is Outcome.WIN:
        assert forward.net in (100, 50)
        assert backward.net == -100
