"""Table limits: RWS-NC3P 5.1-5.2 (pro rata, seated priority, 1.15), MBS-R3P 3.9 and 5.10-5.12
(three wagers per area, cap at the maximum, under-minimum settled once), and refusal where a rule
set has no clause."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.errors import WagerError
from controller.games.cards import Card, parse_cards
from controller.games.catalog import get_game
from controller.settlement import (
    BetLimit,
    Outcome,
    RoundInput,
    Settlement,
    TableMemory,
    Wager,
    settle,
    void_round,
)

PLAYER_WINS = {"1": "Q♦ J♥ 9♣", "dealer": "2♦ 2♠ A♣"}      # Double Picture Nine vs Five
PLAYER_LOSES = {"1": "2♦ 2♠ A♣", "dealer": "Q♦ J♥ 9♣"}
PLAYER_WINS_ON_SIX = {"1": "3♥ 2♥ A♣", "dealer": "5♠ 10♠ 10♦"}
MAIN_100_1000 = {"main": BetLimit(100, 1000)}


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


def run(game: str, hands: Mapping[str, str], wagers: Sequence[Wager],
        limits: Mapping[str, BetLimit], unit: int = 1,
        memory: TableMemory = TableMemory()) -> Settlement:
    return settle(RoundInput(rules=get_game(game),
                             hands={pos: cards(text) for pos, text in hands.items()},
                             wagers=tuple(wagers), limits=limits, rounding_unit=unit,
                             memory=memory))


def nets(settlement: Settlement) -> dict[str, int]:
    return {r.wager_id: r.net for r in settlement.results}


# --- RWS-NC3P 5.1-5.2 ------------------------------------------------------------------------

RWS = "rws-nc-three-pictures"


@pytest.mark.parametrize(("hands", "sign"), [(PLAYER_WINS, 1), (PLAYER_LOSES, -1)],
                         ids=["win", "lose"])
def test_seated_player_first_standing_players_pro_rata(hands: dict[str, str],
                                                       sign: int) -> None:
    """Over the box maximum: the Seated Player's bet stands whole (5.1 priority); the Standing
    Players share what is left pro rata and win or lose on that share (5.1.1)."""
    wagers = [Wager("ann", "1", "main", 600, player="ann", seated=True),
              Wager("bob", "1", "main", 400, player="bob", seated=False),
              Wager("cat", "1", "main", 600, player="cat", seated=False)]
    result = nets(run(RWS, hands, wagers, MAIN_100_1000))
    # 1000 - 600 = 400 left for 1000 of standing bets: bob 400*400/1000, cat 600*400/1000.
    assert result == {"ann": sign * 600, "bob": sign * 160, "cat": sign * 240}


@pytest.mark.parametrize(("unit", "bob", "cat"), [(1, 187, 112), (5, 185, 110)])
def test_highest_bet_is_the_seated_player_when_nobody_sits(unit: int, bob: int,
                                                           cat: int) -> None:
    """With no player seated, the Seated Player is the one with the highest bet on the box
    (1.15) and has priority (5.1); the others' shares round down to the table unit."""
    wagers = [Wager("ann", "1", "main", 700, player="ann"),
              Wager("bob", "1", "main", 500, player="bob"),
              Wager("cat", "1", "main", 300, player="cat")]
    result = nets(run(RWS, PLAYER_WINS, wagers, MAIN_100_1000, unit=unit))
    # 300 left for 800: bob 500*300/800 = 187.5, cat 300*300/800 = 112.5, rounded down.
    assert result == {"ann": 700, "bob": bob, "cat": cat}


def test_seated_over_maximum_leaves_nothing_for_standing() -> None:
    """A Seated Player alone above the maximum plays the maximum; a Standing Player left with
    nothing has his bet returned (5.1, 5.1.1)."""
    wagers = [Wager("ann", "1", "main", 1500, player="ann", seated=True),
              Wager("bob", "1", "main", 300, player="bob", seated=False)]
    settlement = run(RWS, PLAYER_WINS, wagers, MAIN_100_1000)
    by_id = settlement.by_id()
    assert by_id["ann"].net == 1000
    assert (by_id["bob"].outcome, by_id["bob"].net) == (Outcome.RETURNED, 0)


def test_share_below_minimum_is_not_played() -> None:
    """No Player wins or loses on a pro-rated bet below the minimum (5.1.1): a 100 share at a
    200 minimum is returned (the documented reading: returned rather than raised)."""
    wagers = [Wager("ann", "1", "main", 900, player="ann", seated=True),
              Wager("bob", "1", "main", 500, player="bob", seated=False)]
    by_id = run(RWS, PLAYER_LOSES, wagers, {"main": BetLimit(200, 1000)}).by_id()
    assert by_id["ann"].net == -900
    assert (by_id["bob"].outcome, by_id["bob"].net) == (Outcome.RETURNED, 0)


def test_under_minimum_bet_in_an_over_maximum_box_is_not_pro_rated() -> None:
    """A bet under the minimum in a box over the maximum is not pro-rated and wins or loses
    whole (5.1.2); it is in action, so it uses up its part of the box maximum and the Seated
    Player plays the rest (5.1.1: the box is settled on its maximum)."""
    wagers = [Wager("ann", "1", "main", 1000, player="ann", seated=True),
              Wager("bob", "1", "main", 50, player="bob", seated=False)]
    by_id = run(RWS, PLAYER_WINS, wagers, MAIN_100_1000).by_id()
    assert (by_id["bob"].stake, by_id["bob"].net) == (50, 50)
    assert (by_id["ann"].stake, by_id["ann"].net) == (950, 950)


@pytest.mark.parametrize("order", [1, -1], ids=["ann-first", "bob-first"])
def test_equal_highest_bets_share_the_priority_whatever_the_list_order(order: int) -> None:
    """Nobody seated, two equal highest Initial Bets: both are the Seated Player of 1.15 (no
    tie-break is printed, and the controller cannot see who placed chips first), so they share
    the box maximum equally (5.1, 5.1.1), whichever order the wagers are listed in."""
    wagers = [Wager("ann", "1", "main", 6000, player="ann"),
              Wager("bob", "1", "main", 6000, player="bob")][::order]
    by_id = run(RWS, PLAYER_WINS, wagers, {"main": BetLimit(100, 10000)}).by_id()
    assert {w: (r.stake, r.net) for w, r in by_id.items()} == \
        {"ann": (5000, 5000), "bob": (5000, 5000)}


@pytest.mark.parametrize("order", [1, -1], ids=["listed", "reversed"])
def test_highest_initial_bet_decides_the_seated_player_not_the_total(order: int) -> None:
    """1.15's "highest Bet" is the Initial Bet (1.7): bob's main 5000 + tie 2000 does not
    outrank ann's main 6000, so ann plays her 6000 and bob the 4000 left (5.1)."""
    wagers = [Wager("ann", "1", "main", 6000, player="ann"),
              Wager("bob", "1", "main", 5000, player="bob"),
              Wager("bob-tie", "1", "tie", 2000, player="bob")][::order]
    by_id = run(RWS, PLAYER_WINS, wagers, {"main": BetLimit(100, 10000)}).by_id()
    assert (by_id["ann"].stake, by_id["ann"].net) == (6000, 6000)
    assert (by_id["bob"].stake, by_id["bob"].net) == (4000, 4000)


def test_one_player_betting_twice_on_a_box_is_limited_by_the_total() -> None:
    """3.10: a Player's total Bet on a Hand may not exceed that Hand's maximum; two wagers of
    one player on one box count together, and his bets on another box are limited on their
    own."""
    wagers = [Wager("a1", "1", "main", 600, player="ann", seated=True),
              Wager("a2", "1", "main", 600, player="ann", seated=True),
              Wager("a3", "2", "main", 900, player="ann", seated=True)]
    hands = {"1": "Q♦ J♥ 9♣", "2": "K♠ Q♥ 9♦", "dealer": "2♦ 2♠ A♣"}
    by_id = run(RWS, hands, wagers, MAIN_100_1000).by_id()
    assert {w: r.stake for w, r in by_id.items()} == {"a1": 500, "a2": 500, "a3": 900}


def test_pro_rata_share_and_six_point_half() -> None:
    """A pro-rated share won on six points is paid 1 to 2 on the share (5.1.1, 1.8)."""
    wagers = [Wager("ann", "1", "main", 600, player="ann", seated=True),
              Wager("bob", "1", "main", 600, player="bob", seated=False)]
    result = nets(run(RWS, PLAYER_WINS_ON_SIX, wagers, MAIN_100_1000))
    assert result == {"ann": 300, "bob": 400 // 2}


def test_limits_apply_per_bet_type() -> None:
    """The Tie bet has its own limit: over its maximum it plays the maximum, while the main
    bet within its limits is untouched (5.1, limits per bet type)."""
    hands = {"1": "K♠ K♥ 5♦", "dealer": "Q♠ J♥ 5♣"}
    wagers = [Wager("m", "1", "main", 1000, player="ann", seated=True),
              Wager("t", "1", "tie", 200, player="ann", seated=True)]
    by_id = run(RWS, hands, wagers, {"main": BetLimit(100, 1000), "tie": BetLimit(10, 100)}
                ).by_id()
    assert by_id["m"].outcome is Outcome.PUSH
    assert by_id["t"].net == 8 * 100


def test_boxes_are_limited_separately() -> None:
    """The maximum is per betting box: two boxes each at the maximum are both played whole
    (5.1)."""
    hands = {"1": "Q♦ J♥ 9♣", "2": "K♠ Q♥ 9♦", "dealer": "2♦ 2♠ A♣"}
    wagers = [Wager("a", "1", "main", 1000), Wager("b", "2", "main", 1000)]
    assert nets(run(RWS, hands, wagers, MAIN_100_1000)) == {"a": 1000, "b": 1000}


@pytest.mark.parametrize(("hands", "expected"), [(PLAYER_WINS, 50), (PLAYER_LOSES, -50)])
def test_box_under_minimum_settles_as_it_stands(hands: dict[str, str], expected: int) -> None:
    """A box below the minimum that the Dealer did not notice wins or loses accordingly
    (5.2.1)."""
    assert nets(run(RWS, hands, [Wager("w", "1", "main", 50)], MAIN_100_1000)) == {"w": expected}


# --- MBS-R3P 3.9, 5.10-5.12 --------------------------------------------------------------

MBS_R = "mbs-royal-three-pictures"


@pytest.mark.parametrize(("hands", "expected"),
                         [(PLAYER_WINS, 2000), (PLAYER_LOSES, -2000), (PLAYER_WINS_ON_SIX, 1000)],
                         ids=["win", "lose", "win-on-six"])
def test_over_maximum_paid_or_collected_to_the_maximum(hands: dict[str, str],
                                                       expected: int) -> None:
    """Over the maximum: a win is paid to the maximum only, a loss collected to the maximum
    only (MBS-R3P 5.11)."""
    result = run(MBS_R, hands, [Wager("w", "1", "main", 5000, player="ann")],
                 {"main": BetLimit(100, 2000)}).by_id()["w"]
    assert result.net == expected


def test_over_maximum_is_settled_as_a_maximum_wager() -> None:
    """MBS-R3P 5.11 "paid to the maximum only" settles the wager as if it were the maximum:
    a Tie of 300 over a 100 maximum wins 8 to 1 on 100 (800), not a payout capped at 100."""
    hands = {"1": "Q♦ J♥ 9♣", "dealer": "9♠ 10♥ K♦"}     # both nine points: a Tie (1.1.6)
    wagers = [Wager("m", "1", "main", 500), Wager("t", "1", "tie", 300)]
    by_id = run(MBS_R, hands, wagers, {"tie": BetLimit(10, 100)}).by_id()
    assert (by_id["t"].stake, by_id["t"].net) == (100, 800)


def test_several_players_share_a_playing_area_each_within_the_limits() -> None:
    """MBS-R3P 3.4: a playing area may hold wagers of several players, each within the table
    limits and each settled on its own amount."""
    wagers = [Wager("ann", "1", "main", 500, player="ann"),
              Wager("bob", "1", "main", 2000, player="bob")]
    by_id = run(MBS_R, PLAYER_WINS, wagers, {"main": BetLimit(100, 2000)}).by_id()
    assert {w: (r.stake, r.net) for w, r in by_id.items()} == \
        {"ann": (500, 500), "bob": (2000, 2000)}


def test_over_maximum_side_wager_capped() -> None:
    """The cap applies to side wagers too: Any King over a 100 maximum pays 1 to 1 on 100
    (MBS-R3P 5.11, 4.2)."""
    hands = {"1": "K♠ 5♥ 7♦", "dealer": "Q♦ J♥ 9♣"}
    wagers = [Wager("m", "1", "main", 500), Wager("r", "1", "royal_pictures", 300)]
    by_id = run(MBS_R, hands, wagers, {"royal_pictures": BetLimit(10, 100)}).by_id()
    assert by_id["r"].net == 100
    assert by_id["m"].net == -500


def test_under_minimum_settled_once_then_returned() -> None:
    """An under-minimum wager is settled one time only; that player's later under-minimum
    wagers are returned, whatever the outcome, while other players' are settled once
    (MBS-R3P 5.10, 5.12)."""
    limits = {"main": BetLimit(100, 2000)}
    first = run(MBS_R, PLAYER_LOSES, [Wager("w1", "1", "main", 50, player="alice")], limits)
    assert first.by_id()["w1"].net == -50
    assert "alice" in first.memory.under_minimum_players

    hands = {"1": "Q♦ J♥ 9♣", "2": "K♠ Q♥ 9♦", "3": "K♣ J♠ 9♥", "dealer": "2♦ 2♠ A♣"}
    second = run(MBS_R, hands,
                 [Wager("w2", "1", "main", 50, player="alice"),
                  Wager("w3", "2", "main", 200, player="alice"),
                  Wager("w4", "3", "main", 60, player="bob")],
                 limits, memory=first.memory)
    by_id = second.by_id()
    assert (by_id["w2"].outcome, by_id["w2"].net) == (Outcome.RETURNED, 0)
    assert by_id["w3"].net == 200
    assert by_id["w4"].net == 60
    assert {"alice", "bob"} <= second.memory.under_minimum_players


def test_three_wagers_per_area_accepted() -> None:
    """Up to three wagers per playing area are permitted (MBS-R3P 3.9, 3.4)."""
    wagers = [Wager(f"m{i}", "1", "main", 100, player=f"p{i}") for i in range(3)]
    wagers.append(Wager("t", "1", "tie", 10, player="p0"))
    result = nets(run(MBS_R, PLAYER_WINS, wagers, {}))
    assert result == {"m0": 100, "m1": 100, "m2": 100, "t": -10}


def test_fourth_wager_in_an_area_refused() -> None:
    """A fourth wager in one playing area is refused (MBS-R3P 3.9)."""
    wagers = [Wager(f"m{i}", "1", "main", 100, player=f"p{i}") for i in range(4)]
    with pytest.raises(WagerError, match="3.9"):
        run(MBS_R, PLAYER_WINS, wagers, {})


# --- no clause: refused at placement ---------------------------------------------------------


@pytest.mark.parametrize(("game", "hands", "wager"), [
    ("mbs-three-pictures", PLAYER_WINS, Wager("w", "1", "main", 50)),
    ("mbs-three-pictures", PLAYER_WINS, Wager("w", "1", "main", 5000)),
    ("live-three-pictures", {"p1": "Q♦ J♥ 9♣", "banker": "2♦ 2♠ A♣"},
     Wager("w", "p1", "win", 5000)),
    ("rws-three-card-poker", {"1": "Q♦ J♥ 9♣", "dealer": "2♦ 2♠ A♣"},
     Wager("w", "1", "pair_plus", 5000)),
])
def test_out_of_limit_wager_refused_where_no_clause_settles_it(game: str, hands: dict[str, str],
                                                               wager: Wager) -> None:
    """Rule sets without a limits clause (MBS-3P 5.5, LIVE-3P, RWS-3CP 5.2) refuse a wager
    outside the table limits instead of settling it."""
    bet_limits = {wager.bet: BetLimit(100, 1000)}
    with pytest.raises(WagerError):
        run(game, hands, [wager], bet_limits)


# --- order independence (issue 16) ----------------------------------------------------------

_WAGER = st.tuples(st.sampled_from(["1", "2"]), st.sampled_from(["main", "tie"]),
                   st.integers(1, 120).map(lambda n: n * 50),
                   st.sampled_from(["ann", "bob", "cat", None]),
                   st.sampled_from([None, None, True, False]))


@given(st.lists(_WAGER, min_size=1, max_size=6).flatmap(
    lambda raw: st.tuples(st.just(raw), st.permutations(range(len(raw))))))
@settings(max_examples=200, deadline=None)
def test_results_do_not_depend_on_the_order_wagers_are_listed(
        case: tuple[list[tuple[str, str, int, str | None, bool | None]], list[int]]) -> None:
    """RWS-NC3P 1.15, 5.1-5.1.2: any wagers, listed in any order, settle the same way; the
    JSON list order of a request is not a placement order."""
    raw, order = case
    wagers = [Wager(f"w{i}", pos, bet, amount, player=player, seated=seated)
              for i, (pos, bet, amount, player, seated) in enumerate(raw)]
    hands = {"1": "Q♦ J♥ 9♣", "2": "3♥ 2♥ A♣", "dealer": "2♦ 2♠ 5♣"}
    limits = {"main": BetLimit(100, 3000), "tie": BetLimit(100, 1000)}
    listed = run(RWS, hands, wagers, limits, unit=5).by_id()
    shuffled = run(RWS, hands, [wagers[i] for i in order], limits, unit=5).by_id()
    assert listed == shuffled


# --- Each result reconciles alone (issue 34) -------------------------------------------------

def _reconciles(settlement: Settlement, placed: Mapping[str, int]) -> None:
    for r in settlement.results:
        assert r.amount == placed[r.wager_id] == r.stake + r.returned, r
        assert r.stake + r.net + r.returned >= 0, r


def test_each_result_names_the_amount_and_what_went_back() -> None:
    """Every result carries the wager's amount, the stake in action and what was returned
    without being in action, so ``amount == stake + returned`` with no other record: a
    pro-rata share (RWS-NC3P 5.1.1), a share returned whole, an over-maximum wager settled on
    the maximum (MBS-R3P 5.11), a void, and a plain win all reconcile."""
    wagers = [Wager("ann", "1", "main", 600, player="ann", seated=True),
              Wager("bob", "1", "main", 400, player="bob", seated=False),
              Wager("cat", "1", "main", 600, player="cat", seated=False)]
    shared = run(RWS, PLAYER_WINS, wagers, MAIN_100_1000).by_id()
    assert [(shared[i].stake, shared[i].returned) for i in ("ann", "bob", "cat")] == [
        (600, 0), (160, 240), (240, 360)]
    _reconciles(run(RWS, PLAYER_WINS, wagers, MAIN_100_1000), {"ann": 600, "bob": 400,
                                                               "cat": 600})
    over = run(MBS_R, PLAYER_LOSES, [Wager("w", "1", "main", 5000, player="ann")],
               {"main": BetLimit(100, 2000)}).by_id()["w"]
    assert (over.amount, over.stake, over.returned, over.net) == (5000, 2000, 3000, -2000)
    voided = void_round(wagers, "RWS-NC3P 5.15")
    assert [(r.amount, r.stake, r.returned, r.net) for r in voided.results] == [
        (600, 0, 600, 0), (400, 0, 400, 0), (600, 0, 600, 0)]
