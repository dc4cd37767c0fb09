"""Three Card Poker hand values (RWS-3CP 3.5), also used for the LIVE-3P Pair Plus wager.

Classes from the top: straight flush, three of a kind, straight, flush, pair, high card
(RWS-3CP 3.5.2). Within a class the cards decide in order (3.5.3, 3.5.4): a pair by its rank then
the kicker, the rest by their ranks high to low. The Ace is high, except in the straight 3-2-A,
the lowest straight (3.5.1); A-K-Q is the highest. Suits never rank (3.5.1).

:func:`evaluate` returns a :class:`PokerValue` whose ``strength`` is one integer that orders all
hands, so a comparison is one integer compare. It is the hot path of settlement and of the odds
enumeration, so it works on rank integers and avoids sorting objects.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from controller.errors import HandError
from controller.games.cards import FULL_DECK, Card, Rank, Suit


class PokerCategory(IntEnum):
    """Hand classes, ordered so that a larger value is a better class (RWS-3CP 3.5.2)."""

    HIGH_CARD = 0
    PAIR = 1
    FLUSH = 2
    STRAIGHT = 3
    THREE_OF_A_KIND = 4
    STRAIGHT_FLUSH = 5

    @property
    def title(self) -> str:
        """The class name as RWS-3CP 3.5.2 prints it."""
        return _TITLES[self]


_TITLES = {
    PokerCategory.STRAIGHT_FLUSH: "Straight Flush",
    PokerCategory.THREE_OF_A_KIND: "Three of a Kind",
    PokerCategory.STRAIGHT: "Straight",
    PokerCategory.FLUSH: "Flush",
    PokerCategory.PAIR: "One Pair",
    PokerCategory.HIGH_CARD: "Three Odd Cards",
}

_BASE = 16  # ranks are 2..14, so three base-16 digits order the kickers


@dataclass(frozen=True, slots=True)
class PokerValue:
    category: PokerCategory
    strength: int
    """``category * 16**3 + k1 * 16**2 + k2 * 16 + k3``: larger is better, equal is a stand-off."""

    @property
    def name(self) -> str:
        return self.category.title

    @property
    def kickers(self) -> tuple[int, int, int]:
        rest = self.strength % _BASE**3
        return (rest // _BASE**2, (rest // _BASE) % _BASE, rest % _BASE)

    def dealer_qualifies(self) -> bool:
        """Queen-high or better (RWS-3CP 3.9, 3.10): any pair or better, or a top card >= Q."""
        return self.category > PokerCategory.HIGH_CARD or self.kickers[0] >= Rank.QUEEN


def evaluate_values(r1: int, r2: int, r3: int, flush: bool) -> PokerValue:
    """Value from three rank integers (2..14) and whether all suits agree."""
    # sort descending without building lists
    if r1 < r2:
        r1, r2 = r2, r1
    if r2 < r3:
        r2, r3 = r3, r2
        if r1 < r2:
            r1, r2 = r2, r1
    if r1 == r3:
        category, k = PokerCategory.THREE_OF_A_KIND, (r1, r1, r1)
    elif r1 == r2 or r2 == r3:
        pair, kicker = (r1, r3) if r1 == r2 else (r2, r1)
        category, k = PokerCategory.PAIR, (pair, pair, kicker)
    else:
        straight_high = 0
        if r1 - r3 == 2:
            straight_high = r1
        elif r1 == 14 and r2 == 3 and r3 == 2:
            straight_high = 3  # 3-2-A: the Ace counts as one (3.5.1), the lowest straight
        if straight_high:
            category = PokerCategory.STRAIGHT_FLUSH if flush else PokerCategory.STRAIGHT
            k = (straight_high, straight_high - 1, straight_high - 2)
        else:
            category = PokerCategory.FLUSH if flush else PokerCategory.HIGH_CARD
            k = (r1, r2, r3)
    return PokerValue(category, ((category * _BASE + k[0]) * _BASE + k[1]) * _BASE + k[2])


def _build_table() -> tuple[array[int], tuple[PokerValue | None, ...]]:
    """Every ordered triple of distinct card indices -> the number of its value, and the values.

    52**3 slots, 132,600 of them filled (0: not three distinct cards); built once at import so
    that :func:`evaluate` is three attribute reads and two indexings. The slots are 16-bit
    value numbers, not object pointers (issue 27: 0.28 MB where a list of pointers took 1.1 MB
    of every process that ranks a hand); the few hundred distinct values are shared, immutable
    objects.

    Built a row at a time, since it is on the table service's way to READY (issue 27): the 52
    slots of a first and second card depend only on their ranks and on whether they share a
    suit: 13 x 13 x 5 rows, put together from two runs of 13 values (the third card of a
    flush suit or not) per pair of ranks, 4,394 evaluations in all, are copied into the 2,652
    places they go, and the two slots naming a card twice cleared, instead of evaluating each
    of the 22,100 hands and writing its six orders.
    """
    deck = sorted(FULL_DECK, key=lambda card: card.index)
    numbers: dict[tuple[int, int, int, bool], int] = {}
    by_strength: dict[int, int] = {}
    values: list[PokerValue | None] = [None]

    def number(r1: int, r2: int, r3: int, flush: bool) -> int:
        key = (r1, r2, r3, flush)
        found = numbers.get(key)
        if found is None:
            value = evaluate_values(r1, r2, r3, flush)
            found = by_strength.get(value.strength)
            if found is None:
                found = by_strength[value.strength] = len(values)
                values.append(value)
            numbers[key] = found
        return found

    ranks = [card.rank for card in deck[:13]]  # the index is suit-major: 13 ranks a suit
    suits = [card.suit for card in deck[::13]]
    rows: dict[tuple[int, int, Suit | None], array[int]] = {}
    for r1 in ranks:
        for r2 in ranks:
            plain = array("H", [number(r1, r2, r3, False) for r3 in ranks])
            flush = array("H", [number(r1, r2, r3, True) for r3 in ranks])
            rows[(r1, r2, None)] = plain * 4
            for place, suit in enumerate(suits):
                rows[(r1, r2, suit)] = plain * place + flush + plain * (3 - place)
    table = array("H", bytes(2 * 52**3))
    for first in deck:
        for second in deck:
            if second is first:
                continue
            shared = first.suit if first.suit is second.suit else None
            start = first.first_offset + second.second_offset
            table[start:start + 52] = rows[(first.rank, second.rank, shared)]
            table[start + first.index] = 0
            table[start + second.index] = 0
    return table, tuple(values)


_TABLE, _VALUES = _build_table()


def evaluate(cards: Sequence[Card], _table: array[int] = _TABLE,
             _values: tuple[PokerValue | None, ...] = _VALUES) -> PokerValue:
    """Value of a three-card hand; raises :class:`HandError` unless three distinct cards.

    ``_table`` and ``_values`` are bound as defaults so the hot path reads locals, not module
    globals.
    """
    try:
        a, b, c = cards
    except ValueError:
        raise HandError(f"a Three Card Poker hand has three cards, got {len(cards)}") from None
    value = _values[_table[a.first_offset + b.second_offset + c.index]]
    if value is None:
        raise HandError(f"a hand cannot hold the same card twice: {a} {b} {c}")
    return value
