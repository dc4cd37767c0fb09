"""Three Pictures family hand values and names (RWS-NC3P Appendix C, MBS-3P 3.8-3.15,
MBS-R3P 3.17-3.22, LIVE-3P ranking list)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games import hands
from controller.games.cards import FULL_DECK, Card, Suit, parse_cards
from controller.games.catalog import get_game
from controller.games.rules import GameRules

PICTURE_GAMES = (
    "rws-nc-three-pictures", "mbs-three-pictures", "mbs-royal-three-pictures",
    "live-three-pictures",
)

# RWS-NC3P Appendix C, descending, exactly as printed.
RWS_NC3P_LIST = (
    "Three Pictures",
    "Double Pictures Nine", "Single Picture Nine", "Plain Nine",
    "Double Pictures Eight", "Single Picture Eight", "Plain Eight",
    "Double Pictures Seven", "Single Picture Seven", "Plain Seven",
    "Double Pictures Six", "Single Picture Six", "Plain Six",
    "Double Pictures Five", "Single Picture Five", "Plain Five",
    "Double Pictures Four", "Single Picture Four", "Plain Four",
    "Double Pictures Three", "Single Picture Three", "Plain Three",
    "Double Pictures Two", "Single Picture Two", "Plain Two",
    "Double Pictures One", "Single Picture One", "Plain One",
    "Double Pictures Zero", "Single Picture Zero", "Plain Zero",
)
# MBS-R3P 3.22, descending, exactly as printed (MBS-3P prints no list and uses these).
MBS_R3P_LIST = (
    "Three Pictures",
    "Double Picture Nine", "Single Picture Nine", "Nine",
    "Double Picture Eight", "Single Picture Eight", "Eight",
    "Double Picture Seven", "Single Picture Seven", "Seven",
    "Double Picture Six", "Single Picture Six", "Six",
    "Double Picture Five", "Single Picture Five", "Five",
    "Double Picture Four", "Single Picture Four", "Four",
    "Double Picture Three", "Single Picture Three", "Three",
    "Double Picture Two", "Single Picture Two", "Two",
    "Double Picture One", "Single Picture One", "One",
    "Double Picture Zero", "Single Picture Zero", "Zero",
)
# LIVE-3P "RANKING LISTING (Descending order)" items 1-31, as printed (item 3 says "Knights").
LIVE_3P_LIST = (
    "3 Knights",
    "Double Knights Nine", "Single Knights Nine", "Plain Nine",
    "Double Knights Eight", "Single Knight Eight", "Plain Eight",
    "Double Knights Seven", "Single Knight Seven", "Plain Seven",
    "Double Knights Six", "Single Knight Six", "Plain Six",
    "Double Knights Five", "Single Knight Five", "Plain Five",
    "Double Knights Four", "Single Knight Four", "Plain Four",
    "Double Knights Three", "Single Knight Three", "Plain Three",
    "Double Knights Two", "Single Knight Two", "Plain Two",
    "Double Knights One", "Single Knight One", "Plain One",
    "Double Knights Zero", "Single Knight Zero", "Plain Zero",
)
LISTS = {
    "rws-nc-three-pictures": RWS_NC3P_LIST,
    "mbs-three-pictures": MBS_R3P_LIST,
    "mbs-royal-three-pictures": MBS_R3P_LIST,
    "live-three-pictures": LIVE_3P_LIST,
}

# MBS-R3P 3.22: the example printed beside each rank, in the printed (descending) order.
# Extraction garbled three of them; read as: "$Q \blacklozenge, 7 \clubsuit, 2 \blacklozenge$"
# = Q♦ 7♣ 2♦; "$3\Psi$, $2\Psi$, A♣" = 3♥ 2♥ A♣; "Four ... E.g. $2$, A, A, A." (four cards in
# the extraction) is taken as 2♥ A♥ A♣, the only three-card reading that totals four.
MBS_R3P_EXAMPLES = (
    ("Three Pictures", "K♦ J♣ Q♦"),
    ("Double Picture Nine", "Q♦ J♥ 9♣"),
    ("Single Picture Nine", "Q♦ 7♣ 2♦"),
    ("Nine", "6♥ 9♥ 4♣"),
    ("Double Picture Eight", "Q♦ J♥ 8♣"),
    ("Single Picture Eight", "Q♦ 5♣ 3♥"),
    ("Eight", "9♥ 2♥ 7♣"),
    ("Double Picture Seven", "Q♦ J♥ 7♣"),
    ("Single Picture Seven", "J♦ 5♣ 2♥"),
    ("Seven", "6♦ 6♥ 5♣"),
    ("Double Picture Six", "Q♦ J♥ 6♣"),
    ("Single Picture Six", "Q♦ 4♣ 2♥"),
    ("Six", "3♥ 2♥ A♣"),
    ("Double Picture Five", "Q♦ J♥ 5♣"),
    ("Single Picture Five", "Q♦ 3♣ 2♥"),
    ("Five", "2♦ 2♥ A♣"),
    ("Double Picture Four", "Q♦ J♥ 4♣"),
    ("Single Picture Four", "J♦ A♣ 3♥"),
    ("Four", "2♥ A♥ A♣"),
    ("Double Picture Three", "Q♦ J♥ 3♣"),
    ("Single Picture Three", "Q♦ A♣ 2♥"),
    ("Three", "2♥ 10♥ A♣"),
    ("Double Picture Two", "Q♦ J♥ 2♣"),
    ("Single Picture Two", "Q♦ 10♣ 2♥"),
    ("Two", "2♥ 10♥ 10♣"),
    ("Double Picture One", "Q♦ J♥ A♣"),
    ("Single Picture One", "Q♦ 9♣ 2♥"),
    ("One", "5♥ 7♥ 9♣"),
    ("Double Picture Zero", "Q♦ J♥ 10♣"),
    ("Single Picture Zero", "Q♦ 8♣ 2♥"),
    ("Zero", "4♥ 7♥ 9♣"),
)


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


@pytest.fixture(name="rules", params=PICTURE_GAMES)
def fixture_rules(request: pytest.FixtureRequest) -> GameRules:
    return get_game(request.param)


def strength(rules: GameRules, hand: tuple[Card, ...]) -> int:
    return hands.strength(hands.evaluate(rules, hand))


def test_rank_names_are_the_printed_list(rules: GameRules) -> None:
    """Each game's ranking list is its own, word for word and in the printed order
    (RWS-NC3P Appendix C; MBS-R3P 3.22; LIVE-3P ranking list; MBS-3P uses MBS-R3P's names)."""
    assert tuple(rules.rank_names) == LISTS[rules.id.value]


@pytest.mark.parametrize(("printed", "example"), MBS_R3P_EXAMPLES,
                         ids=[name for name, _ in MBS_R3P_EXAMPLES])
def test_mbs_r3p_example_hands_are_named_as_printed(printed: str, example: str) -> None:
    """Every example hand printed in MBS-R3P 3.22 has the name printed beside it."""
    rules = get_game("mbs-royal-three-pictures")
    assert hands.name(rules, hands.evaluate(rules, cards(example))) == printed


@pytest.mark.parametrize("position", range(31))
def test_example_hands_named_in_every_game(rules: GameRules, position: int) -> None:
    """The MBS-R3P 3.22 example for list entry N carries entry N's name in each game's own list
    (RWS-NC3P Appendix C, LIVE-3P ranking list), since all four lists rank the same way."""
    _, example = MBS_R3P_EXAMPLES[position]
    expected = LISTS[rules.id.value][position]
    assert hands.name(rules, hands.evaluate(rules, cards(example))) == expected


def test_example_hands_rank_in_printed_order(rules: GameRules) -> None:
    """The 31 printed examples rank strictly from highest to lowest, in the order printed
    (MBS-R3P 3.22, RWS-NC3P 3.3 and Appendix C, LIVE-3P ranking list, MBS-3P 3.10-3.12)."""
    strengths = [strength(rules, cards(example)) for _, example in MBS_R3P_EXAMPLES]
    for higher, lower in itertools.pairwise(strengths):
        assert higher > lower


@pytest.mark.parametrize(
    ("hand", "points", "pictures"),
    [
        ("K♦ J♣ Q♦", 0, 3),
        ("Q♦ J♥ 9♣", 9, 2),
        ("6♦ 6♥ 5♣", 7, 0),   # 17 -> right digit 7 (MBS-R3P 3.18.2)
        ("9♠ 9♥ 9♦", 7, 0),   # 27 -> 7
        ("10♠ 10♥ 10♦", 0, 0),  # tens are not pictures
        ("10♠ 10♥ 9♦", 9, 0),
        ("A♠ A♥ A♦", 3, 0),
        ("K♠ 5♥ 5♦", 0, 1),
    ],
)
def test_points_and_picture_count(rules: GameRules, hand: str, points: int,
                                  pictures: int) -> None:
    """Points are the right digit of the card values' sum; only J, Q, K count as pictures
    (RWS-NC3P 1.12, 3.2; MBS-3P 3.8-3.9; MBS-R3P 3.17-3.18; LIVE-3P General Rules)."""
    described = hands.describe(rules, cards(hand))
    assert described["points"] == points
    assert described["pictures"] == pictures


def test_tens_are_not_pictures(rules: GameRules) -> None:
    """10-10-9 is a plain nine, below a single-picture nine (MBS-3P 3.8.1.1, RWS-NC3P 1.9)."""
    plain = cards("10♠ 10♥ 9♦")
    single = cards("K♠ 4♥ 5♦")
    assert hands.name(rules, hands.evaluate(rules, plain)) == LISTS[rules.id.value][3]
    assert strength(rules, single) > strength(rules, plain)


def test_pictures_do_not_rank_among_themselves(rules: GameRules) -> None:
    """KK is equal to QJ, not higher (MBS-3P 3.14, MBS-R3P 3.20); KKK equals JQK."""
    assert strength(rules, cards("K♠ K♥ 5♦")) == strength(rules, cards("Q♠ J♥ 5♣"))
    assert strength(rules, cards("K♠ K♥ K♦")) == strength(rules, cards("Q♠ J♥ K♣"))


def test_three_pictures_beats_every_nine(rules: GameRules) -> None:
    """Three pictures is the highest hand, above Double Picture Nine (MBS-3P 3.10, RWS-NC3P
    Appendix C, LIVE-3P item 1)."""
    assert strength(rules, cards("J♠ J♥ J♦")) > strength(rules, cards("Q♦ K♥ 9♣"))


def test_more_pictures_win_on_equal_points(rules: GameRules) -> None:
    """On the same point total the hand with more pictures wins (MBS-3P 3.12)."""
    double = strength(rules, cards("Q♦ J♥ 4♣"))
    single = strength(rules, cards("Q♠ A♣ 3♥"))
    plain = strength(rules, cards("2♥ A♥ A♣"))
    assert double > single > plain


def test_points_outrank_pictures(rules: GameRules) -> None:
    """A plain nine beats a double-picture eight: points first (MBS-3P 3.11)."""
    assert strength(rules, cards("6♥ 9♥ 4♣")) > strength(rules, cards("Q♦ J♥ 8♣"))


def test_live_tie_example_is_single_knights_nine() -> None:
    """LIVE-3P TIE example: J♠ 3♥ 6♦ and Q♠ 10♥ 9♦ are both "Single Knights Nine" and rank
    the same."""
    rules = get_game("live-three-pictures")
    player, banker = cards("J♠ 3♥ 6♦"), cards("Q♠ 10♥ 9♦")
    assert hands.name(rules, hands.evaluate(rules, player)) == "Single Knights Nine"
    assert hands.name(rules, hands.evaluate(rules, banker)) == "Single Knights Nine"
    assert strength(rules, player) == strength(rules, banker)


def test_describe_shape(rules: GameRules) -> None:
    """``describe`` gives exactly name, points and pictures for a Three Pictures game."""
    assert hands.describe(rules, cards("Q♦ J♥ 9♣")) == {
        "name": LISTS[rules.id.value][1], "points": 9, "pictures": 2}


# --- hypothesis: the rank order ------------------------------------------------------------

HAND = st.lists(st.sampled_from(FULL_DECK), min_size=3, max_size=3, unique=True).map(tuple)


def oracle(hand: tuple[Card, ...]) -> tuple[int, int, int]:
    """The printed lists' order, written independently: three pictures, then points, then
    picture count."""
    ranks = [int(c.rank) for c in hand]  # 2..14, ace = 14
    points = sum(1 if r == 14 else (r if r <= 9 else 0) for r in ranks) % 10
    pictures = sum(1 for r in ranks if 11 <= r <= 13)
    return (1 if pictures == 3 else 0, 0 if pictures == 3 else points,
            0 if pictures == 3 else pictures)


@pytest.mark.parametrize("game", PICTURE_GAMES)
@given(a=HAND, b=HAND)
def test_order_agrees_with_the_printed_order(game: str, a: tuple[Card, ...],
                                             b: tuple[Card, ...]) -> None:
    """The order is total and antisymmetric and matches the printed lists: a ranks above b
    exactly when the list puts it higher (MBS-3P 3.10-3.14, MBS-R3P 3.22)."""
    rules = get_game(game)
    sa, sb = strength(rules, a), strength(rules, b)
    assert (sa > sb) == (oracle(a) > oracle(b))
    assert (sa == sb) == (oracle(a) == oracle(b))
    assert (sa > sb) + (sa < sb) + (sa == sb) == 1
    assert (sa > sb) == (sb < sa)


@given(a=HAND, b=HAND, c=HAND)
def test_order_is_transitive(a: tuple[Card, ...], b: tuple[Card, ...],
                             c: tuple[Card, ...]) -> None:
    """If a >= b and b >= c then a >= c (a rank order; MBS-R3P 3.22)."""
    rules = get_game("mbs-royal-three-pictures")
    sa, sb, sc = (strength(rules, h) for h in (a, b, c))
    if sa >= sb and sb >= sc:
        assert sa >= sc
    if sa <= sb and sb <= sc:
        assert sa <= sc


@pytest.mark.parametrize("game", PICTURE_GAMES)
@given(hand=HAND, suits=st.lists(st.sampled_from(list(Suit)), min_size=3, max_size=3))
def test_suits_never_change_a_value(game: str, hand: tuple[Card, ...],
                                    suits: list[Suit]) -> None:
    """Any change of suits leaves the name and rank unchanged: suits never rank
    (MBS-3P 3.15, MBS-R3P 3.21)."""
    rules = get_game(game)
    resuited = tuple(Card(card.rank, suit) for card, suit in zip(hand, suits))
    assert hands.describe(rules, resuited) == hands.describe(rules, hand)
    assert strength(rules, resuited) == strength(rules, hand)


@given(hand=HAND, order=st.permutations([0, 1, 2]))
def test_card_order_never_changes_a_value(hand: tuple[Card, ...], order: list[int]) -> None:
    """The order in which the three cards are dealt does not change the hand (3.17: the sum)."""
    rules = get_game("rws-nc-three-pictures")
    shuffled = tuple(hand[i] for i in order)
    assert hands.describe(rules, shuffled) == hands.describe(rules, hand)
