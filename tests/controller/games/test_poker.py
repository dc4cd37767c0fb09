"""Three Card Poker hand values (RWS-3CP 3.5), also the LIVE-3P Pair Plus categories."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.errors import HandError
from controller.games import hands, poker
from controller.games.cards import FULL_DECK, Card, Suit, parse_cards
from controller.games.catalog import get_game
from controller.games.rules import GameRules


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


@pytest.fixture(name="rules")
def fixture_rules() -> GameRules:
    return get_game("rws-three-card-poker")


def strength(rules: GameRules, text_or_hand: str | tuple[Card, ...]) -> int:
    hand = cards(text_or_hand) if isinstance(text_or_hand, str) else text_or_hand
    return hands.strength(hands.evaluate(rules, hand))


# RWS-3CP 3.5.2: each class with the example printed beside it, highest first. The text prints
# ranks only; suits are chosen to make the example what its class says (suited where a flush
# is meant, mixed suits otherwise).
PRINTED_EXAMPLES = (
    ("Straight Flush", "straight_flush", "A♠ K♠ Q♠"),
    ("Three of a Kind", "three_of_a_kind", "Q♠ Q♥ Q♦"),
    ("Straight", "straight", "3♠ 2♥ A♦"),
    ("Straight", "straight", "A♠ K♥ Q♦"),
    ("Flush", "flush", "K♥ J♥ 9♥"),
    ("One Pair", "pair", "10♠ 10♥ K♦"),
    ("Three Odd Cards", "high_card", "6♠ 4♥ 2♦"),
)


@pytest.mark.parametrize(("name", "category", "example"), PRINTED_EXAMPLES,
                         ids=[e[2] for e in PRINTED_EXAMPLES])
def test_printed_examples_are_named(rules: GameRules, name: str, category: str,
                                    example: str) -> None:
    """Each RWS-3CP 3.5.2 example is named as printed, with its category."""
    assert hands.describe(rules, cards(example)) == {"name": name, "category": category}


def test_printed_classes_rank_in_printed_order(rules: GameRules) -> None:
    """Straight flush > three of a kind > straight > flush > pair > three odd cards
    (RWS-3CP 3.5.2); the lowest straight 3-2-A still beats the flush K-J-9."""
    order = ["A♠ K♠ Q♠", "Q♠ Q♥ Q♦", "A♠ K♥ Q♦", "3♠ 2♥ A♦", "K♥ J♥ 9♥", "10♠ 10♥ K♦",
             "6♠ 4♥ 2♦"]
    values = [strength(rules, hand) for hand in order]
    for higher, lower in itertools.pairwise(values):
        assert higher > lower


@pytest.mark.parametrize(
    ("winner", "loser", "clause"),
    [
        ("K♠ Q♥ J♦", "J♠ 10♥ 9♦", "3.5.3 a"),
        ("5♠ 5♥ K♦", "5♣ 5♦ Q♠", "3.5.3 b"),
        ("A♠ K♥ J♦", "A♣ K♦ 10♠", "3.5.3 c"),
        ("A♠ K♥ Q♦", "K♣ Q♠ J♥", "3.5.1 A-K-Q top straight"),
        ("4♠ 3♥ 2♦", "3♣ 2♣ A♥", "3.5.1 3-2-A lowest straight"),
        ("A♠ 4♥ 2♦", "K♠ Q♥ 10♦", "3.5.1 ace high outside a straight"),
        ("2♠ 2♥ 3♦", "A♠ K♥ J♦", "3.5.2 any pair beats three odd cards"),
        ("6♠ 5♥ 4♦", "A♥ K♥ 9♥", "3.5.2 straight beats flush"),
        ("2♠ 2♥ 2♦", "A♠ K♥ Q♦", "3.5.2 trips beat straight"),
        ("3♠ 2♠ A♠", "A♥ A♦ A♣", "3.5.2 straight flush beats trips"),
        ("A♠ A♥ 2♦", "K♠ K♥ A♦", "3.5.3 pair rank before kicker"),
        ("Q♠ Q♥ Q♦", "J♠ J♥ J♦", "3.5.3 higher trips"),
        ("K♥ J♥ 9♥", "K♠ J♠ 8♠", "3.5.3 flush third card"),
        ("Q♠ 3♥ 2♦", "J♠ 10♥ 8♦", "3.5.1 queen above jack"),
    ],
)
def test_higher_hand_ranks_higher(rules: GameRules, winner: str, loser: str,
                                  clause: str) -> None:
    """Within and across classes the printed ranking decides (RWS-3CP 3.5.1-3.5.3)."""
    assert strength(rules, winner) > strength(rules, loser), clause


@pytest.mark.parametrize("hand", ["K♠ A♥ 2♦", "Q♠ K♥ 2♦", "A♠ 2♥ 4♦"])
def test_no_wrap_around_straights(rules: GameRules, hand: str) -> None:
    """The Ace counts low only in 3-2-A (RWS-3CP 3.5.1): K-A-2 is not a straight."""
    assert hands.describe(rules, cards(hand))["category"] == "high_card"


def test_same_cards_other_suits_stand_off(rules: GameRules) -> None:
    """Hands equal card for card are equal: a stand-off (RWS-3CP 3.5.4); suits never rank
    (3.5.1)."""
    assert strength(rules, "A♠ K♥ J♦") == strength(rules, "A♣ K♠ J♥")
    assert strength(rules, "A♠ K♠ Q♠") == strength(rules, "A♥ K♥ Q♥")


def test_class_counts_over_all_hands(rules: GameRules) -> None:
    """Over all 22,100 hands of one deck: 48 straight flushes, 52 trips, 720 straights, 1,096
    flushes, 3,744 pairs, 16,440 high cards (the published Three Card Poker counts)."""
    counts = Counter(hands.describe(rules, hand)["category"]
                     for hand in itertools.combinations(FULL_DECK, 3))
    assert counts == {"straight_flush": 48, "three_of_a_kind": 52, "straight": 720,
                      "flush": 1096, "pair": 3744, "high_card": 16440}


# --- hypothesis: the rank order ------------------------------------------------------------

HAND = st.lists(st.sampled_from(FULL_DECK), min_size=3, max_size=3, unique=True).map(tuple)


def oracle(hand: tuple[Card, ...]) -> tuple[int, ...]:
    """RWS-3CP 3.5 written independently: (class, tie-break ranks), larger is better."""
    ranks = sorted((int(c.rank) for c in hand), reverse=True)  # ace = 14
    flush = len({c.suit for c in hand}) == 1
    counts = Counter(ranks)
    if ranks == [14, 3, 2]:
        straight, top = True, 3
    else:
        straight, top = ranks[0] - ranks[2] == 2 and len(counts) == 3, ranks[0]
    if straight and flush:
        return (5, top)
    if len(counts) == 1:
        return (4, ranks[0])
    if straight:
        return (3, top)
    if flush:
        return (2, *ranks)
    if len(counts) == 2:
        pair = next(r for r, n in counts.items() if n == 2)
        kicker = next(r for r, n in counts.items() if n == 1)
        return (1, pair, kicker)
    return (0, *ranks)


@given(a=HAND, b=HAND)
def test_order_agrees_with_the_rule_text(a: tuple[Card, ...], b: tuple[Card, ...]) -> None:
    """Total and antisymmetric, and it is the order of RWS-3CP 3.5.1-3.5.4."""
    rules = get_game("rws-three-card-poker")
    sa, sb = strength(rules, a), strength(rules, b)
    assert (sa > sb) == (oracle(a) > oracle(b))
    assert (sa == sb) == (oracle(a) == oracle(b))
    assert (sa > sb) + (sa < sb) + (sa == sb) == 1


@given(a=HAND, b=HAND, c=HAND)
def test_order_is_transitive(a: tuple[Card, ...], b: tuple[Card, ...],
                             c: tuple[Card, ...]) -> None:
    """If a >= b and b >= c then a >= c (RWS-3CP 3.5)."""
    rules = get_game("rws-three-card-poker")
    sa, sb, sc = (strength(rules, h) for h in (a, b, c))
    if sa >= sb >= sc:
        assert sa >= sc
    if sa <= sb <= sc:
        assert sa <= sc


@given(hand=HAND, renaming=st.permutations(list(Suit)))
def test_consistent_suit_renaming_never_changes_a_value(hand: tuple[Card, ...],
                                                        renaming: list[Suit]) -> None:
    """Renaming the suits consistently keeps every hand's value: all suits rank the same
    (RWS-3CP 3.5.1)."""
    rules = get_game("rws-three-card-poker")
    mapping = dict(zip(Suit, renaming))
    renamed = tuple(Card(card.rank, mapping[card.suit]) for card in hand)
    assert strength(rules, renamed) == strength(rules, hand)
    assert hands.describe(rules, renamed) == hands.describe(rules, hand)


@given(hand=HAND, order=st.permutations([0, 1, 2]))
def test_card_order_never_changes_a_value(hand: tuple[Card, ...], order: list[int]) -> None:
    """The order the cards arrive in does not change the hand (RWS-3CP 3.5.3: "after ranking
    the cards")."""
    rules = get_game("rws-three-card-poker")
    assert strength(rules, tuple(hand[i] for i in order)) == strength(rules, hand)


def test_table_gives_every_ordered_triple_the_value_of_its_ranks_and_suits() -> None:
    """Issue 27 made the lookup table 16-bit value numbers instead of object pointers: each of
    the 132,600 ordered triples of distinct cards still gets exactly the value computed from its
    ranks and suits (RWS-3CP 3.5), and a card twice is refused."""
    for a, b, c in itertools.permutations(FULL_DECK, 3):
        expected = poker.evaluate_values(a.rank, b.rank, c.rank, a.suit is b.suit is c.suit)
        assert poker.evaluate((a, b, c)) == expected, (a, b, c)
    for a, b in itertools.product(FULL_DECK, repeat=2):
        for twice in ((a, b, a), (a, a, b), (b, a, a)):
            with pytest.raises(HandError, match="same card twice"):
                poker.evaluate(twice)
