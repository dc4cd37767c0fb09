"""The exact "outcome established" test (RWS-NC3P 5.4, MBS-R3P 5.13)."""

from __future__ import annotations

from controller.games.cards import FULL_DECK
from controller.games.catalog import LIVE_3P, RWS_3CP, RWS_NC3P
from controller.settlement.model import Outcome, Wager
from controller.table.established import decided_outcomes, is_established
from tests.controller.table.conftest import cards


def _unseen(*hands):
    seen = {c for hand in hands for c in hand}
    return [c for c in FULL_DECK if c not in seen]


def test_three_pictures_bet_lost_on_a_numeral() -> None:
    """RWS-NC3P 5.4.1: a Three Pictures bet on a box holding a numeral card has conclusively
    lost, whatever comes next: an outcome is established."""
    box, dealer = cards("KS", "4H"), cards("9H")
    decided = decided_outcomes(RWS_NC3P, {"1": box, "dealer": dealer}, _unseen(box, dealer),
                               [Wager("m", "1", "main", 100), Wager("p", "1", "three_pictures", 100)])
    assert decided == {"m": None, "p": Outcome.LOSE}
    assert is_established(decided)


def test_nothing_decided_before_the_deal() -> None:
    """RWS-NC3P 5.4.2: with no card dealt nothing is conclusively won or lost."""
    decided = decided_outcomes(RWS_NC3P, {"1": (), "dealer": ()}, FULL_DECK,
                               [Wager("m", "1", "main", 100), Wager("t", "1", "tie", 100)])
    assert decided == {"m": None, "t": None}
    assert not is_established(decided)


def test_three_pictures_hand_beats_any_dealer_without_two_pictures() -> None:
    """A complete Three Pictures hand against a dealer holding two numerals wins whatever the
    dealer's third card: decided WIN."""
    box, dealer = cards("KS", "QS", "JS"), cards("2H", "3H")
    decided = decided_outcomes(RWS_NC3P, {"1": box, "dealer": dealer}, _unseen(box, dealer),
                               [Wager("m", "1", "main", 100)])
    assert decided == {"m": Outcome.WIN}


def test_shared_unseen_card_is_not_counted_twice() -> None:
    """Two incomplete hands waiting on the same last card: a pair of values is possible only if
    disjoint completions realise it. With one unseen card left, only one hand can have it."""
    box, dealer = cards("KS", "QS"), cards("KH", "QH")
    rest = [c for c in FULL_DECK if c not in set(box) | set(dealer)]
    unseen = [c for c in rest if c.code in ("JD", "2C")]
    # Only JD and 2C unseen: box gets JD (three pictures, wins) and dealer 2C, or vice versa.
    # A joint completion where both get JD is impossible, so the Tie (same point total) can
    # only come from ... neither; main is won by one or the other: undecided, never a tie.
    decided = decided_outcomes(RWS_NC3P, {"1": box, "dealer": dealer}, unseen,
                               [Wager("m", "1", "main", 100), Wager("t", "1", "tie", 100)])
    assert decided["m"] is None
    assert decided["t"] is Outcome.LOSE


def test_undecided_3cp_player_may_still_fold() -> None:
    """RWS-3CP 3.8.1: before the decision, a fold (Ante lost) is still possible, so a winning
    hand's Ante is not decided; once played it is."""
    box, dealer = cards("AS", "KS", "QS"), cards("2H", "3D", "5C")
    hands = {"1": box, "dealer": dealer}
    wagers = [Wager("a", "1", "ante", 100)]
    assert decided_outcomes(RWS_3CP, hands, _unseen(box, dealer), wagers, {"1": None}) == {"a": None}
    assert decided_outcomes(RWS_3CP, hands, _unseen(box, dealer), wagers, {"1": True}) == \
        {"a": Outcome.WIN}
    assert decided_outcomes(RWS_3CP, hands, _unseen(box, dealer), wagers, {"1": False}) == \
        {"a": Outcome.LOSE}


def test_live_pair_plus_on_the_banker() -> None:
    """LIVE-3P Pair Plus on the Banker box reads the Banker's own hand only."""
    banker = cards("AS", "AH")
    decided = decided_outcomes(LIVE_3P, {"banker": banker}, _unseen(banker),
                               [Wager("pp", "banker", "pair_plus", 100)])
    assert decided == {"pp": Outcome.WIN}


def _brute_progressive(hands, wager, wagers, jackpot):
    """Every completion of the incomplete hands, settled by settlement itself."""
    from itertools import permutations

    from controller.settlement import RoundInput, TableMemory, settle
    from controller.settlement.model import ProgressiveConfig

    seen = {c for hand in hands.values() for c in hand}
    pool = [c for c in FULL_DECK if c not in seen]
    missing = [(p, 3 - len(h)) for p, h in hands.items() if len(h) < 3]
    need = sum(n for _, n in missing)
    outcomes = set()
    for extra in permutations(pool, need):
        full, i = {p: tuple(h) for p, h in hands.items()}, 0
        for position, n in missing:
            full[position] = full[position] + extra[i:i + n]
            i += n
        result = settle(RoundInput(rules=RWS_3CP, hands=full, wagers=tuple(wagers),
                                   memory=TableMemory(progressive_jackpot=jackpot),
                                   progressive=ProgressiveConfig(stake=500)))
        outcomes.add(next(r.outcome for r in result.results if r.wager_id == wager))
    return outcomes


def test_progressive_lost_only_once_no_envy_hand_can_be_made() -> None:
    """RWS-3CP 3.11-3.12: a seated player's progressive with a dead hand is lost only when no
    other Ante box can still make A-K-Q suited (Envy Bonus). While AH KH wait for QH it is
    undecided; once QH is seen (in the dealer's hand) it is conclusively lost."""
    own, other = cards("2C", "7D", "9H"), cards("AH", "KH")
    wagers = [Wager("a1", "1", "ante", 500, "p1"), Wager("g", "1", "progressive", 500, "p1"),
              Wager("a2", "2", "ante", 500, "p2"), Wager("d", "2", "play", 500, "p2")]
    hands = {"1": own, "2": other, "dealer": cards("3S", "4S", "6C")}
    decided = decided_outcomes(RWS_3CP, hands, _unseen(*hands.values()), wagers,
                               {"1": True, "2": True}, jackpot=10**6)
    assert decided["g"] is None
    hands["dealer"] = cards("3S", "QH", "6C")
    decided = decided_outcomes(RWS_3CP, hands, _unseen(*hands.values()), wagers,
                               {"1": True, "2": True}, jackpot=10**6)
    assert decided["g"] is Outcome.LOSE


def test_progressive_not_lost_by_a_fold() -> None:
    """A fold loses the Ante and Pair Plus (3.8.1) but not the progressive: a folded straight
    still wins it (3.11), so the progressive is decided WIN, not LOSE."""
    own = cards("5C", "6D", "7H")
    wagers = [Wager("a1", "1", "ante", 500, "p1"), Wager("g", "1", "progressive", 500, "p1")]
    hands = {"1": own, "dealer": ()}
    decided = decided_outcomes(RWS_3CP, hands, _unseen(own), wagers, {"1": False}, jackpot=10**6)
    assert decided == {"a1": Outcome.LOSE, "g": Outcome.WIN}


def test_progressive_matches_brute_force() -> None:
    """Exactness against every completion, settled by settlement: an own hand one card short
    of a straight flush, another Ante box one card short of A-K-Q of spades, and a box of the
    same player (whose A-K-Q would not give him an Envy Bonus, 3.12)."""
    hands = {"1": cards("8S", "9S"), "2": cards("AS", "KS"), "3": cards("AD", "KD", "QD"),
             "dealer": cards("2C", "3C", "4C")}
    wagers = [Wager("a1", "1", "ante", 500, "p1", True), Wager("g", "1", "progressive", 500,
                                                                 "p1", True),
              Wager("a2", "2", "ante", 500, "p2"), Wager("a3", "3", "ante", 500, "p1")]
    decided = decided_outcomes(RWS_3CP, hands, _unseen(*hands.values()), wagers,
                               {"1": True, "2": True, "3": True}, jackpot=10**6)
    brute = _brute_progressive(hands, "g", [*wagers, Wager("a1:play", "1", "play", 500, "p1"),
                                            Wager("a2:play", "2", "play", 500, "p2"),
                                            Wager("a3:play", "3", "play", 500, "p1")], 10**6)
    assert decided["g"] == (brute.pop() if len(brute) == 1 else None)
    hands["2"] = cards("AS", "KS", "2S")  # no envy hand possible; own hand still open
    decided = decided_outcomes(RWS_3CP, hands, _unseen(*hands.values()), wagers,
                               {"1": True, "2": True, "3": True}, jackpot=10**6)
    assert decided["g"] is None
    hands["1"] = cards("8S", "9S", "2D")  # dead own hand, no envy possible: lost
    decided = decided_outcomes(RWS_3CP, hands, _unseen(*hands.values()), wagers,
                               {"1": True, "2": True, "3": True}, jackpot=10**6)
    assert decided["g"] is Outcome.LOSE


def test_fast_path_premise_every_bet_open_before_the_deal() -> None:
    """The shortcut for "no card seen" (a restart before the deal answers at once) rests on a
    fact checked here by the exhaustive search: in each of the five rule sets every bet, at
    every kind of position, can still be both won and lost when no card has been seen."""
    from controller.games.catalog import MBS_3P, MBS_R3P
    from controller.table.established import exact_outcomes

    for rules in (RWS_NC3P, MBS_3P, MBS_R3P, LIVE_3P, RWS_3CP):
        box = rules.positions[0]
        wagers = [Wager(f"{bet}", box, bet, 1000, player="p1") for bet in rules.bets]
        played = {box: None} if "ante" in rules.bets else {}
        hands = {box: (), rules.dealer: ()}
        exact = exact_outcomes(rules, hands, FULL_DECK, wagers, played)
        assert exact == {w.id: None for w in wagers}, rules.id
        assert decided_outcomes(rules, hands, FULL_DECK, wagers, played) == exact
