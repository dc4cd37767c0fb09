"""How the simulated shuffler orders its deck: fair, or one of the known faulty machines.

A model only decides the order of pack indices (0..51, :data:`FULL_DECK` order, the order the
simulated deck is loaded in) and may reorder a formed hand; the device protocol is untouched.
The benchmark (``benchmarks/protection.py``) deals decks from the same models straight into the
monitors; ``tablectl bench --shuffler NAME`` puts one inside the simulated shuffler.

- ``fair``: Fisher-Yates (the simulator's shuffle, consuming the random source the same way);
- ``one-pass-10``, ``one-pass-100``: the one-pass k-shelf hand-former of Diaconis, Fulman and
  Holmes (2013): each card in turn goes on a random shelf, on top or at the bottom at random;
  the shelves are then stacked in order;
- ``stuck-card``: one card (the same one every shuffle) stays inside: it comes out last, after
  every card a round uses; the count still says 52;
- ``missing-card``: a 51-card deck, counted honestly as 51;
- ``repeated-order``: every second shuffle replays the previous order;
- ``partial-sort``: a fair shuffle, then half the places (chosen at random) put in pack order;
- ``biased-packets``: in half the hands the lowest card is moved to the front.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

RandBelow = Callable[[int], int]
DECK = 52


class ShuffleModel(str, Enum):
    FAIR = "fair"
    ONE_PASS_10 = "one-pass-10"
    ONE_PASS_100 = "one-pass-100"
    STUCK_CARD = "stuck-card"
    MISSING_CARD = "missing-card"
    REPEATED_ORDER = "repeated-order"
    PARTIAL_SORT = "partial-sort"
    BIASED_PACKETS = "biased-packets"


def fisher_yates(deck: list[int], randbelow: RandBelow) -> list[int]:
    for i in range(len(deck) - 1, 0, -1):
        j = randbelow(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def one_pass(deck: list[int], shelves: int, randbelow: RandBelow) -> list[int]:
    stacks: list[list[int]] = [[] for _ in range(shelves)]
    for card in deck:
        stack = stacks[randbelow(shelves)]
        if randbelow(2):
            stack.insert(0, card)
        else:
            stack.append(card)
    return [card for stack in stacks for card in stack]


class Shuffler:
    """One machine's model, with the memory a faulty machine has (its stuck card, its last
    order). ``order()`` gives the next deck; ``form()`` a hand out of it."""

    def __init__(self, model: ShuffleModel | str, randbelow: RandBelow) -> None:
        self.model = ShuffleModel(model)
        self.randbelow = randbelow
        self.shuffles = 0
        self.previous: list[int] = []
        self.odd_card: int | None = None

    def order(self) -> list[int]:
        model, rb = self.model, self.randbelow
        self.shuffles += 1
        if model is ShuffleModel.ONE_PASS_10:
            return one_pass(list(range(DECK)), 10, rb)
        if model is ShuffleModel.ONE_PASS_100:
            return one_pass(list(range(DECK)), 100, rb)
        if model in (ShuffleModel.STUCK_CARD, ShuffleModel.MISSING_CARD):
            if self.odd_card is None:
                self.odd_card = rb(DECK)
            deck = fisher_yates([c for c in range(DECK) if c != self.odd_card], rb)
            return deck + [self.odd_card] if model is ShuffleModel.STUCK_CARD else deck
        if model is ShuffleModel.REPEATED_ORDER and self.shuffles % 2 == 0 and self.previous:
            return list(self.previous)
        deck = fisher_yates(list(range(DECK)), rb)
        if model is ShuffleModel.PARTIAL_SORT:
            places = sorted(fisher_yates(list(range(DECK)), rb)[:DECK // 2])
            for place, card in zip(places, sorted(deck[p] for p in places)):
                deck[place] = card
        self.previous = deck
        return list(deck)

    def form(self, hand: list[int]) -> list[int]:
        if self.model is ShuffleModel.BIASED_PACKETS and len(hand) > 1 and self.randbelow(2):
            low = min(hand)
            return [low] + [c for c in hand if c != low]
        return hand
