"""Settlement of LIVE-3P (Live 3 Pictures / Triple Face): Win, Lose, Tie, 3 Knights and Pair Plus
on Player 1/2/3 against the Banker ("Game Play" section of the rule text)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from controller.errors import WagerError
from controller.games.cards import Card, parse_cards
from controller.games.catalog import get_game
from controller.settlement import Outcome, Result, RoundInput, Wager, settle

GAME = "live-three-pictures"
TIE_PAYS = 8
THREE_KNIGHTS_PAYS = 16
PAIR_PLUS = {"straight_flush": 40, "three_of_a_kind": 30, "straight": 6, "flush": 3, "pair": 1}


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


def run(hands: Mapping[str, str], wagers: Sequence[Wager]) -> dict[str, Result]:
    round_ = RoundInput(rules=get_game(GAME),
                        hands={pos: cards(text) for pos, text in hands.items()},
                        wagers=tuple(wagers))
    return settle(round_).by_id()


@pytest.fixture(name="position", params=["p1", "p2", "p3"])
def fixture_position(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def hands_with(position: str, player: str, banker: str) -> dict[str, str]:
    """The player hand at ``position``; the other two player hands are dealt too."""
    others = iter(["3♣ 4♣ 8♣", "5♣ 7♣ 9♣"])
    return {pos: player if pos == position else next(others) for pos in ("p1", "p2", "p3")} | {
        "banker": banker}


def test_win_bet_wins_when_player_beats_banker(position: str) -> None:
    """"Win" is paid 1 to 1 when the Player hand beats the Banker; "Lose" loses (Game Play)."""
    results = run(hands_with(position, "Q♦ J♥ 9♠", "2♦ 2♠ A♥"),
                  [Wager("w", position, "win", 100), Wager("l", position, "lose", 100)])
    assert (results["w"].outcome, results["w"].net) == (Outcome.WIN, 100)
    assert (results["l"].outcome, results["l"].net) == (Outcome.LOSE, -100)


def test_lose_bet_wins_when_banker_beats_player(position: str) -> None:
    """"Lose" is paid 1 to 1 when the Banker beats the Player hand; "Win" loses (Game Play)."""
    results = run(hands_with(position, "2♦ 2♠ A♥", "Q♦ J♥ 9♠"),
                  [Wager("w", position, "win", 100), Wager("l", position, "lose", 100)])
    assert (results["l"].outcome, results["l"].net) == (Outcome.WIN, 100)
    assert (results["w"].outcome, results["w"].net) == (Outcome.LOSE, -100)


SIXES = [("Q♦ J♥ 6♠", "#11 Double Knights Six"), ("Q♦ 4♠ 2♥", "#12 Single Knight Six"),
         ("3♥ 2♥ A♠", "#13 Plain Six")]


@pytest.mark.parametrize(("six", "item"), SIXES, ids=[s[1] for s in SIXES])
def test_win_on_six_pays_half(six: str, item: str) -> None:
    """"Win" and the Player hand won on any combination of 6 (ranks #11-#13): 50% payout."""
    results = run(hands_with("p1", six, "5♦ 10♠ 10♦"), [Wager("w", "p1", "win", 100)])
    assert results["w"].outcome is Outcome.WIN
    assert results["w"].net == 100 // 2


@pytest.mark.parametrize(("six", "item"), SIXES, ids=[s[1] for s in SIXES])
def test_lose_on_banker_six_pays_half(six: str, item: str) -> None:
    """"Lose" and the Banker hand won on any combination of 6 (ranks #11-#13): 50% payout."""
    results = run(hands_with("p2", "5♦ 10♠ 10♦", six), [Wager("l", "p2", "lose", 100)])
    assert results["l"].outcome is Outcome.WIN
    assert results["l"].net == 100 // 2


def test_win_on_six_rounds_down() -> None:
    """50% of an odd bet rounds down to the unit: 25 pays 12 (issue 2 Money)."""
    results = run(hands_with("p3", "3♥ 2♥ A♠", "5♦ 10♠ 10♦"), [Wager("w", "p3", "win", 25)])
    assert results["w"].net == 12


def test_win_on_seven_is_even_money() -> None:
    """Only ranks #11-#13 pay 50%: a win on seven (#10 Plain Seven) is 1 to 1."""
    results = run(hands_with("p1", "6♦ 6♥ 5♠", "5♦ 10♠ 10♦"), [Wager("w", "p1", "win", 100)])
    assert results["w"].net == 100


def test_tie_example_single_knights_nine(position: str) -> None:
    """The printed TIE example (J♠ 3♥ 6♦ vs Q♠ 10♥ 9♦, both Single Knights Nine): Tie pays
    8 to 1 and Win/Lose are pushed (Game Play: TIE)."""
    results = run(hands_with(position, "J♠ 3♥ 6♦", "Q♠ 10♥ 9♦"),
                  [Wager("w", position, "win", 100), Wager("l", position, "lose", 100),
                   Wager("t", position, "tie", 10)])
    assert (results["w"].outcome, results["w"].net) == (Outcome.PUSH, 0)
    assert (results["l"].outcome, results["l"].net) == (Outcome.PUSH, 0)
    assert (results["t"].outcome, results["t"].net) == (Outcome.WIN, TIE_PAYS * 10)


def test_tie_needs_same_ranking_not_just_same_points() -> None:
    """The LIVE-3P TIE condition is the same ranking: Single Knights Nine against Plain Nine is
    not a tie; the Tie bet loses and Win is paid (Game Play: TIE)."""
    results = run(hands_with("p1", "K♠ 4♥ 5♦", "9♠ 10♥ 10♦"),
                  [Wager("w", "p1", "win", 100), Wager("t", "p1", "tie", 10)])
    assert results["t"].outcome is Outcome.LOSE
    assert results["t"].net == -10
    assert results["w"].net == 100


def test_pictures_do_not_rank_in_a_tie() -> None:
    """K K 5 and Q J 5 are both Double Knights Five: a tie (pictures carry value 0 and are
    counted, not ranked)."""
    results = run(hands_with("p2", "K♠ K♥ 5♦", "Q♠ J♥ 5♥"),
                  [Wager("w", "p2", "win", 100), Wager("t", "p2", "tie", 10)])
    assert results["w"].outcome is Outcome.PUSH
    assert results["t"].net == TIE_PAYS * 10


def test_three_knights_pays_sixteen_to_one(position: str) -> None:
    """"3 Knights" pays 16 to 1 when all three cards of the selected Player hand are pictures."""
    results = run(hands_with(position, "K♠ Q♥ J♦", "2♦ 2♠ A♥"),
                  [Wager("k", position, "three_knights", 10), Wager("w", position, "win", 100)])
    assert (results["k"].outcome, results["k"].net) == (Outcome.WIN, THREE_KNIGHTS_PAYS * 10)
    assert results["w"].net == 100  # 3 Knights is rank #1, paid 1 to 1


def test_three_knights_loses_on_two_pictures() -> None:
    """Two pictures and a nine is not 3 Knights: the bet loses."""
    results = run(hands_with("p1", "K♠ Q♥ 9♦", "2♦ 2♠ A♥"),
                  [Wager("k", "p1", "three_knights", 10)])
    assert (results["k"].outcome, results["k"].net) == (Outcome.LOSE, -10)


def test_three_knights_is_on_the_selected_hand_only() -> None:
    """The Banker's 3 Knights does not win a Player's 3 Knights bet ("the selected Player's
    hand")."""
    results = run(hands_with("p1", "2♦ 2♠ A♥", "K♠ Q♥ J♦"),
                  [Wager("k", "p1", "three_knights", 10)])
    assert results["k"].net == -10


PAIR_PLUS_EXAMPLES = [
    ("8♥ 7♥ 6♥", "straight_flush", "printed straight flush"),
    ("10♠ 10♥ 10♣", "three_of_a_kind", "printed three of a kind"),
    ("8♦ 7♣ 6♥", "straight", "printed straight"),
    ("10♥ 4♥ 2♥", "flush", "printed flush"),
    ("A♣ A♥ 8♦", "pair", "printed pair"),
    ("Q♣ K♦ A♠", "straight", "ace high straight"),
    ("A♦ 2♣ 3♦", "straight", "ace low straight"),
    ("A♦ 2♦ 3♦", "straight_flush", "ace low straight flush"),
    ("K♣ A♥ 2♦", None, "no wrap-around"),
    ("9♦ 7♠ 2♠", None, "nothing"),
]


@pytest.mark.parametrize("box", ["p1", "p2", "p3", "banker"])
@pytest.mark.parametrize(("hand", "line", "why"), PAIR_PLUS_EXAMPLES,
                         ids=[e[2] for e in PAIR_PLUS_EXAMPLES])
def test_pair_plus_pay_table(box: str, hand: str, line: str | None, why: str) -> None:
    """Pair Plus on Player 1/2/3 and the Banker box pays 40/30/6/3/1 to 1 on the poker value of
    that box's hand, an Ace high or low in a straight; it loses otherwise (Pair Plus)."""
    filler = "4♠ 5♣ 9♠"
    hands = {"banker": hand} if box == "banker" else {box: hand, "banker": filler}
    results = run(hands, [Wager("pp", box, "pair_plus", 10)])
    if line is None:
        assert (results["pp"].outcome, results["pp"].net) == (Outcome.LOSE, -10)
    else:
        assert (results["pp"].outcome, results["pp"].net) == (Outcome.WIN, PAIR_PLUS[line] * 10)


def test_pair_plus_is_independent_of_the_banker() -> None:
    """A pair wins Pair Plus even when the Banker's hand beats it (Pair Plus pays on the box's
    own hand)."""
    results = run(hands_with("p1", "A♣ A♥ 8♦", "Q♦ J♥ 9♠"),
                  [Wager("pp", "p1", "pair_plus", 10), Wager("w", "p1", "win", 10)])
    assert results["pp"].net == 1 * 10
    assert results["w"].net == -10


@pytest.mark.parametrize(("position", "bet"),
                         [("banker", "win"), ("banker", "lose"), ("banker", "tie"),
                          ("banker", "three_knights"), ("p4", "win"), ("1", "pair_plus")])
def test_bets_only_at_their_positions(position: str, bet: str) -> None:
    """Win/Lose/Tie/3 Knights stand on Player 1/2/3 only; Pair Plus on 1/2/3 and the Banker
    box (Game Play, Pair Plus); anything else is refused."""
    with pytest.raises(WagerError):
        run({"p1": "Q♦ J♥ 9♠", "banker": "2♦ 2♠ A♥"}, [Wager("x", position, bet, 10)])


def test_positions_and_bets() -> None:
    """Three Player hands against one Banker; the bets are Win, Lose, Tie, 3 Knights and Pair
    Plus (Game Play)."""
    rules = get_game(GAME)
    assert tuple(rules.positions) == ("p1", "p2", "p3")
    assert rules.dealer == "banker"
    assert set(rules.bets) == {"win", "lose", "tie", "three_knights", "pair_plus"}


def test_a_studio_round_settles_each_wager_as_if_it_were_alone() -> None:
    """Thousands of members bet on three hands (Game Play: "Members can bet on any of the three
    Player hands"); the engine works out each (box, bet, stake) once for the round (issue 28).
    Every wager's result is exactly the one it gets settled alone, its own id and stake kept."""
    hands = {"p1": "K♠ Q♥ J♦", "p2": "3♣ 4♣ 8♣", "p3": "A♠ 2♦ 3♥", "banker": "6♠ T♥ K♦"}
    bets = ("win", "lose", "tie", "three_knights", "pair_plus")
    wagers = [Wager(f"m{i}", ("p1", "p2", "p3", "banker")[i % 4] if bets[i % 5] == "pair_plus"
                    else ("p1", "p2", "p3")[i % 3], bets[i % 5], 100 * (1 + i % 7), f"member{i}")
              for i in range(300)]
    together = run(hands, wagers)
    assert len(together) == 300
    for wager in wagers:
        assert together[wager.id] == run(hands, [wager])[wager.id]
