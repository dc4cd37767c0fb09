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
- ``stuck-position``: fair, but one card (the same each shuffle) always comes out at one of
  the first nine places (the same each shuffle);
- ``duplicate-card``: one card replaced by a second copy of another, counted 52;
- ``riffle-3``: three Gilbert-Shannon-Reeds riffle shuffles (too few: Bayer and Diaconis).

``order(fed)`` shuffles the input it is fed: by default a deck in pack order (how the simulated
shuffler is loaded); the benchmark also feeds it the cards a table collects
(:func:`controller.protection.feed.input_order`). Only the one-pass and riffle machines care:
the fair machine's output does not depend on its input.
"""

from __future__ import annotations

from enum import Enum

from controller.games.shuffling import RandBelow, one_pass
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
    STUCK_POSITION = "stuck-position"
    DUPLICATE_CARD = "duplicate-card"
    RIFFLE_3 = "riffle-3"


def fisher_yates(deck: list[int], randbelow: RandBelow) -> list[int]:
    for i in range(len(deck) - 1, 0, -1):
        j = randbelow(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def riffle(deck: list[int], randbelow: RandBelow) -> list[int]:
    """One Gilbert-Shannon-Reeds riffle: a binomial cut, cards dropped from each packet with
    probability proportional to its size."""
    cut = sum(randbelow(2) for _ in deck)
    left, right = deck[:cut], deck[cut:]
    out: list[int] = []
    i = j = 0
    while i < len(left) or j < len(right):
        a, b = len(left) - i, len(right) - j
        if randbelow(a + b) < a:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out


class Shuffler:
    """One machine's model, with the memory a faulty machine has (its stuck card, its last
    order). ``order()`` gives the next deck; ``form()`` a hand out of it."""

    def __init__(self, model: ShuffleModel | str, randbelow: RandBelow) -> None:
        self.model = ShuffleModel(model)
        self.randbelow = randbelow
        self.shuffles = 0
        self.previous: list[int] = []
        self.odd_card: int | None = None
        self.odd_place: int | None = None

    def order(self, fed: list[int] | None = None) -> list[int]:
        model, rb = self.model, self.randbelow
        self.shuffles += 1
        deck_in = list(fed) if fed is not None else list(range(DECK))
        if model is ShuffleModel.ONE_PASS_10:
            return one_pass(deck_in, 10, rb)
        if model is ShuffleModel.ONE_PASS_100:
            return one_pass(deck_in, 100, rb)
        if model is ShuffleModel.RIFFLE_3:
            for _ in range(3):
                deck_in = riffle(deck_in, rb)
            return deck_in
        if model is ShuffleModel.STUCK_POSITION:
            if self.odd_card is None or self.odd_place is None:
                self.odd_card, self.odd_place = rb(DECK), rb(9)
            deck = fisher_yates([c for c in range(DECK) if c != self.odd_card], rb)
            deck.insert(self.odd_place, self.odd_card)
            return deck
        if model is ShuffleModel.DUPLICATE_CARD:
            if self.odd_card is None:
                self.odd_card = rb(DECK)
            copied = (self.odd_card + 1 + rb(DECK - 1)) % DECK if self.odd_place is None \
                else self.odd_place
            self.odd_place = copied  # the copy is the same card every shuffle
            return fisher_yates([copied if c == self.odd_card else c for c in range(DECK)], rb)
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
