"""The exact "outcome established" test (RWS-NC3P 5.4, MBS-R3P 5.13)."""

from __future__ import annotations

from controller.games.cards import FULL_DECK
from controller.games.catalog import LIVE_3P, RWS_3CP, RWS_NC3P
from controller.settlement.model import Outcome, Wager
from controller.table.established import decided_outcomes, is_established
from tests.controller.table.conftest import cards


def _unseen(*hands):  # noqa: ANN002, ANN202
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
