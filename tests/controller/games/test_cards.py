"""Card notation and the single 52-card deck (issue 2 "Cards"; RWS-NC3P 2.2.1, MBS-3P 2.1,
MBS-R3P 2.1, RWS-3CP 2.2.1: one deck of 52 cards)."""

from __future__ import annotations

import pytest

from controller.errors import CardError
from controller.games.cards import (
    FULL_DECK,
    Card,
    Rank,
    Suit,
    ensure_single_deck,
    parse_card,
    parse_cards,
)


@pytest.mark.parametrize(
    ("token", "rank", "suit"),
    [
        ("QD", Rank.QUEEN, Suit.DIAMONDS),
        ("qd", Rank.QUEEN, Suit.DIAMONDS),
        ("Q♦", Rank.QUEEN, Suit.DIAMONDS),
        ("q♦", Rank.QUEEN, Suit.DIAMONDS),
        ("10h", Rank.TEN, Suit.HEARTS),
        ("10H", Rank.TEN, Suit.HEARTS),
        ("TH", Rank.TEN, Suit.HEARTS),
        ("th", Rank.TEN, Suit.HEARTS),
        ("10♥", Rank.TEN, Suit.HEARTS),
        ("AS", Rank.ACE, Suit.SPADES),
        ("a♠", Rank.ACE, Suit.SPADES),
        ("2c", Rank.TWO, Suit.CLUBS),
        ("9♣", Rank.NINE, Suit.CLUBS),
        ("KS", Rank.KING, Suit.SPADES),
        ("jh", Rank.JACK, Suit.HEARTS),
    ],
)
def test_parse_accepts_every_notation(token: str, rank: Rank, suit: Suit) -> None:
    """Rank A 2-9 T 10 J Q K then suit S H D C or ♠ ♥ ♦ ♣, case-insensitive (issue 2 Cards)."""
    assert parse_card(token) == Card(rank, suit)


@pytest.mark.parametrize(
    "token", ["QX", "1S", "11H", "ZS", "Q", "", "10", "QDD", "♦Q", "0H", "1", "Joker", "AS AH"]
)
def test_parse_rejects_a_bad_token_naming_it(token: str) -> None:
    """Anything that is not a card is rejected with an error naming the token (issue 2 Cards)."""
    with pytest.raises(CardError) as caught:
        parse_card(token)
    assert repr(token) in str(caught.value) or token in str(caught.value)


def test_parse_cards_names_the_bad_token_among_good_ones() -> None:
    """In a list, the error names the offending token, not a good neighbour (issue 2 Cards)."""
    with pytest.raises(CardError, match="QX"):
        parse_cards(["AS", "QX", "2C"])


def test_parse_cards_keeps_order() -> None:
    """Parsing several tokens keeps their order: settlement positions rely on it."""
    assert parse_cards(["10h", "A♠", "kc"]) == (
        Card(Rank.TEN, Suit.HEARTS), Card(Rank.ACE, Suit.SPADES), Card(Rank.KING, Suit.CLUBS))


def test_canonical_code_is_two_characters() -> None:
    """The canonical code of a ten is ``T``: ``10h`` and ``TH`` are the same card."""
    assert parse_card("10h").code == "TH"
    assert parse_card("10h") == parse_card("TH")
    assert str(parse_card("q♦")) == "QD"


def test_duplicate_card_is_rejected() -> None:
    """Two copies of one card in a round is an error: a single deck (RWS-NC3P 2.2.1)."""
    with pytest.raises(CardError, match="QD"):
        ensure_single_deck(parse_cards(["QD", "KS", "q♦"]))


def test_distinct_cards_are_accepted() -> None:
    """Three distinct cards pass the single-deck check."""
    ensure_single_deck(parse_cards(["QD", "QH", "QS"]))


def test_full_deck_is_52_distinct_cards() -> None:
    """The deck holds 13 ranks in 4 suits, each once (MBS-R3P 2.1: one deck of 52 cards)."""
    assert len(FULL_DECK) == 52
    assert len(set(FULL_DECK)) == 52
    assert {card.suit for card in FULL_DECK} == set(Suit)
    assert {card.rank for card in FULL_DECK} == set(Rank)


@pytest.mark.parametrize(
    ("rank", "points", "picture"),
    [
        (Rank.ACE, 1, False), (Rank.TWO, 2, False), (Rank.FIVE, 5, False),
        (Rank.NINE, 9, False), (Rank.TEN, 0, False), (Rank.JACK, 0, True),
        (Rank.QUEEN, 0, True), (Rank.KING, 0, True),
    ],
)
def test_card_points_and_pictures(rank: Rank, points: int, picture: bool) -> None:
    """A=1, 2-9 face value, 10/J/Q/K = 0; only J, Q, K are pictures, tens are not
    (RWS-NC3P 3.2.1-3.2.3, 1.9; MBS-3P 3.8.1.1; MBS-R3P 3.17.1.1)."""
    assert rank.points == points
    assert rank.is_picture is picture
