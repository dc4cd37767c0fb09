"""One entry point from cards to a hand's value and name, whatever the game's family."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from controller.games import pictures, poker
from controller.games.cards import Card
from controller.games.rules import Family, GameRules

HandValue = pictures.PicturesValue | poker.PokerValue


def evaluate(rules: GameRules, cards: Sequence[Card]) -> HandValue:
    """The value by which ``rules`` ranks this hand."""
    if rules.family is Family.THREE_CARD_POKER:
        return poker.evaluate(cards)
    return pictures.evaluate(cards)


def strength(value: HandValue) -> int:
    return value.strength


def name(rules: GameRules, value: HandValue) -> str:
    """The hand's name exactly as the rule set spells it."""
    if isinstance(value, poker.PokerValue):
        return value.name
    return pictures.name_in(rules.rank_names, value)


def describe(rules: GameRules, cards: Sequence[Card]) -> dict[str, Any]:
    """JSON form used by ``tablectl rank``: name with points/pictures, or name with category."""
    value = evaluate(rules, cards)
    if isinstance(value, poker.PokerValue):
        return {"name": value.name, "category": value.category.name.lower()}
    return {"name": name(rules, value), "points": value.points, "pictures": value.pictures}
