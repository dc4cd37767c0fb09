"""The monitors: each reads the cards dispensed after one shuffle (a *deck*) and decides.

They work on pack indices (0..51, :data:`controller.games.cards.FULL_DECK` order, the order a new
deck comes in and the reference the sortedness tests measure against) so that the live guard
and the benchmark's direct simulation run the same code. Every monitor is pure Python, O(cards)
per deck, with memory bounded by constants.

A monitor gets :meth:`Monitor.card` for each card as it is dispensed (an immediate finding:
a duplicate, a repeated order) and :meth:`Monitor.close` once the deck is finished (the next
shuffle): the deck's score goes into its sequential decision.
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from functools import cache

from controller.games.cards import FULL_DECK
from controller.games.poker import PokerCategory, evaluate
from controller.protection import limits
from controller.protection.feed import PACK_ORDER, Reference
from controller.protection.likelihood import collected_ratio, log_ratio
from controller.protection.sequential import FALSE_ALARM_RATE, BatchTest, Cusum
from controller.protection.stats import (
    CATEGORY_COUNTS,
    HANDS,
    descent_z,
    descents,
    eulerian_moments,
    rising_sequences,
    valley_moments,
    valley_z,
    valleys,
)
from drivers.events import Evidence

DECK = 52
MIN_SCORED = 9
"""A deck with fewer cards dispensed says too little about its order to be scored. At 6 cards
(one box and the dealer) the discrete order statistics alone gave 1.2-1.3 false alarms per
10,000 fair decks for the one-pass and sortedness monitors (100,000 simulated decks each);
from 9 cards they stay at or under 1 in 10,000 (docs/game-protection.md)."""


class MonitorId(str, Enum):
    LEDGER = "ledger"
    REPEAT = "repeat"
    SORTEDNESS = "sortedness"
    ONE_PASS = "one_pass"
    PACKET = "packet"
    POSITION = "position"
    CATEGORIES = "categories"
    ONE_PASS_LR = "one_pass_lr"
    POSITION_RUN = "position_run"


class Fault(str, Enum):
    """What a finding points to, so an alert says what to look for (issue 25): only a card
    that can really be missing holds the deck."""

    COUNT = "wrong count"
    DUPLICATE = "duplicated card"
    MISSING = "card missing or stuck inside"
    REPEAT = "repeated order"
    BIAS = "biased shuffle"
    STUCK_POSITION = "card stuck at one dealt position"
    DISTRIBUTION = "cards not uniformly distributed"


ORDER_FAULTS = frozenset({Fault.REPEAT, Fault.BIAS, Fault.STUCK_POSITION})
"""Faults of the shuffle's order: a machine with one keeps some cards out of the dealt places
far more often than chance, so a card unseen for a run of decks is no sign of a missing card."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One alarm: which monitor, its statistic against its threshold, after how many decks.
    ``holds`` when the deck itself is wrong (a card missing from it): dealing stops until a
    supervisor replaces or counts it. ``evidence`` says whether cards counted prove it (ruled at
    once) or a run of decks suggests it (the hand count decides)."""

    monitor: MonitorId
    statistic: float
    threshold: float
    decks: int
    detail: str
    holds: bool = False
    evidence: Evidence = Evidence.COUNT
    fault: Fault = Fault.BIAS


@dataclass(slots=True)
class Deck:
    """The cards dispensed since the last shuffle, in order, and the sets they came in."""

    number: int
    counted: int = DECK
    expected: int = DECK
    cards: list[int] = field(default_factory=list)
    sets: list[tuple[int, ...]] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)
    reference: Reference | None = PACK_ORDER
    """The input places the table knows (:mod:`.feed`); ``None``: the input order is unknown."""

    def ranked(self) -> list[int] | None:
        """The dealt cards with a known input place, as those places (``None``: unknown)."""
        return None if self.reference is None else self.reference.ranked(self.cards)


class Monitor:
    """A monitor reads one deck card by card (:meth:`card`) and decides when it closes."""

    id: MonitorId

    def card(self, deck: Deck, card: int) -> Finding | None:
        return None

    def close(self, deck: Deck) -> Finding | None:
        return None


class Ledger(Monitor):
    """Every card accounted for: the device's count, duplicates, more cards than counted, and a
    card that never comes out (stuck inside, or a deck short while the count says 52).

    The last is decided exactly: a card unseen for a run of decks has probability
    prod((N - d_i) / N) under a fair shuffle; alarming when that falls below
    ``rate / 52`` bounds the false alarms per deck by ``rate`` (a union over the 52 cards of
    first crossings, each of probability at most the bound)."""

    id = MonitorId.LEDGER

    def __init__(self, rate: float = FALSE_ALARM_RATE) -> None:
        self.log_unseen = [0.0] * DECK
        self.limit = math.log(rate / DECK)
        self.decks = 0
        self.miscount: tuple[int, int] | None = None
        """The wrong count already alerted: a 51-card deck is one episode, not one alert a
        shuffle (the table rules each wrong count itself)."""

    def open(self, deck: Deck) -> Finding | None:
        count = (deck.counted, deck.expected)
        if deck.counted == deck.expected:
            self.miscount = None
        elif count != self.miscount:
            self.miscount = count
            return Finding(self.id, deck.counted, deck.expected, self.decks + 1,
                           f"the shuffler counted {deck.counted} cards, expected "
                           f"{deck.expected}", fault=Fault.COUNT)
        return None

    def card(self, deck: Deck, card: int) -> Finding | None:
        if card in deck.seen:
            return Finding(self.id, 2, 1, self.decks + 1,
                           f"{FULL_DECK[card].code} dispensed twice since the shuffle",
                           fault=Fault.DUPLICATE)
        if len(deck.cards) >= deck.counted:
            return Finding(self.id, len(deck.cards) + 1, deck.counted, self.decks + 1,
                           f"card {len(deck.cards) + 1} dispensed from a deck counted "
                           f"{deck.counted}", holds=True, fault=Fault.COUNT)
        return None

    def close(self, deck: Deck) -> Finding | None:
        self.decks += 1
        n, d = max(deck.counted, 1), len(deck.seen)
        if d == 0 or d >= n:
            return None
        step = math.log((n - d) / n)
        worst = 0
        for card in range(DECK):
            if card in deck.seen:
                self.log_unseen[card] = 0.0
            else:
                self.log_unseen[card] += step
                if self.log_unseen[card] < self.log_unseen[worst]:
                    worst = card
        if self.log_unseen[worst] < self.limit:
            value = self.log_unseen[worst]
            self.log_unseen[worst] = 0.0
            return Finding(self.id, round(value, 3), round(self.limit, 3), self.decks,
                           f"{FULL_DECK[worst].code} not dispensed for a run of decks a fair "
                           f"shuffler gives with probability {math.exp(value):.1e}: a card "
                           f"stuck inside or missing", holds=True,
                           evidence=Evidence.STATISTICAL, fault=Fault.MISSING)
        return None


class Repeat(Monitor):
    """A deck dispensed in (nearly) the order of an earlier one: ordered triples of consecutive
    cards shared with one earlier deck, within the last ``window`` decks. Three shared triples
    happen between two fair decks with probability about 3e-9; an exact replay shares them from
    its fifth card.

    The remembered triples are stored as hash chains (as LZ77 compressors find earlier
    matches): every triple the window holds has a *position* (1, 2, 3, ... in the order the
    decks closed); :attr:`head` maps a triple (``52**3`` slots) to its latest position and
    :attr:`_previous` each position to the one before it with the same triple, so the decks
    sharing a triple are found by walking back until a position older than the window. That is
    a fixed 0.55 MB for the head table plus 8 bytes a remembered card, where a dict of lists
    cost about 100 bytes a card (issue 27: 2.7 MB at 2,000 decks of one round each, 12.6 MB
    with whole decks dealt); positions are unsigned 32-bit, room for 4e9 cards (80 million
    whole decks).
    """

    id = MonitorId.REPEAT

    def __init__(self, window: int = limits.REPEAT_WINDOW,
                 shared: int = limits.REPEAT_SHARED) -> None:
        self.window, self.shared = window, shared
        self.head = array("I", bytes(4 * DECK**3))
        """Triple -> its latest position (0: none)."""
        self._previous = array("I")
        """Position ``_base + i`` -> the earlier position of the same triple (0: none)."""
        self._deck_of = array("I")
        """Position ``_base + i`` -> the number of the deck it was dealt in."""
        self._base = 1
        """The position of ``_previous[0]``."""
        self._oldest = 1
        """The oldest position still in the window: older ones are forgotten."""
        self.kept: deque[tuple[int, int]] = deque()
        """The decks in the window, oldest first: (deck number, triples remembered)."""
        self.hits: dict[int, int] = {}
        self.keys = array("I")
        self.fired = False

    def decks_with(self, key: int) -> list[int]:
        """The numbers of the remembered decks that hold the triple ``key``, newest first (a
        deck twice when a faulty deck repeats a run)."""
        decks: list[int] = []
        position, base = self.head[key], self._base
        while position >= self._oldest:
            decks.append(self._deck_of[position - base])
            position = self._previous[position - base]
        return decks

    def card(self, deck: Deck, card: int) -> Finding | None:
        cards = deck.cards
        if len(cards) < 2:
            if not cards:
                self.hits, self.keys, self.fired = {}, array("I"), False
            return None
        key = (cards[-2] * DECK + cards[-1]) * DECK + card
        self.keys.append(key)
        for earlier in self.decks_with(key):
            hits = self.hits[earlier] = self.hits.get(earlier, 0) + 1
            if hits >= self.shared and not self.fired:
                self.fired = True
                return Finding(self.id, hits, self.shared, deck.number,
                               f"dispense order repeats deck {earlier} ({hits} ordered runs of "
                               f"three cards in common)", fault=Fault.REPEAT)
        return None

    def close(self, deck: Deck) -> Finding | None:
        head, previous, deck_of = self.head, self._previous, self._deck_of
        position = self._base + len(previous)
        for key in self.keys:
            previous.append(head[key])
            deck_of.append(deck.number)
            head[key] = position
            position += 1
        self.kept.append((deck.number, len(self.keys)))
        while len(self.kept) > self.window:
            self._oldest += self.kept.popleft()[1]
        forgotten = self._oldest - self._base
        if forgotten > len(previous) // 2:  # drop the forgotten half at once: amortised O(1)
            del previous[:forgotten], deck_of[:forgotten]
            self._base = self._oldest
        self.hits, self.keys, self.fired = {}, array("I"), False
        return None


class _Scored(Monitor):
    """A per-deck standardised score into a CUSUM ("too few": the score is -z)."""

    drift: float
    limit: float

    def __init__(self) -> None:
        self.cusum = Cusum(self.drift, self.limit)
        self.decks = 0

    def score(self, cards: list[int]) -> float:
        raise NotImplementedError

    def close(self, deck: Deck) -> Finding | None:
        self.decks += 1
        ranked = deck.ranked()
        if ranked is None or len(ranked) < MIN_SCORED:
            return None
        if self.cusum.add(self.score(ranked)):
            return Finding(self.id, round(self.cusum.last, 3), self.cusum.limit,
                           self.decks, self.describe(ranked))
        return None

    def describe(self, cards: list[int]) -> str:
        raise NotImplementedError


def _sortedness_variance(n: int) -> float:
    table, first = limits.SORTEDNESS_VARIANCE, limits.SORTEDNESS_VARIANCE_FROM
    return table[min(max(n - first, 0), len(table) - 1)]


@cache
def _sortedness_scale(n: int) -> float:
    """The factor that gives the score at ``n`` cards the spread it has at the length the
    CUSUM limit was calibrated at."""
    return math.sqrt(_sortedness_variance(limits.SORTEDNESS_CALIBRATED_AT)
                     / _sortedness_variance(n))


class SortednessMonitor(_Scored):
    """An unshuffled or partly sorted deck: too few descents and rising sequences against pack
    order (each Eulerian under a fair shuffle: mean (d-1)/2, variance (d+1)/12)."""

    id = MonitorId.SORTEDNESS
    drift, limit = limits.SORTEDNESS_DRIFT, limits.SORTEDNESS_LIMIT

    def score(self, cards: list[int]) -> float:
        # descents of the deck and of its inverse (rising sequences - 1) are each Eulerian: two
        # calibrated normal scores, summed, and scaled to the spread the sum has at the deck
        # length the CUSUM limit was calibrated at (the two are correlated, the more so the
        # fewer the cards: limits.SORTEDNESS_VARIANCE)
        n = len(cards)
        raw = (descent_z(n, descents(cards))
               + descent_z(n, rising_sequences(cards) - 1)) / math.sqrt(2)
        return raw * _sortedness_scale(n)

    def describe(self, cards: list[int]) -> str:
        mean, _ = eulerian_moments(len(cards))
        return (f"deck order too close to pack order: {descents(cards)} descents and "
                f"{rising_sequences(cards)} rising sequences in {len(cards)} cards "
                f"(fair: {mean:.1f} and {mean + 1:.1f})")


class OnePass(_Scored):
    """One-pass hand-forming bias (Diaconis, Fulman and Holmes 2013): the chance of an order
    depends on its valleys, and a k-shelf machine leaves few. Valleys of the dispensed cards
    against a random permutation's (mean (d-2)/3, variance 2(d+1)/45)."""

    id = MonitorId.ONE_PASS
    drift, limit = limits.ONE_PASS_DRIFT, limits.ONE_PASS_LIMIT

    def score(self, cards: list[int]) -> float:
        return valley_z(len(cards), valleys(cards))

    def describe(self, cards: list[int]) -> str:
        mean, _ = valley_moments(len(cards))
        return (f"too few valleys deck after deck (one-pass hand-former): {valleys(cards)} in "
                f"this deck's {len(cards)} cards (fair: {mean:.2f})")


class Packet(Monitor):
    """Within each three-card set the lowest card (pack order) is equally likely first, second
    or third: a batch chi-square (2 df) every ``limits.PACKET_DECKS`` decks."""

    id = MonitorId.PACKET

    def __init__(self, decks: int = limits.PACKET_DECKS) -> None:
        self.test = BatchTest(decks, 2)
        self.test.cells(3)
        self.decks = 0
        self.totals = [0, 0, 0]

    def close(self, deck: Deck) -> Finding | None:
        self.decks += 1
        test = self.test
        for cards in deck.sets:
            if len(cards) == 3:
                where = cards.index(min(cards))
                test.observed[where] += 1
                self.totals[where] += 1
                for i in range(3):
                    test.expected[i] += 1 / 3
        if test.deck_done():
            return Finding(self.id, round(test.last, 3), round(test.critical, 3), self.decks,
                           "the lowest card's place in the three-card sets is not uniform",
                           fault=Fault.DISTRIBUTION)
        return None


class Position(Monitor):
    """The regulators' per-position chi-square (COMAR 36.05.02.17, NMAC 15.1.7.13): which card
    came out at each dealing position, over a batch of decks; 51 df per position."""

    id = MonitorId.POSITION

    def __init__(self, positions: int = limits.POSITIONS,
                 decks: int = limits.POSITION_DECKS) -> None:
        self.positions = positions
        self.test = BatchTest(decks, 51 * positions)
        self.test.cells(positions * DECK)
        self.reached = [0] * positions
        self.decks = 0
        self.totals = [0] * (positions * DECK)

    def close(self, deck: Deck) -> Finding | None:
        self.decks += 1
        test = self.test
        reached = min(len(deck.cards), self.positions)
        for p in range(reached):
            cell = p * DECK + deck.cards[p]
            test.observed[cell] += 1
            self.totals[cell] += 1
            base = p * DECK
            for c in range(DECK):
                test.expected[base + c] += 1 / DECK
        if test.deck_done():
            return Finding(self.id, round(test.last, 1), round(test.critical, 1), self.decks,
                           f"cards by dealing position (first {self.positions}) differ from "
                           f"uniform", fault=Fault.DISTRIBUTION)
        return None


CATEGORY_ORDER = tuple(CATEGORY_COUNTS)
_CATEGORY_OF = {category: i for i, category in enumerate(CATEGORY_ORDER)}


class Categories(Monitor):
    """Hand categories of the complete sets against the exact counts of the 22,100 hands."""

    id = MonitorId.CATEGORIES

    def __init__(self, decks: int = limits.CATEGORY_DECKS) -> None:
        self.test = BatchTest(decks, len(CATEGORY_ORDER) - 1)
        self.test.cells(len(CATEGORY_ORDER))
        self.decks = 0
        self.totals = [0] * len(CATEGORY_ORDER)

    def close(self, deck: Deck) -> Finding | None:
        self.decks += 1
        test = self.test
        for cards in deck.sets:
            if len(cards) != 3 or len(set(cards)) != 3:
                continue
            i = _CATEGORY_OF[category(cards)]
            test.observed[i] += 1
            self.totals[i] += 1
            for j, kind in enumerate(CATEGORY_ORDER):
                test.expected[j] += CATEGORY_COUNTS[kind] / HANDS
        if test.deck_done():
            return Finding(self.id, round(test.last, 2), round(test.critical, 2), self.decks,
                           "hand categories differ from the exact three-card counts",
                           fault=Fault.DISTRIBUTION)
        return None


def category(cards: tuple[int, ...]) -> PokerCategory:
    return evaluate([FULL_DECK[i] for i in cards]).category


class OnePassLikelihood(Monitor):
    """The optimal test where the model is known: the exact log-likelihood ratio of each deck's
    dealt cards, one-pass ``k``-shelf shuffle against fair, for each ``k`` in
    ``limits.ONE_PASS_SHELVES``, read two ways.

    Page's CUSUM on each shelf count's ratio finds a machine whatever deck it went wrong at and
    however little each deck says. With likelihood-ratio increments a CUSUM's mean run between
    false alarms is at least ``e^limit`` decks (Lorden), at every deck length: the limit
    ``log(shelf models / rate)`` keeps it at or under ``rate`` per fair deck without a
    per-length calibration. Lorden's bound ignores how far past the limit a deck carries the
    sum; fed a new deck a crossing deck carries it far (a one-pass prefix is either impossible
    or many times likelier than fair), and the false alarms measured there (importance
    sampling, ``benchmarks/protection.py --only lr-calibration``) allow the lower limits of
    ``limits.one_pass_lr_limit``, one for each shelf count and deck length.

    A CUSUM holds every window of decks to one limit, yet a fair sum over more decks falls
    further below it (a fair deck's log ratio is negative on average: -3.3 nats at 9 cards), so
    a long window could alarm lower. Fed a new deck the 10-shelf ratio is therefore also summed over the last 5
    and the last 7 decks of one length (``limits.ONE_PASS_LR_WINDOW_SHARES``), the
    Neyman-Pearson test on them: each limit (``limits.ONE_PASS_LR_WINDOW``) is where a fair
    window crosses with probability at most its share of the budget, so by the union bound the
    windows and the CUSUMs together give at most ``rate`` false alarms per fair deck, however
    the decks are correlated (issue 38: at a 9-card table a CUSUM alone reaches 0.87 within 5
    decks where the test on five decks reaches 0.91). The CUSUMs' shares:
    ``limits.ONE_PASS_LR_SHARE``.

    From a new deck every input place is known (:func:`.likelihood.log_ratio`); from the
    collected cards only theirs, the undealt part's order taken as uniformly random
    (:func:`.likelihood.collected_ratio`: collected cards fed on top of the undealt ones), and
    only the CUSUMs at Lorden's limit read them. After an alarm every part starts again."""

    id = MonitorId.ONE_PASS_LR

    def __init__(self, shelves: tuple[int, ...] = limits.ONE_PASS_SHELVES,
                 rate: float = FALSE_ALARM_RATE) -> None:
        self.shelves = shelves
        self.limit = math.log(len(shelves) / rate)
        """Lorden's limit, for any feed: at most ``rate`` false alarms per fair deck."""
        self.measured = shelves == limits.ONE_PASS_SHELVES
        """Fed a new deck, the limits measured for these shelf counts apply (issue 38); the
        CUSUMs' rate falls e-fold per unit of limit, so another ``rate`` moves them by its
        log."""
        self.shift = math.log(FALSE_ALARM_RATE / rate)
        self.windowed = self.measured and rate == FALSE_ALARM_RATE
        """The window's limits are measured at the budget itself: with another ``rate`` (or
        shelf counts) the CUSUMs alone decide, their limits moved."""
        self.values = [0.0] * len(shelves)
        self.window: deque[tuple[int, float]] = deque(
            maxlen=max(limits.ONE_PASS_LR_WINDOW_SHARES))
        """The last decks fed a new deck: their length and 10-shelf log-likelihood ratio."""
        self.decks = 0

    def close(self, deck: Deck) -> Finding | None:
        self.decks += 1
        reference = deck.reference
        if (reference is None or len(deck.cards) < 2 or len(deck.seen) != len(deck.cards)
                or deck.counted != DECK):  # a card twice or a wrong count: the ledger's
            return None
        places = reference.places
        cards = len(deck.cards)
        if places is None:  # every input place known (a new deck)
            scores = [log_ratio(deck.cards, reference.fed, k) for k in self.shelves]
        else:  # the collected cards' places known, the undealt part's not
            tokens = [places.get(card) for card in deck.cards]
            scores = [_log(collected_ratio(tokens, reference.fed, DECK, k))
                      for k in self.shelves]
        fired: Finding | None = None
        for i, (k, score) in enumerate(zip(self.shelves, scores)):
            value = max(0.0, self.values[i] + score)
            limit = self.limit
            if places is None and self.measured:
                limit = limits.one_pass_lr_limit(k, cards) + self.shift
            if value > limit and fired is None:
                fired = Finding(self.id, round(value, 3), round(limit, 3), self.decks,
                                f"the dealt orders are {math.exp(min(value, 700)):.1e} times "
                                f"likelier under a one-pass {k}-shelf shuffle than a fair one "
                                f"(this deck: {cards} cards)")
            self.values[i] = value
        if places is None and self.windowed:  # the measured shelf counts: 10 among them
            fired = fired or self._window(cards, scores[self.shelves.index(10)])
        if fired is not None:
            self.values = [0.0] * len(self.shelves)
            self.window.clear()
        return fired

    def _window(self, cards: int, score: float) -> Finding | None:
        """Each window's sum over the last decks of one length, against that window's limit
        for the length."""
        if self.window and self.window[-1][0] != cards:
            self.window.clear()  # the limits are for decks of one length
        self.window.append((cards, score))
        ratios = [ratio for _, ratio in self.window]
        for decks in sorted(limits.ONE_PASS_LR_WINDOW_SHARES):
            limit = limits.ONE_PASS_LR_WINDOW[decks].get(cards)
            if limit is None or len(ratios) < decks:
                continue
            total = sum(ratios[-decks:])
            if total > limit:
                return Finding(self.id, round(total, 3), round(limit, 3), self.decks,
                               f"the dealt orders of the last {decks} decks are "
                               f"{math.exp(min(total, 700)):.1e} times likelier under a "
                               f"one-pass 10-shelf shuffle than a fair one ({cards} cards a "
                               f"deck)")
        return None


def _log(ratio: float) -> float:
    return math.log(ratio) if ratio > 0 else -math.inf


class PositionRun(Monitor):
    """A card stuck at one dealt position: the same card at the same position
    ``limits.POSITION_RUN`` decks running. A fair shuffle repeats a position's card with
    probability 1/52 a deck, so a run of ``r`` has probability ``52^-(r-1)``; over
    ``limits.RUN_POSITIONS`` positions the false alarms per deck are at most
    ``positions * 52^-(r-1)`` (27 * 52^-4 = 3.7e-6 at five decks). A deck that deals fewer
    cards than a position neither extends nor breaks its run (each deck that reaches it repeats
    the card with probability 1/52 under a fair shuffle, so the bound stands). One alert per
    run."""

    id = MonitorId.POSITION_RUN

    def __init__(self, run: int = limits.POSITION_RUN,
                 positions: int = limits.RUN_POSITIONS) -> None:
        self.run, self.positions = run, positions
        self.last: list[int | None] = [None] * positions
        self.length = [0] * positions
        self.decks = 0

    def close(self, deck: Deck) -> Finding | None:
        self.decks += 1
        found: Finding | None = None
        for p in range(min(self.positions, len(deck.cards))):
            card = deck.cards[p]  # a deck too short to reach p says nothing of it: run kept
            if card != self.last[p]:
                self.last[p], self.length[p] = card, 1
                continue
            self.length[p] += 1
            if self.length[p] == self.run and found is None:
                found = Finding(self.id, self.run, self.run, self.decks,
                                f"{FULL_DECK[card].code} dealt at position {p + 1} "
                                f"{self.run} decks running (fair: probability "
                                f"{DECK ** -(self.run - 1):.1e})", fault=Fault.STUCK_POSITION)
        return found


def all_monitors() -> list[Monitor]:
    return [Ledger(), Repeat(), SortednessMonitor(), OnePass(), Packet(), Position(),
            Categories(), OnePassLikelihood(), PositionRun()]
