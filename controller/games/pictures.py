"""Hand values of the Three Pictures family (RWS-NC3P, MBS-3P, MBS-R3P, LIVE-3P).

A hand's value is its Point Total (sum of card points, right digit: RWS-NC3P 1.12, MBS-3P 3.9) and
its count of Picture cards (J, Q, K only; tens are not pictures: MBS-3P 3.8.1.1). Three Pictures
is the top hand (RWS-NC3P Appendix C, MBS-3P 3.10); below it hands rank by points 9..0 and, on
equal points, by picture count, double > single > plain (MBS-3P 3.12). Pictures do not rank among
themselves (MBS-3P 3.14, MBS-R3P 3.20) and suits never rank (MBS-3P 3.15, MBS-R3P 3.21), so the
whole order is captured by :attr:`PicturesValue.strength`, 0 (Plain Zero) to 30 (Three Pictures).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from controller.errors import HandError
from controller.games.cards import Card, Rank

THREE_PICTURES_STRENGTH = 30


class RoyalCategory(str, Enum):
    """Winning combinations of the MBS-R3P "Royal Pictures" side wager (MBS-R3P 1.1.4)."""

    THREE_KINGS = "three_kings"          # 1.1.4.6
    THREE_QUEENS = "three_queens"        # 1.1.4.5
    THREE_JACKS = "three_jacks"          # 1.1.4.4
    THREE_PICTURES = "three_pictures"    # 1.1.4.3: three pictures, not three of one rank
    ANY_PICTURE_PAIR = "any_picture_pair"  # 1.1.4.1: two pictures of one rank + a non-picture
    ANY_KING = "any_king"                # 1.1.4.2: K+2 non-pictures, K+Q+non, K+J+non
    NONE = "none"


@dataclass(frozen=True, slots=True)
class PicturesValue:
    """Everything the Three Pictures rule sets need to know about one three-card hand."""

    points: int
    pictures: int
    royal: RoyalCategory

    @property
    def is_three_pictures(self) -> bool:
        return self.pictures == 3

    @property
    def strength(self) -> int:
        """Total order of the ranking lists: 30 for Three Pictures, else points * 3 + pictures."""
        if self.pictures == 3:
            return THREE_PICTURES_STRENGTH
        return self.points * 3 + self.pictures

    @property
    def list_position(self) -> int:
        """1-based position in the printed ranking lists (1 = Three Pictures, 31 = Plain Zero)."""
        return THREE_PICTURES_STRENGTH + 1 - self.strength


def royal_category(ranks: Sequence[Rank]) -> RoyalCategory:
    """Classify a hand for the Royal Pictures wager exactly as MBS-R3P 1.1.4 lists it."""
    pictures = sorted(r for r in ranks if r.is_picture)
    if len(pictures) == 3:
        if pictures[0] == pictures[2]:
            return {
                Rank.KING: RoyalCategory.THREE_KINGS,
                Rank.QUEEN: RoyalCategory.THREE_QUEENS,
                Rank.JACK: RoyalCategory.THREE_JACKS,
            }[pictures[0]]
        return RoyalCategory.THREE_PICTURES
    if len(pictures) == 2 and pictures[0] == pictures[1]:
        return RoyalCategory.ANY_PICTURE_PAIR
    if Rank.KING in pictures:
        # K + two non-pictures, K + Q + non-picture, K + J + non-picture (1.1.4.2.1-3);
        # K + K + non-picture was caught above as a picture pair.
        return RoyalCategory.ANY_KING
    return RoyalCategory.NONE


def evaluate_ranks(ranks: Sequence[Rank]) -> PicturesValue:
    """Value of a hand given only its ranks: suits never matter in this family."""
    return PicturesValue(
        points=sum(rank.points for rank in ranks) % 10,
        pictures=sum(1 for rank in ranks if rank.is_picture),
        royal=royal_category(ranks),
    )


def evaluate(cards: Sequence[Card]) -> PicturesValue:
    """Value of a three-card hand; raises :class:`HandError` for any other card count."""
    if len(cards) != 3:
        raise HandError(f"a Three Pictures hand has three cards, got {len(cards)}")
    return evaluate_ranks([card.rank for card in cards])


_NUMBER_WORDS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")


def _list_from_patterns(top: str, double: str, single: str, plain: str) -> tuple[str, ...]:
    names = [top]
    for points in range(9, -1, -1):
        word = _NUMBER_WORDS[points]
        names += [double.format(word), single.format(word), plain.format(word)]
    return tuple(names)


RWS_NC3P_NAMES = _list_from_patterns(
    "Three Pictures", "Double Pictures {}", "Single Picture {}", "Plain {}"
)
"""RWS-NC3P Appendix C, descending, exactly as printed."""

MBS_R3P_NAMES = _list_from_patterns("Three Pictures", "Double Picture {}", "Single Picture {}", "{}")
"""MBS-R3P 3.22, descending, exactly as printed. MBS-3P prints no list and uses these names."""

LIVE_3P_NAMES: tuple[str, ...] = (
    # LIVE-3P "RANKING LISTING (Descending order)", items 1-31 exactly as printed: note that
    # item 3 reads "Single Knights Nine" while items 6, 9, ... read "Single Knight".
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


def name_in(names: Sequence[str], value: PicturesValue) -> str:
    """The hand's name in a 31-entry descending ranking list."""
    return names[value.list_position - 1]
