"""Cards of a single 52-card deck and the one notation accepted everywhere.

Rank ``A 2-9 T 10 J Q K`` and suit ``S H D C`` or ``♠ ♥ ♦ ♣``, case-insensitive, in that order
(``QD``, ``10h``, ``Q♦``). The canonical code is always two characters (``TD``), which is what the
journal, the CLI and the drivers' JSON output print.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum, IntEnum

from controller.errors import CardError


class Rank(IntEnum):
    """Poker order of ranks (Ace high); Three Pictures values come from :attr:`points`."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def symbol(self) -> str:
        return _RANK_SYMBOLS[self]

    @property
    def points(self) -> int:
        """Baccarat-style value: A=1, 2-9 face value, 10/J/Q/K=0 (RWS-NC3P 3.2, MBS-3P 3.8.1)."""
        if self is Rank.ACE:
            return 1
        return 0 if self >= Rank.TEN else int(self)

    @property
    def is_picture(self) -> bool:
        """Only J, Q and K are pictures; tens are not (RWS-NC3P 1.9, MBS-3P 3.8.1.1)."""
        return Rank.JACK <= self <= Rank.KING


class Suit(str, Enum):
    """Suits never rank (MBS-3P 3.15, MBS-R3P 3.21, RWS-3CP 3.5.1); they matter for flushes."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def glyph(self) -> str:
        return _SUIT_GLYPHS[self]


_RANK_SYMBOLS = {
    Rank.TWO: "2", Rank.THREE: "3", Rank.FOUR: "4", Rank.FIVE: "5", Rank.SIX: "6",
    Rank.SEVEN: "7", Rank.EIGHT: "8", Rank.NINE: "9", Rank.TEN: "T", Rank.JACK: "J",
    Rank.QUEEN: "Q", Rank.KING: "K", Rank.ACE: "A",
}
_SUIT_GLYPHS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}

_SUIT_ORDER = {suit: position for position, suit in enumerate(Suit)}
_RANK_BY_TOKEN = {symbol: rank for rank, symbol in _RANK_SYMBOLS.items()} | {"10": Rank.TEN}
_SUIT_BY_TOKEN = {suit.value: suit for suit in Suit} | {
    glyph: suit for suit, glyph in _SUIT_GLYPHS.items()
}


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One card; ordered by (rank, suit) only so that sorting is deterministic."""

    rank: Rank
    suit: Suit
    index: int = field(init=False, compare=False, repr=False, hash=False)
    """A dense 0..51 index (suit-major), precomputed because evaluators index tables by it."""
    first_offset: int = field(init=False, compare=False, repr=False, hash=False)
    """``index * 52 * 52``: this card's offset as the first of three in a 52**3 table."""
    second_offset: int = field(init=False, compare=False, repr=False, hash=False)
    """``index * 52``: this card's offset as the second of three in a 52**3 table."""

    def __post_init__(self) -> None:
        index = _SUIT_ORDER[self.suit] * 13 + (int(self.rank) - 2)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "first_offset", index * 52 * 52)
        object.__setattr__(self, "second_offset", index * 52)

    @property
    def code(self) -> str:
        """The canonical two-character code, e.g. ``TD``."""
        return self.rank.symbol + self.suit.value

    def __str__(self) -> str:
        return self.code


def parse_card(token: str) -> Card:
    """Parse one card token; raise :class:`CardError` naming the token if it is not a card."""
    if not isinstance(token, str):
        raise CardError(f"card must be a string like 'QD', got {token!r}")
    text = token.strip().upper()
    rank = _RANK_BY_TOKEN.get(text[:-1]) if len(text) >= 2 else None
    suit = _SUIT_BY_TOKEN.get(text[-1:]) if text else None
    if rank is None or suit is None:
        raise CardError(
            f"not a card: {token!r} (expected rank A,2-9,T,10,J,Q,K then suit S,H,D,C or ♠♥♦♣)"
        )
    return Card(rank, suit)


def parse_cards(tokens: Iterable[str]) -> tuple[Card, ...]:
    """Parse several tokens, keeping their order."""
    return tuple(parse_card(token) for token in tokens)


def ensure_single_deck(cards: Iterable[Card]) -> None:
    """Raise :class:`CardError` if any card appears twice: the games use one 52-card deck."""
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            raise CardError(f"card {card.code} appears twice; the game uses a single deck")
        seen.add(card)


def codes(cards: Sequence[Card]) -> list[str]:
    """Canonical codes of ``cards``, for JSON output."""
    return [card.code for card in cards]


FULL_DECK: tuple[Card, ...] = tuple(Card(rank, suit) for suit in Suit for rank in Rank)
"""The 52 cards, suit-major in :class:`Suit` order, ranks two to ace."""
