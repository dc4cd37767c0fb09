"""The order the shuffler was fed: what the order monitors judge each deck against.

A shuffler's bias is a bias relative to its input. A new deck goes in in pack order; at a live
table the dealer feeds it the cards collected from the last round (in the pick-up order of the
table's procedure) together with the cards left in it, whose order nobody saw. So the table
knows the input place of every card it dealt last deck, relative to each other, and nothing of
the rest. Scoring only the dealt cards whose input place is known keeps the fair null exact: a
fair shuffle's output is independent of its input, so the pattern of those cards' input places
in dealing order is a uniformly random permutation; and a one-pass shuffle of the whole input,
looked at on those cards only, is a one-pass shuffle of them (each card's shelf and side are its
own), so the exact likelihood (:mod:`.likelihood`) applies to them with ``fed`` = how many
they are.

Where the input order is unknown (``Feed.UNKNOWN``) the order monitors (sortedness, one-pass,
its likelihood test) score nothing; the ledger, repeat, position-run, packet, position and
category monitors do not depend on the input order and still hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

DECK = 52


class Feed(str, Enum):
    """How the table feeds its shuffler (``[protection] feed`` in the table's config)."""

    NEW_DECK = "new-deck"
    """Every shuffle starts from a deck in pack order (the simulated shuffler; a new deck)."""
    COLLECTED = "collected"
    """The cards dealt last deck, picked up set by set in the order they were dealt (each set's
    cards in their dealt order), fed with the undealt cards (their order unknown)."""
    COLLECTED_REVERSED = "collected-reversed"
    """As :attr:`COLLECTED`, the sets picked up last dealt first (the dealer's hand, then the
    boxes from the dealer's right)."""
    UNKNOWN = "unknown"
    """Nothing is known of the input order: the order monitors do not score."""


@dataclass(frozen=True, slots=True)
class Reference:
    """The input places the table knows: ``places`` maps a pack index to its place among the
    ``fed`` cards whose place is known; ``None`` means every card, in pack order."""

    fed: int
    places: dict[int, int] | None = None

    def ranked(self, cards: Sequence[int]) -> list[int]:
        """The dealt cards whose input place is known, as those places, in dealing order."""
        if self.places is None:
            return list(cards)
        places = self.places
        return [places[card] for card in cards if card in places]


PACK_ORDER = Reference(DECK)


def reference(feed: Feed, dealt_sets: Sequence[Sequence[int]] | None) -> Reference | None:
    """The reference for the deck a shuffle starts, given the sets dealt from the deck before
    (``None``: no deck before seen since the monitors started, e.g. the first after a start)."""
    if feed is Feed.NEW_DECK:
        return PACK_ORDER
    if feed is Feed.UNKNOWN or not dealt_sets:
        return None
    sets = reversed(dealt_sets) if feed is Feed.COLLECTED_REVERSED else dealt_sets
    order = [card for cards in sets for card in cards]
    places: dict[int, int] = {}
    for card in order:
        places.setdefault(card, len(places))  # a card twice (a fault) keeps its first place
    return Reference(len(places), places)


def input_order(feed: Feed, dealt_sets: Sequence[Sequence[int]],
                undealt: Sequence[int]) -> list[int]:
    """The whole input of the next shuffle as a simulation feeds it: the collected cards (in
    the pick-up order :func:`reference` assumes) on top of the undealt ones."""
    if feed is Feed.NEW_DECK:
        return list(range(DECK))
    sets = reversed(dealt_sets) if feed is Feed.COLLECTED_REVERSED else dealt_sets
    collected = [card for cards in sets for card in cards]
    taken = set(collected)
    return collected + [card for card in undealt if card not in taken]
